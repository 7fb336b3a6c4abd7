"""The safe parser: learner text -> sympy expression, through a whitelist over Python's ast.

Learner text never reaches eval, sympify or parse_expr (all three run Python).
We parse with ``ast.parse`` (which only builds a tree) and build sympy objects
ourselves from the few node kinds we allow:

- numbers (``2``, ``0.5``, ``1e-3``), variable names (``x``, ``w1``), ``pi``;
- ``+ - * / **`` and unary minus;
- calls to the math functions in FUNCTIONS, with positional arguments only.

Friendly input is accepted where it is unambiguous: ``x^2`` means ``x**2``
(``^`` is always power here), and a number written right before a name or a
parenthesis multiplies it (``3x`` is ``3*x``, ``2(x+1)`` is ``2*(x+1)``).
``x(x+1)`` is refused: it reads as a call to a function named x.

Everything else (attributes, subscripts, strings, lambdas, comprehensions,
keyword arguments, comparisons...) is refused with a message naming the
problem and its 1-based column in the text the learner typed.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass

import sympy

MAX_LENGTH = 500          # characters of learner text
MAX_EXPONENT = 1000       # |n| in x**n when n is a number
MAX_NUMBER_BITS = 20_000  # a constant power like 9**999 is computed exactly; cap its size


class sigmoid(sympy.Function):
    """The logistic function 1 / (1 + exp(-x)), kept whole so formulas read like torch code."""

    @classmethod
    def eval(cls, arg):
        if arg.is_Number:
            return 1 / (1 + sympy.exp(-arg))
        return None

    def fdiff(self, argindex=1):
        s = sigmoid(self.args[0])
        return s * (1 - s)

    def _eval_rewrite_as_exp(self, arg, **kwargs):
        return 1 / (1 + sympy.exp(-arg))

    def _eval_is_real(self):
        return self.args[0].is_real


class relu(sympy.Function):
    """max(x, 0); its slope at 0 is taken as 0, as autograd does (Heaviside(x, 0))."""

    @classmethod
    def eval(cls, arg):
        if arg.is_Number:
            return arg if arg > 0 else sympy.S.Zero
        return None

    def fdiff(self, argindex=1):
        return sympy.Heaviside(self.args[0], 0)

    def _eval_is_real(self):
        return self.args[0].is_real


def _log(*args):
    if len(args) == 2:  # log(x, base), as in Python's math.log
        return sympy.log(args[0]) / sympy.log(args[1])
    return sympy.log(*args)


# name -> (builder, allowed argument counts)
FUNCTIONS: dict[str, tuple] = {
    "sin": (sympy.sin, (1,)),
    "cos": (sympy.cos, (1,)),
    "tan": (sympy.tan, (1,)),
    "asin": (sympy.asin, (1,)),
    "acos": (sympy.acos, (1,)),
    "atan": (sympy.atan, (1,)),
    "sinh": (sympy.sinh, (1,)),
    "cosh": (sympy.cosh, (1,)),
    "tanh": (sympy.tanh, (1,)),
    "exp": (sympy.exp, (1,)),
    "log": (_log, (1, 2)),
    "sqrt": (sympy.sqrt, (1,)),
    "abs": (sympy.Abs, (1,)),
    "sigmoid": (sigmoid, (1,)),
    "relu": (relu, (1,)),
}
CONSTANTS = {"pi": sympy.pi}

_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}

class ExprError(ValueError):
    """Input that cannot be parsed or is not allowed: a code and the names its words need
    (views/remarks.PARSE_ERRORS says them); column is 1-based in the learner's text."""

    def __init__(self, code: str, column: int | None = None, **names):
        super().__init__(code)
        self.code, self.column, self.names = code, column, names

    def to_json(self) -> dict:
        return {"code": self.code, "names": self.names, "column": self.column}


@dataclass(frozen=True)
class Parsed:
    """A parsed expression and its variables, in order of first appearance."""

    text: str
    expr: sympy.Expr
    variables: tuple[sympy.Symbol, ...]


_cache: dict[str, Parsed] = {}


def parse(text: str) -> Parsed:
    """Parse learner text into sympy, or raise ExprError. Never evaluates the text."""
    if text in _cache:
        return _cache[text]
    if len(text) > MAX_LENGTH:
        raise ExprError("too_long", MAX_LENGTH + 1, length=len(text), limit=MAX_LENGTH)
    if not text.strip():
        raise ExprError("empty", 1)
    source, columns = _friendly(text)
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        if not exc.offset:  # Python reports the end of input as offset 0
            raise ExprError("ends_early", len(text.rstrip()) + 1) from None
        raise ExprError("cannot_parse", _original_column(columns, exc.offset), why=exc.msg) from None
    builder = _Builder(source, columns)
    expr = builder.build(tree.body)
    parsed = Parsed(text, expr, tuple(builder.variables.values()))
    if len(_cache) > 256:
        _cache.clear()
    _cache[text] = parsed
    return parsed


def symbol(name: str) -> sympy.Symbol:
    """The variable every parser and check uses for a name: real, so derivatives stay simple."""
    return sympy.Symbol(name, real=True)


# A number directly followed by a name or '(' (not inside a name like x2y, not a 1e5 exponent).
_IMPLICIT = re.compile(r"(?<![\w.])(?>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)(?=\s*[A-Za-z_(])")


