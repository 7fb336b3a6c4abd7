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

from gradrepl.kernel.symbolic.derivatives import derivative
from gradrepl.kernel.symbolic.expr import Parsed, relu, sigmoid
from gradrepl.kernel.symbolic.limits import MAX_CALLS, problem

# symbolic vs autograd: both exact up to float64 rounding
RTOL, ATOL = 1e-7, 1e-9
# symbolic vs central difference: the difference quotient itself has an error of about h**2
NUMERIC_RTOL, NUMERIC_ATOL = 1e-5, 1e-6
STEP = 1e-5  # h, scaled by max(1, |x|)


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
    """The point does not give exactly the expression's variables a real value: a code and names
    (views/remarks.PARSE_ERRORS)."""

    def __init__(self, code: str, **names) -> None:
        super().__init__(code)
        self.code, self.names = code, names


def tolerance() -> dict:
    """The stated tolerances, as shown to the learner."""
    return {
        "autograd": {"rtol": RTOL, "atol": ATOL},
        "numeric": {"rtol": NUMERIC_RTOL, "atol": NUMERIC_ATOL, "step": STEP},
    }


def close(a: float, b: float, rtol: float, atol: float) -> bool:
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


@lru_cache(maxsize=256)
def torch_function(expr: sympy.Expr, variables: tuple[sympy.Symbol, ...]):
    """A torch function of the variables, printed from the sympy tree (never from learner text)."""
    return sympy.lambdify(variables, expr, modules=[TORCH_NAMESPACE], dummify=True)


def value_at(expr: sympy.Expr, point: dict[sympy.Symbol, float]) -> float | None:
    """expr at the point as a float, or None where it is not a finite real number."""
    if expr.has(sigmoid):  # evalf knows exp, not our sigmoid: without this it falls back to slow subs
        expr = expr.replace(sigmoid, lambda u: 1 / (1 + sympy.exp(-u)))
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
    """The expression-mode result at a point: formula, and per variable the three derivatives and a
    verdict (without a point, checks.check_expression answers with derivatives.symbolic_only)."""
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
        raise PointError("point_missing", missing=", ".join(missing), example=example)
    if extra:
        raise PointError("point_extra", extra=", ".join(extra))
    for name, value in point.items():
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise PointError("point_not_finite", name=name, value=repr(value))


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _verdict(expr, var, at, f_value, entry) -> dict:
    """agree / disagree / undefined, and a note (a code and its names, worded by views/check.py) when it
    is not a plain agree."""
    symbolic, auto, numeric = entry["symbolic_value"], entry["autograd"], entry["numeric"]
    if f_value is None:
        return {"agree": None, "status": "undefined", "exists": False,
                **_note("not_finite")}
    kinks = corners(expr, var, at)
    absolute = [k for k in kinks if k.startswith("abs")]
    if absolute:
        return {"agree": None, "status": "undefined", "exists": False,
                **_note("corner_no_derivative", function=absolute[0])}
    if symbolic is None:
        return {"agree": None, "status": "undefined", "exists": False, **_note("undefined")}
    note = _note("corner_taken_as_zero", function=kinks[0]) if kinks else _note(None)
    if auto is None:
        return {"agree": False, "status": "disagree", "exists": True,
                **_note("autograd_not_finite")}
    if not close(symbolic, auto, RTOL, ATOL):
        return {"agree": False, "status": "disagree", "exists": True,
                **_note("autograd_differs")}
    if not kinks and (numeric is None or not close(symbolic, numeric, NUMERIC_RTOL, NUMERIC_ATOL)):
        # calculus and autograd agree; the difference quotient is the approximation that failed
        note = _note("central_difference_off", step=f"{STEP:g}")
    return {"agree": True, "status": "agree", "exists": True, **note}


def _problem(found: tuple[str, dict]) -> dict:
    """Why a tensor has no formula, as the check sends it (views/check.py words it into "problem")."""
    return {"problem_code": found[0], "problem_names": found[1] or None}


