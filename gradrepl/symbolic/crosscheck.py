"""Three derivatives side by side: calculus (sympy), autograd (torch float64), a central difference.

The point is trust: when all three agree the learner sees why; when they do not,
the result says which one is off and why (a corner like abs at 0, a value that
is infinite there, a finite difference fooled by a steep function).
"""

from __future__ import annotations

import math
from functools import lru_cache

import sympy
import torch

from gradrepl.symbolic.expr import Parsed, relu

# symbolic vs autograd: both exact up to float64 rounding
RTOL, ATOL = 1e-7, 1e-9
# symbolic vs central difference: the difference quotient itself has an error of about h**2
NUMERIC_RTOL, NUMERIC_ATOL = 1e-5, 1e-6
STEP = 1e-5  # h, scaled by max(1, |x|)
SIMPLIFY_LIMIT = 60  # count_ops above which simplify() is skipped: it can take seconds


def _tensor_function(fn):
    """fn on float64 tensors, also when sympy left a plain number as the argument (sqrt(2))."""

    def call(*args):
        return fn(*(a if isinstance(a, torch.Tensor) else torch.tensor(float(a), dtype=torch.float64) for a in args))

    return call


# The names sympy's Python printer writes, bound to torch. The printed code comes from
# the sympy tree, whose every node the safe parser chose: no learner text is printed.
TORCH_NAMESPACE = {
    name: _tensor_function(getattr(torch, name))
    for name in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                 "exp", "log", "sqrt", "abs", "sign", "sigmoid", "relu")
}
TORCH_NAMESPACE.update(pi=math.pi, e=math.e, E=math.e)


class PointError(ValueError):
    """The point does not give exactly the expression's variables a real value."""


def tolerance() -> dict:
    """The stated tolerances, as shown to the learner."""
    return {
        "autograd": {"rtol": RTOL, "atol": ATOL},
        "numeric": {"rtol": NUMERIC_RTOL, "atol": NUMERIC_ATOL, "step": STEP},
    }


def close(a: float, b: float, rtol: float, atol: float) -> bool:
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def derivative(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    """d expr / d var, simplified when that is cheap enough."""
    return _derivative(expr, var)


@lru_cache(maxsize=512)
def _derivative(expr: sympy.Expr, var: sympy.Symbol) -> sympy.Expr:
    d = sympy.diff(expr, var)
    if sympy.count_ops(d) <= SIMPLIFY_LIMIT:
        d = sympy.simplify(d)
    return d


@lru_cache(maxsize=256)
def torch_function(expr: sympy.Expr, variables: tuple[sympy.Symbol, ...]):
    """A torch function of the variables, printed from the sympy tree (never from learner text)."""
    return sympy.lambdify(variables, expr, modules=[TORCH_NAMESPACE], dummify=True)


def value_at(expr: sympy.Expr, point: dict[sympy.Symbol, float]) -> float | None:
    """expr at the point as a float, or None where it is not a finite real number."""
    try:
        value = expr.evalf(30, subs={s: sympy.Float(v, 30) for s, v in point.items()})
    except (ArithmeticError, ValueError):  # mpmath divides by zero for 1/sqrt(0)
        return None
    if not value.is_number:
        return None
    try:
        result = complex(value)
    except (TypeError, ValueError):
        return None
    if abs(result.imag) > 1e-12 * max(1.0, abs(result.real)) or not math.isfinite(result.real):
        return None
    return result.real


def autograd(fn, values: list[float]) -> list[float]:
    """What autograd computes for each input at the point, in float64."""
    xs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    y = fn(*xs)
    if not isinstance(y, torch.Tensor) or not y.requires_grad:
        return [0.0] * len(xs)  # the expression does not depend on any input
    grads = torch.autograd.grad(y, xs, allow_unused=True)
    return [0.0 if g is None else float(g) for g in grads]


def central_difference(fn, values: list[float], index: int) -> float:
    """(f(x+h) - f(x-h)) / 2h in float64, for input number index."""
    h = STEP * max(1.0, abs(values[index]))

    def f(shift: float) -> float:
        xs = [torch.tensor(v + (shift if i == index else 0.0), dtype=torch.float64) for i, v in enumerate(values)]
        with torch.no_grad():
            return float(fn(*xs))

    return (f(h) - f(-h)) / (2 * h)


def corners(expr: sympy.Expr, var: sympy.Symbol, point: dict) -> list[str]:
    """Kinks the point sits on, where the derivative with respect to var has no single value."""
    found = []
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, (sympy.Abs, relu)) and var in node.free_symbols:
            inner = value_at(node.args[0], point)
            if inner is not None and abs(inner) < 1e-12:
                found.append(f"{node.func.__name__.lower()}({node.args[0]})")
    return found


