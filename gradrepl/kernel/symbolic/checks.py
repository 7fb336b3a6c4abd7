"""The symbolic checks the kernel's requests call (%check, `gradrepl check`, derive answers): every
function returns a JSON-able dict (or text).

kernel/requests.py calls these; frontends only see their results, as data (views/check.py words
them). Learner input never raises out of here: bad input comes back as
``{"error": {"message", "column"}}``. Each function imports sympy and torch through the modules it
uses, on first call.
"""

from __future__ import annotations

import contextlib


def check_expression(expr: str, point: dict[str, float]) -> dict:
    """Expression mode (`gradrepl check`): symbolic vs autograd vs central difference at a point; without
    a point, the symbolic derivatives alone, with sympy alone (as derivatives() gives them)."""
    from gradrepl.kernel.symbolic.derivatives import symbolic_only

    parsed, refused = _read(expr, point)
    if refused:
        return refused
    if not point and parsed.variables:  # no --at: nothing to compare yet, so no torch
        return symbolic_only(parsed)
    from gradrepl.kernel.symbolic import crosscheck

    try:
        return crosscheck.check(parsed, point)
    except crosscheck.PointError as exc:
        return _error(exc.code, **exc.names)


def derivatives(expr: str) -> dict:
    """The symbolic derivatives alone, without torch: what the sympy-only kernel answers (a constant's
    are none: its `needs_point` is empty, and the full kernel checks it)."""
    from gradrepl.kernel.symbolic.derivatives import symbolic_only

    parsed, refused = _read(expr, {})
    return refused or symbolic_only(parsed)


def _read(expr: str, point: dict) -> tuple:
    """The parsed expression, or the error a check replies with (learner text only through the safe reader)."""
    from gradrepl.kernel.symbolic.expr import ExprError, parse

    if not isinstance(expr, str):
        return None, _error("expression_not_text")
    if not isinstance(point, dict):
        return None, _error("point_not_mapping")
    try:
        return parse(expr), None
    except ExprError as exc:
        return None, {"error": exc.to_json()}


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
        return {"error": {"code": "key_does_not_parse", "names": {}, "column": None, "key": exc.to_json()}}
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
    from gradrepl.kernel.symbolic.limits import TOO_LARGE

    try:
        result = check_live(namespace, name, resolve)
    except RecursionError:  # sympy recurses per level of a formula; the shadow's caps should prevent this
        result = {"name": name, "kind": "tensor", "problem_code": TOO_LARGE[0], "problem_names": None}
    return result


def _error(code: str, **names) -> dict:
    """Input the check cannot take, as a code and names (views/remarks.PARSE_ERRORS words it)."""
    return {"error": {"code": code, "names": names, "column": None}}
