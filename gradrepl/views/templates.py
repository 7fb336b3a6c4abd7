"""A code's words from a table of templates, filled with the names the kernel sent beside the code.

A shape is sent as its sizes (a list of whole numbers) and written in the views' one notation: 2×3,
scalar (views/numbers.shape_text), never as a list or torch.Size."""

from __future__ import annotations

from gradrepl.views.numbers import shape_text


def filled(table: dict[str, str], code: str | None, names: dict | None = None) -> str | None:
    """table[code] with `names` put in, or None for a code this frontend does not know, or names from
    another version of the kernel that do not fit its template."""
    if code not in table:
        return None
    try:
        return table[code].format(**shaped(names))
    except (KeyError, IndexError, ValueError):
        return None


def shaped(names: dict | None) -> dict:
    """`names` with each shape (a list of whole numbers) written 2×3 (scalar for none)."""
    return {key: shape_text(value) if _is_shape(value) else value for key, value in (names or {}).items()}


def _is_shape(value) -> bool:
    return isinstance(value, list) and all(isinstance(size, int) and not isinstance(size, bool) for size in value)
