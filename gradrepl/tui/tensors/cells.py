"""How one tensor row from the kernel reads in the panel: textviews' words, styled; never markup.

The words come from `textviews.row_words`, the one row renderer the plain REPL,
`run` and %tensors use too; this module only adds the panel's styles. The table
and the details view both ask it.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from gradrepl.textviews import format_summary, row_words

CELL_WIDTH = 22


def summary(data: dict[str, Any] | None, width: int | None = CELL_WIDTH) -> str:
    """A value or .grad summary (the numbers when small, statistics when big), as the plain REPL writes it."""
    return format_summary(data, width or 10**6)


def row_cells(row: dict[str, Any]) -> dict[str, Text]:
    """Every column's cell for `row`, keyed like textviews.COLUMNS: yes in green and no dimmed, so the eye finds what
    autograd tracks; a missing grad_fn or .grad dimmed; an inspection error in red."""
    styles = {
        "requires_grad": "green" if row.get("requires_grad") else "dim",
        "is_leaf": "green" if row.get("is_leaf") else "dim",
        "grad_fn": "" if row.get("grad_fn") else "dim",
        "grad": "" if row.get("grad") is not None else "dim",
        "value": "red" if row.get("inspect_error") else "",
    }
    return {key: Text(words, style=styles.get(key, "")) for key, words in row_words(row, CELL_WIDTH).items()}
