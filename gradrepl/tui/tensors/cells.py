"""How one tensor row from the kernel reads in the panel: views.tables' words, styled; never markup.

The words come from `views.tables.row_words`, the one row renderer the plain REPL,
`run` and %tensors use too; this module only adds the panel's styles. The table
and the details view both ask it.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from gradrepl.views.tables import GradBefore, format_summary, row_words

CELL_WIDTH = 22


def summary(data: dict[str, Any] | None, width: int | None = CELL_WIDTH) -> str:
    """A value or .grad summary (the numbers when small, statistics when big), as the plain REPL writes it."""
    return format_summary(data, width or 10**6)


def row_cells(row: dict[str, Any], graph_freed: bool = False, before: GradBefore | None = None) -> dict[str, Text]:
    """Every column's cell for `row`, keyed like views.tables.COLUMNS: yes in green and no dimmed, so the eye finds what
    autograd tracks; a missing grad_fn or .grad dimmed; a freed graph and an inspection error in red; a .grad a
    later backward added to (`before`, views.tables.grad_words) in bold."""
    words = row_words(row, CELL_WIDTH, graph_freed, before)
    added = row.get("grad") is not None and words["grad"] != format_summary(row.get("grad"), CELL_WIDTH)
    styles = {
        "requires_grad": "green" if row.get("requires_grad") else "dim",
        "is_leaf": "green" if row.get("is_leaf") else "dim",
        "grad_fn": ("italic red" if graph_freed else "") if row.get("grad_fn") else "dim",
        "grad": "bold" if added else "" if row.get("grad") is not None else "dim",
        "value": "red" if row.get("inspect_error") else "",
    }
    return {key: Text(text, style=styles.get(key, "")) for key, text in words.items()}
