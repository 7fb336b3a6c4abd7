"""Where no widget frontend exists (terminal IPython, nbconvert --execute, GitHub's renderer):
a compact table of the rows the cell changed, as text and HTML, shown under the cell."""

from __future__ import annotations

from gradrepl.notebook.words import html_block
from gradrepl.views.tables import tensor_table


def changed_table(changed: list[dict], removed: list[str], stale: list[str]) -> dict | None:
    """A display bundle for what one cell changed, or None when it changed nothing."""
    if not changed and not removed:
        return None
    lines = []
    if changed:
        lines.append(tensor_table(changed))
    if removed:
        lines.append("removed: " + ", ".join(removed))
    if stale:
        lines.append("stale (made by an older version of a re-run cell): " + ", ".join(stale))
    text = "gradrepl: " + ("\n".join(lines))
    return {"text/plain": text, "text/html": html_block(text)}
