"""A symbolic shadow of small tensors: while learner code runs, every op on a
small tensor that requires grad also records the same formula, which becomes
a sympy expression when a check asks for it.

Read it as autograd done a second time, by hand:

- a *leaf* (requires_grad, no grad_fn) becomes symbols, one per element;
- a tensor that does not require grad is a *constant*: its values, frozen
  when it was used (so ``detach()``, ``.data`` and ``torch.no_grad()`` give
  constants, exactly as autograd sees them);
- an op's output gets the op applied to its inputs' formulas, elementwise
  (formulas live in numpy object arrays, so broadcasting is numpy's, which
  is torch's; each element is a small Formula tree, since building sympy
  objects on every op would cost ~100 µs where a tree node costs ~1 µs);
- an op we do not understand is named ("F.conv1d is not traced
  symbolically") and everything computed from it carries that reason, so a
  formula is either right or absent, never silently wrong.

Only outputs with at most MAX_ELEMENTS elements that require grad are
traced; anything else costs one attribute check per op. A step is traced for
its first MAX_CALLS torch calls only: then the mode takes itself off torch's
mode stack, so a long training loop runs at torch's own speed, and what it
makes afterwards is "too long to check".
"""

from __future__ import annotations

import functools
import sys
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

if TYPE_CHECKING:
    import sympy

MAX_ELEMENTS = 16      # largest tensor that gets a formula
MAX_CONSTANT = 4096    # largest non-grad tensor read as constants (matmul inputs may be wider)
MAX_COST = 2000        # estimated formula size beyond which we stop: "too large to derive symbolically"
MAX_DEPTH = 150        # ops in a chain; sympy recurses per level and would hit Python's recursion limit
TOO_LARGE = "too large to derive symbolically"
MAX_CALLS = 500        # torch calls traced per step (a typed expression takes tens); the rest runs untraced, at full speed
TOO_LONG = (f"too long to check: it was made after the first {MAX_CALLS:,} torch calls of a step, and the rest "
            "of a step that long is not traced (run fewer iterations in one step to %check it)")


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


def to_sympy(value, recorder: "Recorder") -> sympy.Expr:
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
    problem: str | None = None          # why there is no formula
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
    problem: str | None
    cuts: int = 0  # Recorder.cuts when logged: a later cut means backward calls may have gone unlogged


class _WeakTable:
    """id(tensor) -> value, forgetting entries when the tensor dies (ids are recycled)."""

    def __init__(self):
        self._items: dict[int, tuple[weakref.ref, object]] = {}

    def get(self, tensor):
        item = self._items.get(id(tensor))
        if item is not None and item[0]() is tensor:
            return item[1]
        return None

    def set(self, tensor, value) -> None:
        key = id(tensor)
        items = self._items

        def forget(_ref, key=key):
            current = items.get(key)
            if current is not None and current[0] is _ref:
                del items[key]

        items[key] = (weakref.ref(tensor, forget), value)

    def __len__(self) -> int:
        return len(self._items)


