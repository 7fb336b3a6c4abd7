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

from gradrepl.kernel.symbolic.expr import Parsed, relu, sigmoid
from gradrepl.kernel.symbolic.shadow import MAX_CALLS

# symbolic vs autograd: both exact up to float64 rounding
RTOL, ATOL = 1e-7, 1e-9
# symbolic vs central difference: the difference quotient itself has an error of about h**2
NUMERIC_RTOL, NUMERIC_ATOL = 1e-5, 1e-6
STEP = 1e-5  # h, scaled by max(1, |x|)
SIMPLIFY_LIMIT = 200  # count_ops above which the derivative is shown as sympy.diff gives it


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
    if auto is None:
        return {"agree": False, "status": "disagree", "exists": True,
                "note": "autograd gives inf or nan here: float64 overflowed (or divided 0 by 0) on the way"}
    if not close(symbolic, auto, RTOL, ATOL):
        return {"agree": False, "status": "disagree", "exists": True,
                "note": "autograd differs from the symbolic derivative"}
    if not kinks and (numeric is None or not close(symbolic, numeric, NUMERIC_RTOL, NUMERIC_ATOL)):
        # calculus and autograd agree; the difference quotient is the approximation that failed
        note = f"the central difference is off (step {STEP:g}): the function changes sharply near this point"
    return {"agree": True, "status": "agree", "exists": True, "note": note}


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

    tensor = resolve(name) if name else None
    if not isinstance(tensor, torch.Tensor):
        what = "no tensor" if tensor is None else f"{type(tensor).__name__}, not a tensor"
        return {"error": {"message": f"{name or '(nothing)'}: {what}; %check takes the name of a tensor", "column": None}}
    base = {"name": name, "kind": "tensor", "shape": list(tensor.shape)}
    if not tensor.requires_grad:
        return {**base, "problem": "does not require grad: to autograd it is a constant, with no gradient to check"}
    if tensor.grad_fn is None:
        return {**base, "problem": "is a leaf: its formula is itself. %check a tensor computed from it"}
    recorder = shadows.RECORDER
    shadow = recorder.shadow_of(tensor)
    if shadow.formula is None:
        return {**base, "problem": shadow.problem}
    elements = [shadows.to_sympy(f, recorder) for f in shadow.formula.reshape(-1).tolist()]
    names = _leaf_names(namespace, recorder, elements)
    rename = {s: named[1] for s, named in names.items()}
    mismatch = _reproduces(elements, tensor, recorder)
    if mismatch:
        return {**base, "problem": mismatch}
    entry = _own_backward(recorder, tensor)
    scalar = tensor.numel() == 1
    target = shadows.to_sympy(entry.formula, recorder) if entry is not None and entry.formula is not None \
        else sympy.Add(*elements)
    result = {
        **base,
        "formula": _show(elements[0], rename) if scalar and tensor.dim() == 0 else [_show(e, rename) for e in elements],
        "of": None if scalar else (f"{name}.backward(gradient)" if entry is not None else
                                   f"{name}.sum() (what {name}.backward(torch.ones_like({name})) gives)"),
        "leaves": [],
        "notes": [],
    }
    for leaf, symbols in _group_by_leaf(names).items():
        result["leaves"].append(_leaf_check(recorder, leaf, symbols, names, rename, target, entry, tensor, name))
    statuses = [leaf["status"] for leaf in result["leaves"]]
    result["agree"] = False if "disagree" in statuses else (True if statuses and all(
        s in ("agree", "accumulated") for s in statuses) else None)
    if entry is None and recorder.shadows.get(tensor) is not None:
        result["notes"].append(f"{name}.backward() has not been called: the expected column is what it would give")
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


def _reproduces(elements: list, tensor: torch.Tensor, recorder) -> str | None:
    """The safety net: the formula must give the tensor's own values, or we do not show it."""
    actual = tensor.detach().to(torch.float64).reshape(-1).tolist()
    tol = FLOAT_TOLERANCE_BY_DTYPE.get(tensor.dtype, 1e-4)
    for element, value in zip(elements, actual):
        computed = value_at(element, _point(recorder, element))
        if computed is None or not close(computed, value, tol, tol):
            return ("the recorded formula does not reproduce its value (it was changed by something "
                    "the shadow does not follow), so no formula is shown")
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
            "elements": elements, "status": status, "note": note}


def _grad_status(recorder, leaf, grad, elements, entry, name, leaf_name):
    """What the leaf's .grad says about the derivative, in one status and (when needed) words."""
    tol = FLOAT_TOLERANCE_BY_DTYPE.get(leaf.dtype, 1e-4)
    expected = [e["expected"] for e in elements]
    if any(v is None for v in expected):
        return "undefined", "the derivative is infinite or undefined at this point"
    shown = ", ".join(f"{v:.6g}" for v in expected)
    if grad is None:
        return "pending", f"{leaf_name}.grad is None; {name}.backward() will make it {shown}"
    current = [e["grad"] for e in elements]
    history = recorder.grad_history.get(leaf) or []
    if entry is None or entry not in history:
        if not any(current):
            return "pending", f"{leaf_name}.grad is zero; {name}.backward() will make it {shown}"
        added = ", ".join(f"{g + e:.6g}" for g, e in zip(current, expected))
        return "pending", (f"{leaf_name}.grad already holds gradients from other backward calls; "
                           f"{name}.backward() would add {shown} to them, giving {added}")
    untraced = (f"{leaf_name}.grad may also hold gradients from a step too long to trace (more than "
                f"{MAX_CALLS:,} torch calls), so it cannot be compared; {name} alone gives {shown}")
    if len(history) == 1:
        if all(close(g, e, tol, tol) for g, e in zip(current, expected)):
            return "agree", None
        if not any(current):
            return "cleared", f"{leaf_name}.grad was cleared after {name}.backward(), which gave {shown}"
        if recorder.cuts != history[-1].cuts:
            return "untraced", untraced
        return "disagree", f"{leaf_name}.grad differs from the derivative"
    totals = _history_totals(recorder, history, leaf, elements)
    words = (f"{leaf_name}.grad holds gradients accumulated over {len(history)} backward calls since it was "
             f"last cleared: {name} alone gives {shown}")
    if totals is None:
        return "accumulated", words + "; some of those calls were not traced"
    if not any(current) and any(totals):
        return "cleared", f"{leaf_name}.grad was cleared after {name}.backward(), which gave {shown}"
    agree = all(close(g, t, tol, tol) for g, t in zip(current, totals))
    if not agree and recorder.cuts != history[-1].cuts:
        return "untraced", untraced
    words += f", the sum is {', '.join(f'{t:.6g}' for t in totals)}. Clear it (.grad = None or .zero_()) before each backward"
    return ("accumulated" if agree else "disagree"), words


def _history_totals(recorder, history, leaf, elements) -> list[float] | None:
    """What .grad should hold after every logged backward since it was last cleared."""
    from gradrepl.kernel.symbolic.shadow import to_sympy

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