def check(parsed: Parsed, point: dict[str, float]) -> dict:
    """The expression-mode result: formula, and per variable the three derivatives and a verdict."""
    names = [str(v) for v in parsed.variables]
    _check_point(names, point)
    at = {v: float(point[str(v)]) for v in parsed.variables}
    values = [at[v] for v in parsed.variables]
    fn = torch_function(parsed.expr, parsed.variables)
    f_value = value_at(parsed.expr, at)
    grads_autograd = autograd(fn, values) if parsed.variables else []
    grads = {}
    for i, var in enumerate(parsed.variables):
        d = derivative(parsed.expr, var)
        entry = {
            "symbolic": str(d),
            "symbolic_value": value_at(d, at),
            "autograd": _finite(grads_autograd[i]),
            "numeric": _finite(central_difference(fn, values, i)),
        }
        entry.update(_verdict(parsed.expr, var, at, f_value, entry))
        grads[str(var)] = entry
    return {
        "expr": parsed.text,
        "formula": str(parsed.expr),
        "point": {str(v): at[v] for v in parsed.variables},
        "value": f_value,
        "agree": all(g["agree"] is not False for g in grads.values()),
        "tolerance": tolerance(),
        "grads": grads,
    }


def _check_point(names: list[str], point: dict[str, float]) -> None:
    missing = [n for n in names if n not in point]
    extra = [n for n in point if n not in names]
    if missing:
        example = ",".join(f"{n}=1" for n in names)
        raise PointError(f"no value for {', '.join(missing)}: give every variable a value, like --at {example}")
    if extra:
        raise PointError(f"the expression does not use {', '.join(extra)}")
    for name, value in point.items():
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise PointError(f"{name} must be a finite number, got {value!r}")


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _verdict(expr, var, at, f_value, entry) -> dict:
    """agree / disagree / undefined, and a note in words when it is not a plain agree."""
    symbolic, auto, numeric = entry["symbolic_value"], entry["autograd"], entry["numeric"]
    if f_value is None:
        return {"agree": None, "status": "undefined", "exists": False,
                "note": "the expression is not a finite real number here (in float64)"}
    kinks = corners(expr, var, at)
    absolute = [k for k in kinks if k.startswith("abs")]
    if absolute:
        return {"agree": None, "status": "undefined", "exists": False,
                "note": f"{absolute[0]} has a corner here: the derivative does not exist (autograd uses 0)"}
    if symbolic is None:
        return {"agree": None, "status": "undefined", "exists": False,
                "note": "the derivative is infinite or undefined at this point"}
    note = f"{kinks[0]} has a corner here; like autograd, its slope there is taken as 0" if kinks else None
    if auto is None or not close(symbolic, auto, RTOL, ATOL):
        return {"agree": False, "status": "disagree", "exists": True,
                "note": "autograd differs from the symbolic derivative"}
    if not kinks and (numeric is None or not close(symbolic, numeric, NUMERIC_RTOL, NUMERIC_ATOL)):
        # calculus and autograd agree; the difference quotient is the approximation that failed
        note = f"the central difference is off (step {STEP:g}): the function changes sharply near this point"
    return {"agree": True, "status": "agree", "exists": True, "note": note}
