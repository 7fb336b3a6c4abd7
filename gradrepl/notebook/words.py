"""The panel's words for its rows: the text views' own (one renderer for every frontend)."""

from __future__ import annotations

import html

from gradrepl.views.numbers import format_bytes
from gradrepl.views.tables import COLUMNS, row_words
from gradrepl.views.why import why_grad_is_none


def panel_words(row: dict) -> dict[str, str]:
    """A row's table cells (views.tables.row_words) and the details shown when it is selected."""
    words = row_words(row)
    facts = [f"{row.get('name')}: {words['shape']} {words['dtype']} on {row.get('device')}",
             f"requires_grad {words['requires_grad']} · is_leaf {words['is_leaf']} · grad_fn {words['grad_fn']}"
             f" · retains_grad {'yes' if row.get('retains_grad') else 'no'} · version {row.get('version')}",
             f"value: {row_words(row, 200)['value']}", f".grad: {row_words(row, 200)['grad']}",
             f"its graph holds {format_bytes(row.get('saved_bytes'))}",
             f"last changed by cell [{row.get('cell')}]"]
    why = why_grad_is_none(row, str(row.get("name")))
    if why:
        facts.append("why is .grad None? " + why)
    if row.get("aliases"):
        facts.insert(1, "also named " + ", ".join(map(str, row["aliases"])))
    words["details"] = "\n".join(facts)
    return words


def html_block(text: str) -> str:
    """Text for a frontend that renders HTML: the same characters, monospaced."""
    return f"<pre style='font-size: 12px'>{html.escape(text)}</pre>"


__all__ = ["COLUMNS", "html_block", "panel_words"]
