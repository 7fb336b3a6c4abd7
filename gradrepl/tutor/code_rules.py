"""Rules about a task attempt's code, read with ``ast`` (never run, never evaluated).

Three kinds:

- **named rules** a lesson asks for where its prompt names a form
  (``gradient-argument``: "by passing a gradient argument"; ``no-inplace``:
  "without an in-place op"): the state alone cannot tell ``y.sum().backward()``
  from ``y.backward(torch.ones_like(y))``;
- **reaching in**: an attempt that imports sys, gc or gradrepl, calls exec or
  getattr, or touches dunder attributes could rewrite the reader of its own
  state (kernel/inspect/task_state.py); no task needs any of it, so the
  attempt is refused before its state is believed;
- **patching**: an attempt that assigns an attribute other than a tensor's
  own state (``.grad``, ``.data``, ``.requires_grad``) replaces part of torch
  or of an object (``torch.Tensor.backward = ...``, ``opt.step = ...``): the
  buggy code then runs "right" without being fixed;
- **typed-in answers**: a number in the attempt that the solution's state
  holds and the lesson never wrote (``x3.grad = torch.tensor(12.)`` where
  12 is computed, weights copied in by hand) is the answer typed, not made.

Each returns what it found (a piece of the attempt, for the message), or None.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterable

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")

BLOCKED_MODULES = {"sys", "gc", "builtins", "ctypes", "importlib", "inspect", "os", "gradrepl", "types",
                   "marshal", "pickle", "runpy", "threading", "_thread", "signal", "subprocess", "code",
                   "codeop", "posix", "weakref", "dis"}
BLOCKED_CALLS = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "getattr", "setattr",
                 "delattr", "breakpoint"}
# Attributes that lead to a module's innards from anything that imported it (torch.autograd.sys ...).
BLOCKED_ATTRIBUTES = BLOCKED_MODULES | {"_engine_run_backward", "_execution_engine"}
ALLOWED_DUNDERS = {"__init__"}  # a Module subclass calls super().__init__()
IN_PLACE_ALLOWED = {"requires_grad_"}  # changes a flag, not a tensor's data
TYPED_RTOL = 1e-3  # a number typed with four digits matches the value it copies


def _source(code: str, node: ast.AST) -> str:
    return (ast.get_source_segment(code, node) or type(node).__name__).strip().splitlines()[0][:80]


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


# -- named rules -------------------------------------------------------------------------

def _passes_gradient(code: str, tree: ast.Module) -> str | None:
    """Some backward call passes a gradient: y.backward(g), y.backward(gradient=g),
    torch.autograd.backward(y, g) or (..., grad_tensors=g)."""
    seen = False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr != "backward":
            continue
        seen = True
        through_autograd = isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "autograd"
        args = node.args[1:] if through_autograd else node.args
        names = {"grad_tensors"} if through_autograd else {"gradient"}
        if args or any(k.arg in names for k in node.keywords):
            return None
    return "no backward call passes a gradient" if seen else "there is no backward call"


def _changes_in_place(code: str, tree: ast.Module) -> str | None:
    """The first in-place change: a method ending in one underscore (mul_, add_; called or only
    named), `x *= 2`, `x[0] = ...`, an `out=` argument, or `x.data = ...`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):  # called or not: `m = s.mul_; m(2)` is the same op
            name = node.attr
            if name.endswith("_") and not name.endswith("__") and name not in IN_PLACE_ALLOWED:
                return _source(code, node)
        if isinstance(node, ast.Call) and any(k.arg == "out" for k in node.keywords):
            return _source(code, node)
        if isinstance(node, ast.AugAssign):
            return _source(code, node)
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Subscript) or (isinstance(t, ast.Attribute) and t.attr == "data")
                for t in node.targets):
            return _source(code, node)
    return None


