"""One element's formula as learner code runs (a small tree, not sympy: a tree node costs ~1 µs
where a sympy object costs ~100 µs), a tensor's shadow (an array of them), and the sympy expression
made of a formula once a check asks for it (shadow.py says why)."""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import sympy
    from gradrepl.kernel.symbolic.recorder import ShadowRecorder


class Formula:
    """One element's formula as code runs: an op and its arguments (Formulas, floats or a LeafSymbol)."""

    __slots__ = ("op", "args", "expr")

    def __init__(self, op: str, args: tuple):
        self.op = op
        self.args = args
        self.expr = None  # the sympy expression, once asked for

    def __add__(self, other):
        return Formula("+", (self, other))

    def __radd__(self, other):
        return Formula("+", (other, self))

    def __sub__(self, other):
        return Formula("-", (self, other))

    def __rsub__(self, other):
        return Formula("-", (other, self))

    def __mul__(self, other):
        return Formula("*", (self, other))

    def __rmul__(self, other):
        return Formula("*", (other, self))

    def __truediv__(self, other):
        return Formula("/", (self, other))

    def __rtruediv__(self, other):
        return Formula("/", (other, self))

    def __pow__(self, other):
        return Formula("**", (self, other))

    def __rpow__(self, other):
        return Formula("**", (other, self))

    def __neg__(self):
        return Formula("neg", (self,))

    def __pos__(self):
        return self


def call(name: str):
    """The elementwise op that applies the sympy function sympy_builders()[name]."""
    return lambda a: Formula(name, (a,))


# Elementwise functions a formula can apply; sympy_builders() says how each becomes sympy.
ELEMENTWISE = ("exp", "log", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
               "sigmoid", "relu", "abs", "log2", "log10")


@functools.cache
def sympy_builders() -> dict:
    """Formula op -> the sympy function that builds it. Imports sympy, so only a check calls this:
    recording a step never does, and a kernel starts without paying for sympy."""
    import sympy

    from gradrepl.kernel.symbolic.expr import relu, sigmoid

    return {
        "exp": sympy.exp, "log": sympy.log, "sqrt": sympy.sqrt, "sin": sympy.sin, "cos": sympy.cos,
        "tan": sympy.tan, "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan, "sinh": sympy.sinh,
        "cosh": sympy.cosh, "tanh": sympy.tanh, "sigmoid": sigmoid, "relu": relu, "abs": sympy.Abs,
        "log2": lambda u: sympy.log(u, 2), "log10": lambda u: sympy.log(u, 10),
        "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
        "**": lambda a, b: a**b, "neg": lambda a: -a, "sum": lambda *terms: sympy.Add(*terms),
    }


def to_sympy(value, recorder: "ShadowRecorder") -> sympy.Expr:
    """The sympy expression of a formula element, built once per node (iteratively: chains can be long)."""
    if not isinstance(value, Formula):
        return _number(value)
    stack = [value]
    while stack:
        node = stack[-1]
        if node.expr is not None:
            stack.pop()
            continue
        pending = [a for a in node.args if isinstance(a, Formula) and a.expr is None]
        if pending:
            stack.extend(pending)
            continue
        stack.pop()
        if node.op == "leaf":
            node.expr = recorder.symbol_of(node.args[0])
        else:
            args = [a.expr if isinstance(a, Formula) else _number(a) for a in node.args]
            node.expr = sympy_builders()[node.op](*args)
    return value.expr


def leaf_origins(formula) -> list["LeafSymbol"]:
    """The leaf elements a formula mentions."""
    found, seen, stack = {}, set(), [formula]
    while stack:
        node = stack.pop()
        if not isinstance(node, Formula) or id(node) in seen:
            continue
        seen.add(id(node))
        if node.op == "leaf":
            found[id(node.args[0])] = node.args[0]
        else:
            stack.extend(node.args)
    return list(found.values())


@dataclass
class Shadow:
    """What is known of one tensor's value as a formula of leaf symbols."""

    formula: np.ndarray | None          # object array of Formula elements (or floats), the tensor's shape
    problem: tuple[str, dict] | None = None  # why there is no formula: limits.problem's (code, names)
    cost: int = 1                       # upper bound on the size of one element's formula
    depth: int = 0                      # longest chain of ops from a leaf or constant
    version: int = 0                    # tensor._version when recorded; another value means untraced change


@dataclass
class LeafSymbol:
    """Where a leaf symbol comes from: a leaf tensor, one of its elements, its value when used."""

    leaf: weakref.ref
    index: tuple[int, ...]
    value: float
    symbol: sympy.Symbol | None = None  # made when a check first needs it


@dataclass
class Backward:
    """One call of .backward(): the scalar it differentiated, as a formula (or why there is none)."""

    root: weakref.ref
    root_version: int
    formula: Formula | None
    problem: tuple[str, dict] | None
    cuts: int = 0  # ShadowRecorder.cuts when logged: a later cut means backward calls may have gone unlogged


def _number(value) -> sympy.Expr:
    """A constant as it reads best: 3 rather than 3.0; other floats keep float64 precision."""
    import sympy

    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return sympy.Integer(int(value))
    return sympy.Float(value)
