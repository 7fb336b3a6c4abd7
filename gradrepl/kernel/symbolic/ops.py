"""The symbolic features as kernel ops: every function returns a JSON-able dict (or text).

The kernel worker calls these; frontends only see their results. Learner input
never raises out of here: bad input comes back as ``{"error": {"message", "column"}}``.

render_check() is pure text formatting and imports nothing heavy, so it is the
one function here a frontend may call; everything else imports sympy and torch
through the modules it uses, on first call.
"""

from __future__ import annotations

import contextlib
import math

DISPLAY_LIMIT = 600  # characters of a formula shown before it is cut


def check_expression(expr: str, point: dict[str, float]) -> dict:
    """Expression mode (`gradrepl check`): symbolic vs autograd vs central difference at a point."""
    from gradrepl.kernel.symbolic import crosscheck
    from gradrepl.kernel.symbolic.expr import ExprError, parse

    if not isinstance(expr, str):
        return _error("the expression must be text")
    if not isinstance(point, dict):
        return _error("the point must map variable names to numbers")
    try:
        return crosscheck.check(parse(expr), point)
    except ExprError as exc:
        return {"error": exc.to_json()}
    except crosscheck.PointError as exc:
        return _error(str(exc))


def equivalent(answer: str, key: str) -> dict:
    """Whether two formulas are the same function, for lessons' `derive` questions."""
    from gradrepl.kernel.symbolic.crosscheck import same_function
    from gradrepl.kernel.symbolic.expr import ExprError, parse

    try:
        parsed_answer = parse(answer)
    except ExprError as exc:
        return {"error": exc.to_json()}
    try:
        parsed_key = parse(key)
    except ExprError as exc:
        return {"error": {"message": f"the answer key does not parse: {exc}", "column": None}}
    return {"equivalent": same_function(parsed_answer.expr, parsed_key.expr)}


@contextlib.contextmanager
def recording():
    """Record symbolic shadows of small tensors while learner code runs (the worker wraps each step)."""
    from gradrepl.kernel.symbolic.shadow import ShadowMode

    with ShadowMode() as mode:
        yield mode


def check_tensor(namespace: dict, name: str, resolve) -> dict:
    """`%check NAME`: the tensor's formula, its symbolic gradient per leaf, and what .grad holds."""
    from gradrepl.kernel.symbolic.crosscheck import check_live
    from gradrepl.kernel.symbolic.shadow import TOO_LARGE

    try:
        result = check_live(namespace, name, resolve)
    except RecursionError:  # sympy recurses per level of a formula; the shadow's caps should prevent this
        result = {"name": name, "kind": "tensor", "problem": TOO_LARGE}
    if "error" not in result:
        result["text"] = render_check(result)
    return result


def _error(message: str, column: int | None = None) -> dict:
    return {"error": {"message": message, "column": column}}


# -- text ----------------------------------------------------------------------------

def render_check(result: dict) -> str:
    """Human text for a check result: an aligned table, then notes in words."""
    if "error" in result:
        error = result["error"]
        where = f" (column {error['column']})" if error.get("column") else ""
        return f"error: {error['message']}{where}"
    if "grads" in result:
        return _render_expression(result)
    return _render_tensor(result)


def _render_expression(result: dict) -> str:
    point = ", ".join(f"{k} = {_num(v)}" for k, v in result["point"].items())
    lines = [f"f = {_cut(result['formula'])}" + (f"   at {point}" if point else "")]
    if result.get("value") is None and result["point"]:
        lines.append("f is not a finite real number at this point")
    elif result["point"]:
        lines.append(f"f = {_num(result['value'])} there")
    rows = [("", "symbolic", "value", "autograd", "central diff", "")]
    notes = []
    for var, g in result["grads"].items():
        rows.append((f"d/d{var}", _cut(g["symbolic"], 40), _num(g["symbolic_value"]), _num(g["autograd"]),
                     _num(g["numeric"]), _verdict(g["status"])))
        if len(g["symbolic"]) > 40:
            notes.append(f"d/d{var} = {_cut(g['symbolic'])}")
        if g.get("note"):
            notes.append(f"{var}: {g['note']}")
    if len(rows) > 1:
        lines.append("")
        lines.extend(_table(rows))
    else:
        lines.append("no variables: nothing to differentiate")
    lines.extend(notes)
    tol = result.get("tolerance")
    if tol and len(rows) > 1:
        lines.append(f"agree = within {tol['autograd']['rtol']:g}·|value| + {tol['autograd']['atol']:g} (autograd), "
                     f"{tol['numeric']['rtol']:g}·|value| + {tol['numeric']['atol']:g} (central difference, "
                     f"h = {tol['numeric']['step']:g})")
    return "\n".join(lines)


def _render_tensor(result: dict) -> str:
    name = result["name"]
    if result.get("problem"):
        return f"{name}: {result['problem']}"
    formula = result["formula"]
    lines = []
    if isinstance(formula, list):
        lines.append(f"{name} = [{', '.join(_cut(f, 80) for f in formula)}]")
    else:
        lines.append(f"{name} = {_cut(formula)}")
    if result.get("of"):
        lines.append(f"gradients of {result['of']}")
    rows = [("leaf", "∂/∂leaf", "expected", ".grad", "")]
    for leaf in result["leaves"]:
        for element in leaf["elements"]:
            rows.append((element["symbol"], _cut(element["symbolic"], 40), _num(element["expected"]),
                         _num(element["grad"]) if leaf["grad"] is not None else "None", _verdict(leaf["status"])))
    lines.append("")
    lines.extend(_table(rows))
    for leaf in result["leaves"]:
        if leaf.get("note"):
            lines.append(f"{leaf['name']}: {leaf['note']}")
    lines.extend(result.get("notes", []))
    return "\n".join(lines)


def _verdict(status: str | None) -> str:
    return {"agree": "✓", "disagree": "✗ differs", "undefined": "no derivative here", "pending": "after backward",
            "accumulated": "✓ accumulated", "cleared": "cleared",
            "untraced": "not checked"}.get(status or "", status or "")


def _table(rows: list[tuple]) -> list[str]:
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _num(value) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.10g}"


def _cut(text: str, limit: int = DISPLAY_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