class Recorder:
    """The shadows of live tensors, the symbols of leaves, and the log of backward calls."""

    def __init__(self):
        self.shadows = _WeakTable()                    # tensor -> Shadow
        self.leaves = _WeakTable()                     # leaf tensor -> (version, symbols array)
        self.symbols: dict[sympy.Symbol, LeafSymbol] = {}  # filled as formulas become sympy
        self._prune_at = 1024                           # len(symbols) that triggers forgetting dead leaves
        self.grad_history = _WeakTable()               # leaf -> [Backward, ...] since .grad was last empty
        self.backwards = _WeakTable()                  # root -> its last Backward
        self.cuts = 0                                  # steps whose tracing stopped at MAX_CALLS

    def cut(self) -> None:
        """A step ran past MAX_CALLS: nothing it does from here on is traced or logged."""
        self.cuts += 1

    # -- what a tensor is, as a formula -------------------------------------------
    def shadow_of(self, tensor: torch.Tensor) -> Shadow:
        """The formula of a tensor as autograd sees it now (leaf symbols, constants, or a recorded op)."""
        stored = self.shadows.get(tensor)
        if stored is not None:
            if stored.version != tensor._version:
                return Shadow(None, f"{_shape_words(tensor)} was changed by an operation that was not traced")
            return stored
        if not tensor.requires_grad:
            if tensor.numel() > MAX_CONSTANT:
                return Shadow(None, f"a constant with {tensor.numel()} elements is too large to trace")
            return Shadow(_constants(tensor))
        if tensor.grad_fn is None:
            if tensor.numel() > MAX_ELEMENTS:
                return Shadow(None, f"a leaf with {tensor.numel()} elements (more than {MAX_ELEMENTS}) is not traced")
            return Shadow(self.leaf_symbols(tensor))
        if tensor.numel() > MAX_ELEMENTS:
            return Shadow(None, f"an intermediate with {tensor.numel()} elements (more than {MAX_ELEMENTS}) is not traced")
        if self.cuts:  # steps record every small output they make, so this one came after a cut
            return Shadow(None, TOO_LONG)
        return Shadow(None, f"{_shape_words(tensor)} was made by {_grad_fn_words(tensor)}, which was not traced")

    def leaf_symbols(self, leaf: torch.Tensor) -> np.ndarray:
        """One real symbol per element; a new set once the leaf's values change (w -= lr * w.grad)."""
        known = self.leaves.get(leaf)
        if known is not None and known[0] == leaf._version:
            return known[1]
        values = leaf.detach().to(torch.float64).reshape(-1).tolist()
        ref = weakref.ref(leaf)
        symbols = []
        for flat, value in enumerate(values):
            index = tuple(int(i) for i in np.unravel_index(flat, tuple(leaf.shape))) if leaf.dim() else ()
            symbols.append(Formula("leaf", (LeafSymbol(ref, index, value),)))
        array = np.empty(len(symbols), dtype=object)
        array[:] = symbols
        array = array.reshape(tuple(leaf.shape))
        self.leaves.set(leaf, (leaf._version, array))
        return array

    def symbol_of(self, origin: LeafSymbol) -> sympy.Symbol:
        """The real sympy symbol standing for one leaf element (real=True keeps derivatives simple)."""
        import sympy

        if origin.symbol is None:
            if len(self.symbols) > self._prune_at:
                self.forget_dead_symbols()
                self._prune_at = max(1024, 2 * len(self.symbols))
            origin.symbol = sympy.Dummy("leaf", real=True)
            self.symbols[origin.symbol] = origin
        return origin.symbol

    def forget_dead_symbols(self) -> None:
        """Drop the symbols of leaves that no longer exist (a training loop makes new ones every step)."""
        self.symbols = {s: o for s, o in self.symbols.items() if o.leaf() is not None}

    # -- recording ops --------------------------------------------------------------
    def record(self, func, name: str, args: tuple, kwargs: dict, out, before: Shadow | None) -> None:
        """Give op outputs that require grad a formula, or the reason they have none."""
        if name == "__setitem__":
            out = args[0]
        if isinstance(out, (tuple, list)):
            produced = [o for o in out if isinstance(o, torch.Tensor)]
        else:
            produced = [out] if isinstance(out, torch.Tensor) else []
        traced = [o.requires_grad and o.grad_fn is not None and o.numel() <= MAX_ELEMENTS for o in produced]
        if not any(traced):
            return
        outputs = [o for o, keep in zip(produced, traced) if keep]
        if not torch.is_grad_enabled():
            # An in-place change under no_grad: the graph still describes the old value.
            for o in outputs:
                self.shadows.set(o, Shadow(None, f"{_shape_words(o)} was changed in place under torch.no_grad(), "
                                                 "so autograd's graph no longer describes its value", version=o._version))
            return
        try:
            shapes = compute(self, func, name, args, kwargs, before, produced)
        except _Untraced as exc:
            shapes = [Shadow(None, str(exc)) for _ in produced]
        except Exception as exc:  # a formula we could not build must never break learner code
            shapes = [Shadow(None, f"{display_name(func, name)} could not be traced ({type(exc).__name__})") for _ in produced]
        for o, shadow, keep in zip(produced, shapes, traced):
            if not keep:
                continue
            if shadow.formula is not None and tuple(shadow.formula.shape) != tuple(o.shape):
                shadow = Shadow(None, f"{display_name(func, name)} is not traced symbolically for these shapes")
            if shadow.cost > MAX_COST or shadow.depth > MAX_DEPTH:
                shadow = Shadow(None, TOO_LARGE)
            shadow.version = o._version
            self.shadows.set(o, shadow)

    def before_backward(self, root: torch.Tensor, gradient) -> Backward:
        """Log a backward call on every leaf it will reach; a leaf whose .grad is empty starts a new log."""
        shadow = self.shadow_of(root) if root.numel() <= MAX_ELEMENTS else Shadow(None, f"{_shape_words(root)} is not traced")
        formula = None
        if shadow.formula is not None:
            terms = shadow.formula if gradient is None else shadow.formula * _as_formula(self, gradient, root.shape)
            formula = Formula("sum", tuple(np.asarray(terms, dtype=object).reshape(-1).tolist()))
        entry = Backward(weakref.ref(root), root._version, formula, shadow.problem, self.cuts)
        self.backwards.set(root, entry)
        if formula is not None:
            leaves = {}
            for origin in leaf_origins(formula):
                leaf = origin.leaf()
                if leaf is not None:
                    leaves[id(leaf)] = leaf
            for leaf in leaves.values():
                history = self.grad_history.get(leaf)
                fresh = leaf.grad is None or not bool(leaf.grad.detach().any())
                if fresh or history is None or history[-1].cuts != self.cuts:
                    history = [] if fresh else [Backward(weakref.ref(leaf), -1, None, "an untraced earlier backward")]
                    self.grad_history.set(leaf, history)
                history.append(entry)
        return entry