def _note(code: str | None, **names: str) -> dict:
    """A check's note as data: its code and the names its words need (views/check.py says it)."""
    return {"note_code": code, "note_names": names or None}


# -- equivalence (lessons' `derive` questions) -------------------------------------------

def same_function(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Whether a and b are the same function: sampled at points first (cheap, catches most), then proved."""
    difference = a - b
    if difference == 0:
        return True
    symbols = sorted(difference.free_symbols, key=str)
    for k in range(6):  # points away from 0 and 1, inside every domain our functions need
        point = {s: 0.37 + 0.61 * ((k * 7 + i * 3) % 11) / 11 for i, s in enumerate(symbols)}
        left, right = value_at(a, point), value_at(b, point)
        if left is None or right is None:
            if (left is None) != (right is None):
                return False
            continue
        if not close(left, right, 1e-9, 1e-12):
            return False
    plain = difference.replace(sigmoid, lambda u: 1 / (1 + sympy.exp(-u))).replace(relu, lambda u: sympy.Max(u, 0))
    return sympy.simplify(plain) == 0 or plain.equals(0) is True


# -- live mode (%check NAME) -------------------------------------------------------------

def check_live(namespace: dict, name: str, resolve) -> dict:
    """y's formula from the shadow, its symbolic gradient per leaf, and what each leaf's .grad holds."""
    from gradrepl.kernel.symbolic import shadow as shadows
    from gradrepl.kernel.symbolic.formula import to_sympy

    tensor = resolve(name) if name else None
    if not isinstance(tensor, torch.Tensor):
        found = {} if tensor is None else {"type": type(tensor).__name__}
        return {"error": {"code": "not_a_tensor", "names": {"name": name or "(nothing)", **found}, "column": None}}
    base = {"name": name, "kind": "tensor", "shape": list(tensor.shape)}
    if not tensor.requires_grad:
        return {**base, **_problem(problem("constant"))}
    if tensor.grad_fn is None:
        return {**base, **_problem(problem("leaf"))}
    recorder = shadows.RECORDER
    shadow = recorder.shadow_of(tensor)
    if shadow.formula is None:
        return {**base, **_problem(shadow.problem)}
    elements = [to_sympy(f, recorder) for f in shadow.formula.reshape(-1).tolist()]
    names = _leaf_names(namespace, recorder, elements)
    rename = {s: named[1] for s, named in names.items()}
    mismatch = _reproduces(elements, tensor, recorder)
    if mismatch:
        return {**base, **_problem(mismatch)}
    entry = _own_backward(recorder, tensor)
    scalar = tensor.numel() == 1
    target = to_sympy(entry.formula, recorder) if entry is not None and entry.formula is not None \
        else sympy.Add(*elements)
    result = {
        **base,
        "formula": _show(elements[0], rename) if scalar and tensor.dim() == 0 else [_show(e, rename) for e in elements],
        "of": None if scalar else (f"{name}.backward(gradient)" if entry is not None else
                                   f"{name}.sum() (what {name}.backward(torch.ones_like({name})) gives)"),
        "leaves": [],
        "remarks": [],  # codes with names, as _note's: views/check.py words them
    }
    for leaf, symbols in _group_by_leaf(names).items():
        result["leaves"].append(_leaf_check(recorder, leaf, symbols, names, rename, target, entry, tensor, name))
    statuses = [leaf["status"] for leaf in result["leaves"]]
    result["agree"] = False if "disagree" in statuses else (True if statuses and all(
        s in ("agree", "accumulated") for s in statuses) else None)
    if entry is None and recorder.shadows.get(tensor) is not None:
        result["remarks"].append(_note("backward_not_called", name=name))
    return result


def _leaf_names(namespace: dict, recorder, elements: list) -> dict:
    """Each leaf symbol in the formula -> (leaf tensor, display symbol like w_0_1, the leaf's name like w)."""
    leaves: dict[int, torch.Tensor] = {}
    origins = {}
    for element in elements:
        for s in element.free_symbols:
            origin = recorder.symbols.get(s)
            leaf = origin.leaf() if origin is not None else None
            if leaf is not None:
                origins[s] = (leaf, origin)
                leaves.setdefault(id(leaf), leaf)
    found = _names_in(namespace, leaves)
    unnamed = 0
    for key in leaves:
        if key not in found:
            unnamed += 1
            found[key] = f"leaf{unnamed}"
    named = {}
    for s, (leaf, origin) in origins.items():
        base = found[id(leaf)]
        label = base if leaf.numel() == 1 else base + "_" + "_".join(str(i) for i in origin.index)
        named[s] = (leaf, symbol_named(label), base)
    return named


@lru_cache(maxsize=1024)
def symbol_named(label: str) -> sympy.Symbol:
    """The real symbol shown for a leaf element, e.g. w_0_1."""
    return sympy.Symbol(label, real=True)


def _names_in(namespace: dict, leaves: dict[int, torch.Tensor]) -> dict[int, str]:
    """Names the learner could type for the leaves: x, params[0], model[0].weight."""
    found: dict[int, str] = {}

    def visit(value, label):
        if isinstance(value, torch.Tensor):
            if id(value) in leaves and id(value) not in found:
                found[id(value)] = label
        elif isinstance(value, torch.nn.Module):
            for path, p in value.named_parameters():
                parts = "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in path.split("."))
                visit(p, label + parts)
        elif isinstance(value, (list, tuple)) and len(value) <= 64:
            for i, item in enumerate(value):
                if isinstance(item, torch.Tensor):
                    visit(item, f"{label}[{i}]")
        elif isinstance(value, dict) and len(value) <= 64:
            for k, item in value.items():
                if isinstance(item, torch.Tensor):
                    visit(item, f"{label}[{k!r}]")

    for key, value in list(namespace.items()):
        if not key.startswith("_"):
            visit(value, key)
    return found


def _group_by_leaf(names: dict) -> dict:
    groups: dict = {}
    for s, (leaf, *_) in sorted(names.items(), key=lambda item: str(item[1][1])):
        groups.setdefault(leaf, []).append(s)
    return groups


def _point(recorder, expr: sympy.Expr) -> dict:
    return {s: recorder.symbols[s].value for s in expr.free_symbols if s in recorder.symbols}


def _reproduces(elements: list, tensor: torch.Tensor, recorder) -> tuple[str, dict] | None:
    """The safety net: the formula must give the tensor's own values, or we do not show it."""
    actual = tensor.detach().to(torch.float64).reshape(-1).tolist()
    tol = FLOAT_TOLERANCE_BY_DTYPE.get(tensor.dtype, 1e-4)
    for element, value in zip(elements, actual):
        computed = value_at(element, _point(recorder, element))
        if computed is None or not close(computed, value, tol, tol):
            return problem("does_not_reproduce")
    return None


FLOAT_TOLERANCE_BY_DTYPE = {torch.float64: 1e-9, torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 2e-2}


def _own_backward(recorder, tensor):
    """The last logged backward call from this tensor, as it is now, if any."""
    entry = recorder.backwards.get(tensor)
    return entry if entry is not None and entry.root_version == tensor._version else None


def _show(expr: sympy.Expr, rename: dict) -> str:
    """A formula as the learner reads it: their variable names, floats to 6 digits."""
    expr = expr.xreplace(rename)
    floats = {f: _rounded(f) for f in expr.atoms(sympy.Float)}
    return str(expr.xreplace(floats)) if floats else str(expr)


def _rounded(f: sympy.Float) -> sympy.Expr:
    """6 significant digits; 0.99999998 (float32 noise) reads as 1."""
    value = float(f"{float(f):.6g}")
    return sympy.Integer(int(value)) if value.is_integer() else sympy.Float(value, 6)


def _gradient_value(recorder, formula: sympy.Expr, symbols_of_element: list) -> float | None:
    """d formula / d (one leaf element): the sum over every symbol that element was known by."""
    total = 0.0
    for s in symbols_of_element:
        if s not in formula.free_symbols:
            continue
        value = value_at(derivative(formula, s), _point(recorder, formula))
        if value is None:
            return None
        total += value
    return total


def _leaf_check(recorder, leaf, symbols, names, rename, target, entry, tensor, name) -> dict:
    leaf_name = names[symbols[0]][2]
    by_index: dict[tuple, list] = {}
    for s in symbols:
        by_index.setdefault(recorder.symbols[s].index, []).append(s)
    elements = []
    grad = leaf.grad.detach().to(torch.float64) if leaf.grad is not None else None
    for index, element_symbols in sorted(by_index.items()):
        d = sympy.Add(*(derivative(target, s) for s in element_symbols))
        elements.append({
            "index": index,
            "symbol": str(names[element_symbols[0]][1]),
            "symbolic": _show(d, rename),
            "expected": _gradient_value(recorder, target, element_symbols),
            "grad": float(grad[index]) if grad is not None else None,
        })
    status, note = _grad_status(recorder, leaf, grad, elements, entry, name, leaf_name)
    return {"name": leaf_name, "shape": list(leaf.shape), "grad": None if grad is None else grad.reshape(-1).tolist(),
            "elements": elements, "status": status, **note}


def _grad_status(recorder, leaf, grad, elements, entry, name, leaf_name):
    """What the leaf's .grad says about the derivative: a status and (when needed) a note, as _note's."""
    tol = FLOAT_TOLERANCE_BY_DTYPE.get(leaf.dtype, 1e-4)
    expected = [e["expected"] for e in elements]
    if any(v is None for v in expected):
        return "undefined", _note("undefined")
    shown = ", ".join(f"{v:.6g}" for v in expected)
    names = {"leaf": leaf_name, "name": name, "gives": shown}
    if grad is None:
        return "pending", _note("pending_none", **names)
    current = [e["grad"] for e in elements]
    history = recorder.grad_history.get(leaf) or []
    if entry is None or entry not in history:
        if not any(current):
            return "pending", _note("pending_zero", **names)
        added = ", ".join(f"{g + e:.6g}" for g, e in zip(current, expected))
        return "pending", _note("pending_added", **names, giving=added)
    untraced = _note("untraced", **names, limit=f"{MAX_CALLS:,}")
    if len(history) == 1:
        if all(close(g, e, tol, tol) for g, e in zip(current, expected)):
            return "agree", _note(None)
        if not any(current):
            return "cleared", _note("cleared", **names)
        if recorder.cuts != history[-1].cuts:
            return "untraced", untraced
        return "disagree", _note("grad_differs", **names)
    totals = _history_totals(recorder, history, leaf, elements)
    names["calls"] = str(len(history))
    if totals is None:
        return "accumulated", _note("accumulated_partly_traced", **names)
    if not any(current) and any(totals):
        return "cleared", _note("cleared", **names)
    agree = all(close(g, t, tol, tol) for g, t in zip(current, totals))
    if not agree and recorder.cuts != history[-1].cuts:
        return "untraced", untraced
    return ("accumulated" if agree else "disagree"), _note("accumulated", **names,
                                                           total=", ".join(f"{t:.6g}" for t in totals))


def _history_totals(recorder, history, leaf, elements) -> list[float] | None:
    """What .grad should hold after every logged backward since it was last cleared."""
    from gradrepl.kernel.symbolic.formula import to_sympy

    if any(entry.formula is None for entry in history):
        return None
    formulas = [to_sympy(entry.formula, recorder) for entry in history]
    totals = []
    for element in elements:
        total = 0.0
        for formula in formulas:
            symbols = [s for s in formula.free_symbols if s in recorder.symbols
                       and recorder.symbols[s].leaf() is leaf and recorder.symbols[s].index == element["index"]]
            value = _gradient_value(recorder, formula, symbols)
            if value is None:
                return None
            total += value
        totals.append(total)
    return totals
