"""An expression's symbolic derivatives, with sympy alone (no torch): what `gradrepl check` prints
before it has a point, answered by the sympy-only kernel (symbolic_kernel.py) as by the full one."""

from __future__ import annotations

from functools import lru_cache

import sympy

from gradrepl.kernel.symbolic.expr import Parsed

SIMPLIFY_LIMIT = 200  # count_ops above which the derivative is shown as sympy.diff gives it


def symbolic_only(parsed: Parsed) -> dict:
    """No point given: the formula, its derivative by each variable, and the names a point must give."""
    return {"expr": parsed.text, "formula": str(parsed.expr), "needs_point": [str(v) for v in parsed.variables],
            "derivatives": {str(v): str(derivative(parsed.expr, v)) for v in parsed.variables}}


def derivative(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    """d expr / d var in the plainest of a few cheap forms (never sympy.simplify: it can take seconds)."""
    return _derivative(expr, var)


@lru_cache(maxsize=512)
def _derivative(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    d = sympy.diff(expr, var)
    if sympy.count_ops(d) > SIMPLIFY_LIMIT:
        return d
    # sympy.simplify() takes up to seconds (tanh) and likes Piecewise; these cheap forms read as well.
    candidates = [d, sympy.factor_terms(d)]
    if not d.atoms(sympy.Function):
        candidates.append(sympy.cancel(d))  # rational functions: (x**2 - 1)/(x - 1) has slope 1
    return min(candidates, key=sympy.count_ops)