class _Untraced(Exception):
    """An op (or an input) we cannot express: the message says which, in words."""


# -- the op table ---------------------------------------------------------------------

UNARY = {
    "neg": lambda a: -a, "negative": lambda a: -a, "__neg__": lambda a: -a,
    "positive": lambda a: a, "__pos__": lambda a: a, "clone": lambda a: a, "contiguous": lambda a: a,
    "float": lambda a: a, "double": lambda a: a, "to": lambda a: a, "type_as": lambda a: a, "cpu": lambda a: a,
    **{name: call(name) for name in ELEMENTWISE},
    "rsqrt": lambda a: 1 / call("sqrt")(a), "arcsin": call("asin"), "arccos": call("acos"), "arctan": call("atan"),
    "absolute": call("abs"), "__abs__": call("abs"),
    "square": lambda a: a**2, "reciprocal": lambda a: 1 / a,
    "log1p": lambda a: call("log")(1 + a), "expm1": lambda a: call("exp")(a) - 1, "exp2": lambda a: 2**a,
}
_ADD = lambda a, b: a + b  # noqa: E731
BINARY = {
    "add": _ADD, "__add__": _ADD, "__radd__": lambda a, b: b + a,
    "sub": lambda a, b: a - b, "subtract": lambda a, b: a - b, "__sub__": lambda a, b: a - b,
    "__rsub__": lambda a, b: b - a, "rsub": lambda a, b: b - a,
    "mul": lambda a, b: a * b, "multiply": lambda a, b: a * b, "__mul__": lambda a, b: a * b,
    "__rmul__": lambda a, b: b * a,
    "div": lambda a, b: a / b, "divide": lambda a, b: a / b, "true_divide": lambda a, b: a / b,
    "__truediv__": lambda a, b: a / b, "__rtruediv__": lambda a, b: b / a, "__div__": lambda a, b: a / b,
    "__rdiv__": lambda a, b: b / a,
    "pow": lambda a, b: a**b, "__pow__": lambda a, b: a**b, "__rpow__": lambda a, b: b**a,
    "float_power": lambda a, b: a**b,
}
REDUCE = {"sum", "mean"}
MATMUL = {"matmul", "__matmul__", "__rmatmul__", "mm", "mv", "dot", "inner", "linear"}
# Ops that only move elements: replayed on a tensor of element indices to see where each one goes.
SHAPE = {
    "view", "reshape", "view_as", "reshape_as", "flatten", "ravel", "unflatten", "squeeze", "unsqueeze",
    "t", "T", "mT", "transpose", "swapaxes", "swapdims", "permute", "expand", "expand_as", "__getitem__",
    "select", "narrow", "flip", "repeat", "movedim", "moveaxis", "index_select", "roll", "chunk", "split",
    "unbind", "tile", "broadcast_to",
}
SEQUENCE = {"cat", "concat", "concatenate", "stack", "hstack", "vstack"}


def op_name(func) -> str:
    """The op's plain name: 'add', '__mul__', 'T' for the .T property, 'add_' for in-place."""
    name = getattr(func, "__name__", None) or type(func).__name__
    if name in ("__get__", "__set__"):
        return getattr(getattr(func, "__self__", None), "__name__", name)
    return name


def display_name(func, name: str) -> str:
    """How the learner would write the op: F.linear, torch.cat, Tensor.addcmul."""
    if getattr(torch.nn.functional, name, None) is func:
        return f"F.{name}"
    if getattr(torch, name, None) is func:
        return f"torch.{name}"
    return f"Tensor.{name}"


