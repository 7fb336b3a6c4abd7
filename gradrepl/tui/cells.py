"""How one tensor row from the kernel reads in the panel: plain words, never markup."""

from __future__ import annotations

from typing import Any

from rich.text import Text

# Column key -> header, in panel order.
COLUMNS: dict[str, str] = {
    "name": "name",
    "value": "value",
    "shape": "shape",
    "dtype": "dtype",
    "requires_grad": "requires_grad",
    "is_leaf": "is_leaf",
    "grad_fn": "grad_fn",
    "grad": ".grad",
}

CELL_WIDTH = 22


def number(value: Any) -> str:
    """A number as torch prints it: 7. for a whole float, 4 significant digits otherwise."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return {"nan": "nan", "inf": "inf", "-inf": "-inf"}[repr(value)]
        if value.is_integer() and abs(value) < 1e16:
            return f"{int(value)}."
        return f"{value:.4g}"
    return str(value)


def nested(values: Any) -> str:
    """A nested list of numbers as a compact bracketed string."""
    if isinstance(values, list):
        return "[" + ", ".join(nested(v) for v in values) + "]"
    return number(values)


def summary(data: dict[str, Any] | None, width: int | None = CELL_WIDTH) -> str:
    """A value or .grad summary: the numbers when the kernel sent them, else statistics."""
    if data is None:
        return "None"
    if "values" in data:
        text = nested(data["values"])
    else:
        stats = [f"{key}={number(data[key])}" for key in ("min", "max", "mean", "norm") if key in data]
        text = " ".join(stats)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return text


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
        "name": Text(str(row.get("name", "?"))),
        "value": Text(summary(row.get("value"))),
        "shape": Text(shape(row.get("shape"))),
        "dtype": Text(str(row.get("dtype", "")).removeprefix("torch.")),
        "requires_grad": flag(row.get("requires_grad")),
        "is_leaf": flag(row.get("is_leaf")),
        "grad_fn": Text(row.get("grad_fn") or "—", style="" if row.get("grad_fn") else "dim"),
        "grad": Text(summary(row.get("grad")), style="" if row.get("grad") is not None else "dim"),
    }
