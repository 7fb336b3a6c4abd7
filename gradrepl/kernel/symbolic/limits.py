"""How far the symbolic shadow goes (shadow.py), and the codes for where it stops (views/check.py words them)."""

from __future__ import annotations


MAX_ELEMENTS = 16      # largest tensor that gets a formula
MAX_CONSTANT = 4096    # largest non-grad tensor read as constants (matmul inputs may be wider)
MAX_COST = 2000        # estimated formula size beyond which we stop: "too large to derive symbolically"
MAX_DEPTH = 150        # ops in a chain; sympy recurses per level and would hit Python's recursion limit
TOO_LARGE = ("too_large", {})
MAX_CALLS = 500        # torch calls traced per step (a typed expression takes tens); the rest runs untraced, at full speed
TOO_LONG = ("too_long", {"calls": f"{MAX_CALLS:,}"})


def problem(code: str, **names) -> tuple[str, dict]:
    """Why a tensor has no formula, as data: a code and the names (strings; a shape as its sizes) its words need."""
    return code, {key: value if isinstance(value, list) else str(value) for key, value in names.items()}