def in_place_base(name: str) -> str | None:
    """'add_' -> 'add', '__iadd__' -> '__add__', '__setitem__' -> itself; None when not in place."""
    if name == "__setitem__":
        return name
    if name.startswith("__i") and name.endswith("__"):
        return "__" + name[3:]
    if name.endswith("_") and not name.endswith("__") and not name.startswith("_"):
        return name[:-1]
    return None


def compute(rec: Recorder, func, name: str, args, kwargs, before: Shadow | None, outputs) -> list[Shadow]:
    """The output shadows of one op, or _Untraced naming what stopped us."""
    used: list[Shadow] = []
    results = _compute(rec, func, name, args, kwargs, before, outputs, used)
    depth = 1 + max((s.depth for s in used), default=0)
    for result in results:
        result.depth = depth
    return results


def _compute(rec, func, name, args, kwargs, before, outputs, used: list[Shadow]) -> list[Shadow]:
    base = in_place_base(name) or name
    formulas: dict[int, Shadow] = {}

    def shadow(arg):
        if isinstance(arg, torch.Tensor):
            if before is not None and arg is args[0]:
                got = before
            else:
                got = formulas.get(id(arg)) or rec.shadow_of(arg)
                formulas[id(arg)] = got
            if got.formula is None:
                raise _Untraced(got.problem)
            used.append(got)
            return got
        if isinstance(arg, (int, float)) and not isinstance(arg, bool):
            return Shadow(np.asarray(_plain(arg), dtype=object), cost=0)
        raise _Untraced(f"{display_name(func, name)} with a {type(arg).__name__} argument is not traced symbolically")

    if base == "__setitem__":
        target, key, value = shadow(args[0]), args[1], shadow(args[2])
        return [_setitem(target, key, value, outputs[0])]
    if base in UNARY:
        a = shadow(args[0])
        return [Shadow(_map(UNARY[base], a.formula), cost=a.cost + 1)]
    if base in BINARY:
        if kwargs.get("rounding_mode") is not None:
            raise _Untraced(f"{display_name(func, name)} with rounding_mode is not traced symbolically")
        a, b = shadow(args[0]), shadow(args[1] if len(args) > 1 else kwargs.get("other", kwargs.get("exponent")))
        result = BINARY[base](a.formula, b.formula)
        alpha = kwargs.get("alpha", args[2] if len(args) > 2 else 1)
        if alpha != 1 and base in ("add", "sub"):
            result = BINARY[base](a.formula, b.formula * float(alpha))
        return [Shadow(np.asarray(result, dtype=object), cost=a.cost + b.cost + 1)]
    if base in REDUCE:
        return [_reduce(base, shadow(args[0]), args[1:], kwargs)]
    if base in MATMUL:
        return [_matmul(base, [shadow(a) for a in args if a is not None] + _kw_bias(kwargs, shadow))]
    if base == "mse_loss":
        a, b = shadow(args[0]), shadow(args[1] if len(args) > 1 else kwargs["target"])
        reduction = kwargs.get("reduction", args[2] if len(args) > 2 else "mean")
        squares = Shadow(np.asarray((a.formula - b.formula) ** 2, dtype=object), cost=a.cost + b.cost + 2)
        return [squares if reduction == "none" else _reduce(reduction, squares, (), {})]
    if base in SHAPE:
        source = before if before is not None else shadow(args[0])
        used.append(source)
        return _moved(getattr(torch.Tensor, base, None) if before is not None else func, args, kwargs, [source], [args[0]])
    if base in SEQUENCE:
        tensors = list(args[0])
        return _moved(func, args, kwargs, [shadow(t) for t in tensors], tensors, sequence=True)
    raise _Untraced(f"{display_name(func, name)} is not traced symbolically")


def _kw_bias(kwargs, shadow):
    return [shadow(kwargs["bias"])] if kwargs.get("bias") is not None else []


def _map(f, formula: np.ndarray) -> np.ndarray:
    return np.asarray(np.frompyfunc(f, 1, 1)(formula), dtype=object)


