"""How one tensor row from the kernel reads in the panel: plain words, never markup."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from gradrepl.terminal_text import visible
from gradrepl.textviews import format_summary

# Column key -> header, in panel order.
COLUMNS: dict[str, str] = {
    "name": "name",
    "value": "value",
    "grad": ".grad",
    "grad_fn": "grad_fn",
    "requires_grad": "requires_grad",
    "is_leaf": "is_leaf",
    "shape": "shape",
    "dtype": "dtype",
}

CELL_WIDTH = 22


def summary(data: dict[str, Any] | None, width: int | None = CELL_WIDTH) -> str:
    """A value or .grad summary (the numbers when small, statistics when big), as the plain REPL writes it."""
    return format_summary(data, width or 10**6)


def shape(dims: list[int] | None) -> str:
    """[2, 3] -> 2×3; a scalar (no dims) reads as 'scalar'."""
    if not dims:
        return "scalar"
    return "×".join(str(d) for d in dims)


def flag(value: Any) -> Text:
    """True in green, False dimmed: the eye finds what autograd tracks."""
    return Text(str(bool(value)), style="green" if value else "dim")


def row_cells(row: dict[str, Any]) -> dict[str, Text]:
    """Every column's cell for `row`, keyed like COLUMNS."""
    return {
        "name": Text(visible(str(row.get("name", "?")))),
        "value": Text(summary(row.get("value"))),
        "shape": Text(shape(row.get("shape"))),
        "dtype": Text(str(row.get("dtype", "")).removeprefix("torch.")),
        "requires_grad": flag(row.get("requires_grad")),
        "is_leaf": flag(row.get("is_leaf")),
        "grad_fn": Text(row.get("grad_fn") or "—", style="" if row.get("grad_fn") else "dim"),
        "grad": Text(summary(row.get("grad")), style="" if row.get("grad") is not None else "dim"),
    }
