"""Which torch ops the shadow understands, and the formula each makes of its inputs' formulas
(elementwise, reductions, matmul, moves, setitem); any other op is named, never guessed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from gradrepl.kernel.symbolic.formula import ELEMENTWISE, Shadow, call
from gradrepl.kernel.symbolic.limits import problem

if TYPE_CHECKING:
    from gradrepl.kernel.symbolic.recorder import ShadowRecorder


class Untraced(Exception):
    """An op (or an input) we cannot express: `problem` says which (limits.problem's code and names)."""

    def __init__(self, problem: tuple[str, dict]):
        super().__init__(problem[0])
        self.problem = problem


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


def compute(rec: ShadowRecorder, func, name: str, args, kwargs, before: Shadow | None, outputs) -> list[Shadow]:
    """The output shadows of one op, or Untraced naming what stopped us."""
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
                raise Untraced(got.problem)
            used.append(got)
            return got
        if isinstance(arg, (int, float)) and not isinstance(arg, bool):
            return Shadow(np.asarray(_plain(arg), dtype=object), cost=0)
        raise Untraced(problem("argument_untraced", op=display_name(func, name), type=type(arg).__name__))

    if base == "__setitem__":
        target, key, value = shadow(args[0]), args[1], shadow(args[2])
        return [_setitem(target, key, value, outputs[0])]
    if base in UNARY:
        a = shadow(args[0])
        return [Shadow(_map(UNARY[base], a.formula), cost=a.cost + 1)]
    if base in BINARY:
        if kwargs.get("rounding_mode") is not None:
            raise Untraced(problem("rounding_untraced", op=display_name(func, name)))
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
    raise Untraced(problem("op_untraced", op=display_name(func, name)))


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


def _constants(tensor: torch.Tensor) -> np.ndarray:
    dtype = {torch.float32: np.float32, torch.float16: np.float16, torch.bfloat16: np.float32}.get(tensor.dtype)
    values = tensor.detach().reshape(-1).tolist()
    # A float32 0.1 is shown as 0.1, not 0.100000001490116: the shortest decimal that round-trips.
    numbers = [_plain(float(str(dtype(v)))) if dtype and isinstance(v, float) else _plain(v) for v in values]
    array = np.empty(len(numbers), dtype=object)
    array[:] = numbers
    return array.reshape(tuple(tensor.shape))


def as_formula(rec: ShadowRecorder, gradient, shape) -> np.ndarray:
    g = rec.shadow_of(gradient) if isinstance(gradient, torch.Tensor) else Shadow(np.asarray(_plain(gradient), dtype=object))
    if g.formula is None:
        raise Untraced(g.problem)
    return np.broadcast_to(g.formula, tuple(shape))


def shape_of(tensor: torch.Tensor) -> list[int]:
    """A tensor's shape as a problem's name, its sizes ([] for a scalar): views/check.py says "a tensor of shape …"."""
    return list(tensor.shape)