def _reduce(kind: str, a: Shadow, args, kwargs) -> Shadow:
    dim = kwargs.get("dim", args[0] if args else None)
    keepdim = kwargs.get("keepdim", args[1] if len(args) > 1 else False)
    if isinstance(dim, torch.Size) or isinstance(dim, list):
        dim = tuple(dim)
    axis = None if dim is None or dim == () else dim
    formula = a.formula
    total = np.sum(formula, axis=axis, keepdims=bool(keepdim)) if formula.ndim else formula
    count = max(formula.size, 1) if axis is None else int(np.prod([formula.shape[d] for d in np.atleast_1d(axis)]))
    result = np.asarray(total, dtype=object)
    if kind == "mean":
        result = np.asarray(result / count, dtype=object)
    return Shadow(result, cost=a.cost * count + 1)


def _matmul(kind: str, parts: list[Shadow]) -> Shadow:
    if kind == "linear":  # x @ W.T + b
        x, w = parts[0], parts[1]
        result = np.matmul(x.formula, w.formula.T) if w.formula.ndim == 2 else np.matmul(x.formula, w.formula)
        cost = (x.cost + w.cost) * (w.formula.shape[-1] if w.formula.ndim else 1) + 1
        if len(parts) > 2:
            result = result + parts[2].formula
            cost += parts[2].cost
        return Shadow(np.asarray(result, dtype=object), cost=cost)
    a, b = parts[0], parts[1]
    if kind == "__rmatmul__":
        a, b = b, a
    inner = a.formula.shape[-1] if a.formula.ndim else 1
    if kind == "inner":
        result = np.inner(a.formula, b.formula)
    else:
        result = np.matmul(a.formula, b.formula)
    return Shadow(np.asarray(result, dtype=object), cost=(a.cost + b.cost) * inner + 1)


def _moved(func, args, kwargs, sources: list[Shadow], tensors: list[torch.Tensor], sequence: bool = False) -> list[Shadow]:
    """Replay a shape op on element indices: each output element names the input element it copies."""
    flat = np.concatenate([s.formula.reshape(-1) for s in sources])
    offset, indices = 0, []
    for s in sources:
        n = s.formula.size
        indices.append(torch.arange(offset, offset + n).reshape(s.formula.shape))
        offset += n
    replay_args = ((indices, *args[1:]) if sequence else (indices[0], *args[1:]))
    moved = func(*replay_args, **kwargs)
    results = moved if isinstance(moved, (tuple, list)) else [moved]
    cost = max(s.cost for s in sources)
    return [Shadow(np.asarray(flat[r.numpy()], dtype=object).reshape(tuple(r.shape)), cost=cost) for r in results]


def _setitem(target: Shadow, key, value: Shadow, out: torch.Tensor) -> Shadow:
    positions = torch.arange(target.formula.size).reshape(target.formula.shape)[key]
    result = target.formula.copy().reshape(-1)
    result[positions.numpy().reshape(-1)] = np.broadcast_to(value.formula, tuple(positions.shape)).reshape(-1)
    return Shadow(result.reshape(target.formula.shape), cost=max(target.cost, value.cost))


def _plain(value) -> int | float:
    """A constant while recording: a Python int when it is one (3, not 3.0), else a float."""
    value = float(value)
    return int(value) if value.is_integer() and abs(value) < 1e15 else value


def _number(value) -> sympy.Expr:
    """A constant as it reads best: 3 rather than 3.0; other floats keep float64 precision."""
    import sympy

    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return sympy.Integer(int(value))
    return sympy.Float(value)


def _constants(tensor: torch.Tensor) -> np.ndarray:
    dtype = {torch.float32: np.float32, torch.float16: np.float16, torch.bfloat16: np.float32}.get(tensor.dtype)
    values = tensor.detach().reshape(-1).tolist()
    # A float32 0.1 is shown as 0.1, not 0.100000001490116: the shortest decimal that round-trips.
    numbers = [_plain(float(str(dtype(v)))) if dtype and isinstance(v, float) else _plain(v) for v in values]
    array = np.empty(len(numbers), dtype=object)
    array[:] = numbers
    return array.reshape(tuple(tensor.shape))


def _as_formula(rec: Recorder, gradient, shape) -> np.ndarray:
    g = rec.shadow_of(gradient) if isinstance(gradient, torch.Tensor) else Shadow(np.asarray(_plain(gradient), dtype=object))
    if g.formula is None:
        raise _Untraced(g.problem)
    return np.broadcast_to(g.formula, tuple(shape))


def _shape_words(tensor: torch.Tensor) -> str:
    return f"a tensor of shape {tuple(tensor.shape)}" if tensor.dim() else "a scalar"