def _friendly(text: str) -> tuple[str, list[int]]:
    """Rewrite '^' to '**' and '3x' to '3*x'; return the new text and, per character, its original column."""
    out: list[str] = []
    columns: list[int] = []
    ends = {m.end() for m in _IMPLICIT.finditer(text)}
    start = len(text) - len(text.lstrip())  # eval mode refuses leading indentation
    for i, ch in enumerate(text[start:], start):
        if ch in "\r\n\t":
            ch = " "  # one logical line: columns stay meaningful
        if i in ends:
            out.append("*")
            columns.append(i + 1)
        if ch == "^":
            out.append("**")
            columns.extend((i + 1, i + 1))
        else:
            out.append(ch)
            columns.append(i + 1)
    return "".join(out), columns


def _original_column(columns: list[int], offset: int | None) -> int | None:
    if offset is None or not columns:
        return None
    index = min(max(offset - 1, 0), len(columns) - 1)
    return columns[index] if offset - 1 < len(columns) else columns[-1] + 1


class _Builder:
    def __init__(self, source: str, columns: list[int]):
        self.source = source
        self.columns = columns
        self.variables: dict[str, sympy.Symbol] = {}

    def column(self, node: ast.AST) -> int | None:
        return _original_column(self.columns, getattr(node, "col_offset", -1) + 1)

    def refuse(self, node: ast.AST, what: str) -> ExprError:
        """`what`: the refused node's class (Lambda, ListComp ...) or a kind of its own (str, call_result)."""
        return ExprError("not_allowed", self.column(node), what=what)

    def build(self, node: ast.AST) -> sympy.Expr:
        if isinstance(node, ast.Constant):
            return self.number(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.UnaryOp):
            operand = self.build(node.operand)
            if isinstance(node.op, ast.USub):
                return -operand
            if isinstance(node.op, ast.UAdd):
                return operand
            raise self.refuse(node, type(node.op).__name__)
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            raise self.attribute(node)
        if isinstance(node, ast.Subscript):
            raise ExprError("not_allowed", self.after(node.value), what="Subscript")
        raise self.refuse(node, type(node).__name__)

    def number(self, node: ast.Constant) -> sympy.Expr:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            if isinstance(value, (str, bytes)):
                raise self.refuse(node, "str")
            raise ExprError("not_allowed_constant", self.column(node), value=repr(value))
        if isinstance(value, int):
            return sympy.Integer(value)
        if not math.isfinite(value):
            raise ExprError("too_large", self.column(node))
        return sympy.Rational(repr(value))  # exact decimal: 0.1 stays 1/10

    def name(self, node: ast.Name) -> sympy.Expr:
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        if node.id in FUNCTIONS:
            raise ExprError("function_name", self.column(node), name=node.id)
        if node.id.startswith("_"):
            raise ExprError("underscore", self.column(node), name=node.id)
        if node.id not in self.variables:
            self.variables[node.id] = symbol(node.id)
        return self.variables[node.id]

    def binary(self, node: ast.BinOp) -> sympy.Expr:
        if isinstance(node.op, ast.Pow):
            base, exponent = self.build(node.left), self.build(node.right)
            self.check_power(node, base, exponent)
            return base**exponent
        combine = _BINARY.get(type(node.op))
        if combine is None:
            raise ExprError("not_allowed", self.operator_column(node), what=type(node.op).__name__)
        left, right = self.build(node.left), self.build(node.right)
        if combine is _BINARY[ast.Div] and right == 0:
            raise ExprError("division_by_zero", self.operator_column(node))
        return combine(left, right)

    def operator_column(self, node: ast.BinOp) -> int | None:
        return self.after(node.left)

    def after(self, node: ast.AST) -> int | None:
        """Column of the first token after node: the operator or '.' that follows it."""
        end = node.end_col_offset
        while end < len(self.source) and self.source[end] in " )":
            end += 1
        return _original_column(self.columns, end + 1)

    def check_power(self, node: ast.BinOp, base: sympy.Expr, exponent: sympy.Expr) -> None:
        if exponent.is_Number and abs(exponent) > MAX_EXPONENT:
            raise ExprError("exponent_too_large", self.column(node.right), limit=MAX_EXPONENT)
        if base.is_Number and exponent.is_Number and base != 0:
            bits = abs(float(exponent)) * max(1.0, math.log2(abs(float(base))) if abs(base) < 1e300 else 1e4)
            if bits > MAX_NUMBER_BITS:
                raise ExprError("too_large", self.column(node))
        if base == 0 and exponent.is_Number and exponent < 0:
            raise ExprError("division_by_zero", self.column(node))

    def attribute(self, node: ast.Attribute) -> ExprError:
        return ExprError("not_allowed_attribute", self.after(node.value), attr=node.attr)

    def call(self, node: ast.Call) -> sympy.Expr:
        if not isinstance(node.func, ast.Name):
            # e.g. os.system(...) or f(x)(y): refuse what the callee is made of
            if isinstance(node.func, ast.Attribute):
                raise self.attribute(node.func)
            raise self.refuse(node.func, "call_result")
        name = node.func.id
        if name not in FUNCTIONS:
            raise ExprError("unknown_function", self.column(node), name=name, allowed=", ".join(FUNCTIONS))
        if node.keywords:
            raise ExprError("keywords", self.column(node.keywords[0].value) or self.column(node))
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.refuse(arg, "Starred")
        builder, arities = FUNCTIONS[name]
        if len(node.args) not in arities:
            raise ExprError("arity", self.column(node), name=name, wanted=",".join(map(str, arities)),
                            got=len(node.args))
        return builder(*(self.build(arg) for arg in node.args))
