"""How one tensor row from the kernel reads in the panel: plain words, never markup.

This is the panel's one row renderer: the table and the details view both ask
it. The four facts come first (requires_grad, is_leaf, grad_fn, .grad), then
the value, shape and dtype.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from gradrepl.textviews import format_summary

# Column key -> header, in panel order. "name" stays put when the table scrolls sideways.
COLUMNS: dict[str, str] = {
    "name": "name",
    "requires_grad": "req",
    "is_leaf": "leaf",
    "grad_fn": "grad_fn",
    "grad": ".grad",
    "value": "value",
    "shape": "shape",
    "dtype": "dtype",
}
LEGEND = "req = requires_grad · leaf = is_leaf"

CELL_WIDTH = 22


def summary(data: dict[str, Any] | None, width: int | None = CELL_WIDTH) -> str:
    """A value or .grad summary (the numbers when small, statistics when big), as the plain REPL writes it."""
    return format_summary(data, width or 10**6)


def shape(dims: list | None) -> str:
    """[2, 3] -> 2×3; a scalar (no dims) reads as 'scalar'; unknown as '?'."""
    if dims is None:
        return "?"
    if not dims:
        return "scalar"
    return "×".join(str(d) for d in dims)


def flag(value: Any) -> Text:
    """yes in green, no dimmed: the eye finds what autograd tracks."""
    return Text("yes" if value else "no", style="green" if value else "dim")


def label(row: dict[str, Any]) -> str:
    """The row's name and every other name of the same tensor: `model[0].weight = layer.weight, p`."""
    name = str(row.get("name", "?"))
    aliases = row.get("aliases") or []
    return f"{name} = {', '.join(map(str, aliases))}" if aliases else name


def row_cells(row: dict[str, Any]) -> dict[str, Text]:
    """Every column's cell for `row`, keyed like COLUMNS."""
    error = row.get("inspect_error")
    return {
        "name": Text(label(row)),
        "requires_grad": flag(row.get("requires_grad")),
        "is_leaf": flag(row.get("is_leaf")),
        "grad_fn": Text(row.get("grad_fn") or "—", style="" if row.get("grad_fn") else "dim"),
        "grad": Text(summary(row.get("grad")), style="" if row.get("grad") is not None else "dim"),
        "value": Text(error, style="red") if error else Text(summary(row.get("value"))),
        "shape": Text(shape(row.get("shape"))),
        "dtype": Text(str(row.get("dtype", "")).removeprefix("torch.")),
    }