def _grad_fn_words(tensor: torch.Tensor) -> str:
    return type(tensor.grad_fn).__name__ if tensor.grad_fn is not None else "an untraced op"


# -- the mode ----------------------------------------------------------------------------

RECORDER = Recorder()
_kinds: dict = {}  # func -> (name, in-place base or None, is backward, can flip requires_grad)
# Calls that can change a tensor's requires_grad flag (the property covers both get and set).
FLAG_FLIPPERS = frozenset({"requires_grad_", "requires_grad", "detach_"})


class ShadowMode(TorchFunctionMode):
    """Runs every torch call as usual, then records formulas for small outputs that require grad.

    After MAX_CALLS calls it stops recording and leaves torch's mode stack at
    the next line of Python (see _leave_when_on_top), so the rest of the step
    pays nothing for it.
    """

    def __init__(self, recorder: Recorder = RECORDER):
        super().__init__()
        self.recorder = recorder
        self.flipped_requires_grad = False  # the inspector's hint: may any flag have changed?
        self.calls = 0
        self.stopped = False  # past MAX_CALLS: calls pass straight through until the mode is off the stack
        self.off_stack = False
        self._traced_frames: list = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.calls += 1
        if self.calls > MAX_CALLS:
            if not self.stopped:
                self._stop()
            return func(*args, **kwargs)
        kind = _kinds.get(func)
        if kind is None:
            name = op_name(func)
            kind = _kinds[func] = (name, in_place_base(name), name == "backward", name in FLAG_FLIPPERS)
        name, in_place, is_backward, flips = kind
        if flips:
            self.flipped_requires_grad = True
        if is_backward:
            return self._backward(func, args, kwargs)
        before = None
        if in_place and args and isinstance(args[0], torch.Tensor) and args[0].numel() <= MAX_ELEMENTS \
                and torch.is_grad_enabled():  # under no_grad, record() only marks the output as changed
            if _any_requires_grad(args):
                before = self._safe(lambda: self.recorder.shadow_of(args[0]))
        out = func(*args, **kwargs)
        if isinstance(out, torch.Tensor):
            if not out.requires_grad or out.grad_fn is None or out.numel() > MAX_ELEMENTS:
                return out
        elif not (isinstance(out, (tuple, list)) or name == "__setitem__"):
            return out
        self._safe(lambda: self.recorder.record(func, name, args, kwargs, out, before))
        return out

    def __exit__(self, exc_type, exc_value, traceback):
        self._stop_tracing()
        if not self.off_stack:
            super().__exit__(exc_type, exc_value, traceback)

    def _stop(self) -> None:
        self.stopped = True
        self.flipped_requires_grad = True  # untraced calls may flip any flag
        self.recorder.cut()
        self._leave_when_on_top()

    def _leave_when_on_top(self) -> None:
        """Pop this mode off torch's stack at the next line of Python run outside a torch call.

        Inside __torch_function__ torch has taken the mode off its stack and puts it back
        afterwards, so it cannot leave from here. A line tracer on the frames below does it
        instead: at their next line the mode is on top again, and is popped (as its own
        __exit__ would); the tracer then removes itself. A tracer already set (a debugger)
        is left alone: the mode then just passes calls through.
        """
        if sys.gettrace() is not None:
            return
        frame = sys._getframe(1)
        while frame is not None:
            self._traced_frames.append(frame)
            frame = frame.f_back

        def tracer(frame, event, arg):
            stack = torch._C._len_torch_function_stack()
            if stack and torch._C._get_function_stack_at(stack - 1) is self:
                torch._C._pop_torch_function_stack()
                self.off_stack = True
                self._stop_tracing()
                return None
            return tracer

        for frame in self._traced_frames:
            frame.f_trace = tracer
        sys.settrace(tracer)

    def _stop_tracing(self) -> None:
        if self._traced_frames:
            sys.settrace(None)
            for frame in self._traced_frames:
                frame.f_trace = None
            self._traced_frames = []

    def _backward(self, func, args, kwargs):
        root = args[0] if args else None
        if isinstance(root, torch.Tensor) and root.requires_grad:
            gradient = kwargs.get("gradient", args[1] if len(args) > 1 else None)
            self._safe(lambda: self.recorder.before_backward(root, gradient))
        return func(*args, **kwargs)

    @staticmethod
    def _safe(work):
        try:
            return work()
        except Exception:  # the shadow is a helper: its failure must not change what learner code does
            return None


def _any_requires_grad(args) -> bool:
    return any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
