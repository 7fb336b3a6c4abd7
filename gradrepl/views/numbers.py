"""Numbers, byte counts and shapes in words: the one notation every view uses."""

from __future__ import annotations

import math

from gradrepl.host.budgets import size_text as format_bytes  # noqa: F401 - the views' name for it


def number_text(value, digits: int = 4) -> str:
    """One number in a few characters: a whole one whole (2.0 -> 2), else `digits` significant digits;
    True/False/None/nan/inf as Python says them."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.{digits}g}"
    return str(value)


def flat_values(values):
    """A summary's values (a number, or lists nested as the tensor's dims), one number after another."""
    if isinstance(values, list):
        for value in values:
            yield from flat_values(value)
    else:
        yield values


def shape_text(dims: list | None) -> str:
    """[2, 3] -> 2×3; a scalar (no dims) reads as 'scalar'; unknown as '?'."""
    if dims is None:
        return "?"
    if not dims:
        return "scalar"
    return "×".join(str(d) for d in dims)