def _reads_requires_grad(code: str, tree: ast.Module) -> str | None:
    """Some expression reads a requires_grad flag: the parameters are chosen by it, not by hand."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "requires_grad" and isinstance(node.ctx, ast.Load):
            return None
    return "no requires_grad flag is read: the parameters were picked by hand"


RULES: dict[str, tuple[str, Callable[[str, ast.Module], str | None]]] = {
    "gradient-argument": ("a backward call passes a gradient argument", _passes_gradient),
    "no-inplace": ("no tensor is changed in place", _changes_in_place),
    "filters-by-requires-grad": ("the parameters are chosen by their requires_grad flag", _reads_requires_grad),
}


def rule_breach(rule: str, code: str) -> str | None:
    """What breaks ``rule`` in ``code`` (None: it holds). Code that does not parse breaks every rule."""
    tree = _parse(code)
    if tree is None:
        return "the code does not parse"
    return RULES[rule][1](code, tree)


# -- reaching in -------------------------------------------------------------------------

def reaches_in(code: str) -> str | None:
    """The first piece of ``code`` that could reach the tutor's own reader of the state."""
    tree = _parse(code)
    if tree is None:
        return None  # a syntax error fails the attempt anyway
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(name.split(".")[0] in BLOCKED_MODULES for name in names):
                return _source(code, node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BLOCKED_CALLS:
            return _source(code, node)
        elif isinstance(node, ast.Attribute) and (_dunder(node.attr) or node.attr in BLOCKED_ATTRIBUTES):
            return _source(code, node)
        elif isinstance(node, ast.Name) and (_dunder(node.id) or node.id in BLOCKED_CALLS):
            return _source(code, node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _dunder(node.name):
            return f"def {node.name}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _dunder(node.value.strip()):
            return repr(node.value)
    return None


# Attributes an attempt may assign: a tensor's own state, which tasks are about; never on a module the
# lessons import (torch.autograd.grad = ... is torch patched, not a gradient set).
TENSOR_STATE = {"grad", "data", "requires_grad"}
MODULE_NAMES = {"torch", "nn", "F", "optim", "np", "numpy", "math", "functools", "itertools", "operator", "random"}


def patches(code: str) -> str | None:
    """The first assignment in ``code`` to an attribute that is no tensor state (None: there is none)."""
    tree = _parse(code)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        else:
            continue
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.ctx, (ast.Store, ast.Del)) \
                        and (part.attr not in TENSOR_STATE or _root_name(part) in MODULE_NAMES):
                    return _source(code, node)
    return None


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__") and name not in ALLOWED_DUNDERS


# -- typed-in answers ----------------------------------------------------------------------

def lesson_numbers(texts: Iterable[str]) -> set[float]:
    """Numbers the lesson itself writes (prompt, code, solution, hints): a learner may type those."""
    found = {0.0, 1.0, -1.0}
    for text in texts:
        for match in NUMBER.findall(text or ""):
            try:
                found.add(float(match))
            except ValueError:
                pass
    return found


def typed_answer(code: str, expected: Iterable[float], allowed: set[float]) -> str | None:
    """A number written in ``code`` that equals one the solution's state holds and the lesson never wrote.

    Numbers only compared or printed (``assert w.grad == 12``, ``print(...)``) and loop counts
    (``range(100)``) are not answers; constant arithmetic (``24 / 2``) is read as its value."""
    tree = _parse(code)
    if tree is None:
        return None
    wanted = [e for e in expected if math.isfinite(e)]
    for node, value in _written_numbers(tree):
        if any(math.isclose(value, a, rel_tol=1e-9, abs_tol=1e-12) for a in allowed):
            continue
        if any(math.isclose(value, e, rel_tol=TYPED_RTOL, abs_tol=1e-6) for e in wanted):
            return _source(code, node)
    return None


def _written_numbers(tree: ast.AST):
    """(node, value) of each number the code writes, skipping what only tests or counts."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Compare, ast.Assert, ast.JoinedStr, ast.Subscript)):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "range"):
            continue
        value = _constant(node)
        if value is not None:
            yield node, value
            continue
        stack.extend(ast.iter_child_nodes(node))


def _constant(node: ast.AST) -> float | None:
    """The value of a constant arithmetic expression of numbers (never evaluated as code)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _constant(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp):
        left, right = _constant(node.left), _constant(node.right)
        if left is None or right is None:
            return None
        try:
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, ast.Div):
                return left / right
            if isinstance(node.op, ast.Pow) and abs(right) <= 64 and abs(left) < 1e6:
                return float(left ** right)
        except (ZeroDivisionError, OverflowError, TypeError):
            return None
    return None
