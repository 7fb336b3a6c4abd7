"""A symbolic check (`gradrepl check`, %check, the details view) as an aligned table and notes in words."""

from __future__ import annotations

from gradrepl.views.numbers import number_text, shape_text
from gradrepl.views.remarks import worded_parse_error
from gradrepl.views.templates import filled
from gradrepl.views.tables import aligned

DISPLAY_LIMIT = 600  # characters of a formula shown before it is cut

# A check's notes: the kernel sends a code and the names (kernel/symbolic/crosscheck.py `_note`).
NOTES = {
    "not_finite": "the expression is not a finite real number here (in float64)",
    "corner_no_derivative": "{function} has a corner here: the derivative does not exist (autograd uses 0)",
    "undefined": "the derivative is infinite or undefined at this point",
    "corner_taken_as_zero": "{function} has a corner here; like autograd, its slope there is taken as 0",
    "autograd_not_finite": "autograd gives inf or nan here: float64 overflowed (or divided 0 by 0) on the way",
    "autograd_differs": "autograd differs from the symbolic derivative",
    "central_difference_off": "the central difference is off (step {step}): the function changes sharply near "
                              "this point",
    "pending_none": "{leaf}.grad is None; {name}.backward() will make it {gives}",
    "pending_zero": "{leaf}.grad is zero; {name}.backward() will make it {gives}",
    "pending_added": "{leaf}.grad already holds gradients from other backward calls; {name}.backward() would add "
                     "{gives} to them, giving {giving}",
    "untraced": "{leaf}.grad may also hold gradients from a step too long to trace (more than {limit} torch "
                "calls), so it cannot be compared; {name} alone gives {gives}",
    "cleared": "{leaf}.grad was cleared after {name}.backward(), which gave {gives}",
    "grad_differs": "{leaf}.grad differs from the derivative",
    "accumulated_partly_traced": "{leaf}.grad holds gradients accumulated over {calls} backward calls since it "
                                 "was last cleared: {name} alone gives {gives}; some of those calls were not traced",
    "accumulated": "{leaf}.grad holds gradients accumulated over {calls} backward calls since it was last cleared: "
                   "{name} alone gives {gives}, the sum is {total}. Clear it (.grad = None or .zero_()) before "
                   "each backward",
    "backward_not_called": "{name}.backward() has not been called: the expected column is what it would give",
}


# Why a tensor has no formula (kernel/symbolic/limits.py `problem`); {what} is made from the shape.
PROBLEMS = {
    "too_large": "too large to derive symbolically",
    "too_long": "too long to check: it was made after the first {calls} torch calls of a step, and the rest of a "
                "step that long is not traced (run fewer iterations in one step to %check it)",
    "constant": "does not require grad: to autograd it is a constant, with no gradient to check",
    "leaf": "is a leaf: its formula is itself. %check a tensor computed from it",
    "does_not_reproduce": "the recorded formula does not reproduce its value (it was changed by something the "
                          "shadow does not follow), so no formula is shown",
    "changed_untraced": "{what} was changed by an operation that was not traced",
    "changed_under_no_grad": "{what} was changed in place under torch.no_grad(), so autograd's graph no longer "
                             "describes its value",
    "made_untraced": "{what} was made by {by}, which was not traced",
    "not_traced": "{what} is not traced",
    "constant_too_large": "a constant with {elements} elements is too large to trace",
    "leaf_too_large": "a leaf with {elements} elements (more than {limit}) is not traced",
    "intermediate_too_large": "an intermediate with {elements} elements (more than {limit}) is not traced",
    "could_not_trace": "{op} could not be traced ({error})",
    "shapes_untraced": "{op} is not traced symbolically for these shapes",
    "argument_untraced": "{op} with a {type} argument is not traced symbolically",
    "rounding_untraced": "{op} with rounding_mode is not traced symbolically",
    "op_untraced": "{op} is not traced symbolically",
}


def problem_words(code: str | None, names: dict | None) -> str | None:
    """Why a tensor has no formula, in words (None for a code this frontend does not know)."""
    names = dict(names or {})
    if "shape" in names:
        names["what"] = f"a tensor of shape {shape_text(names['shape'])}" if names["shape"] else "a scalar"
    return filled(PROBLEMS, code, names)


def note_words(code: str | None, names: dict | None) -> str | None:
    """A check note's words, or None for no note (or one this frontend does not know)."""
    return filled(NOTES, code, names)


def word_check(result: dict) -> dict:
    """The kernel's check data with its notes in words ("note" beside each gradient and leaf, "notes"),
    where the session receives it, so `check --json`, %check and the details view say the same."""
    if "error" in result:  # an expression or point it cannot take, as the kernel's code
        result["error"] = worded_parse_error(result["error"])
    for entry in [*result.get("grads", {}).values(), *result.get("leaves", [])]:
        entry["note"] = note_words(entry.get("note_code"), entry.get("note_names"))
    if "problem_code" in result:
        result["problem"] = problem_words(result["problem_code"], result.get("problem_names"))
    if "remarks" in result:
        result["notes"] = [words for remark in result["remarks"]
                           if (words := note_words(remark.get("note_code"), remark.get("note_names")))]
    return result


def render_check(result: dict, width: int | None = None) -> str:
    """Human text for a check result: an aligned table, then notes in words. With a `width`, every
    table row fits on one line: the symbolic column is cut with … (the formula and notes say it whole)."""
    word_check(result)  # already worded where a session received it; the notebook's comes straight from inspection
    if "error" in result:
        error = worded_parse_error(result["error"])
        where = f" (column {error['column']})" if error.get("column") else ""
        return f"error: {error['message']}{where}"
    if "grads" in result:
        return _render_expression(result, width)
    return _render_tensor(result, width)


def _render_expression(result: dict, width: int | None) -> str:
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
        lines.extend(aligned(rows, width, flexible=(1,)))
    else:
        lines.append("no variables: nothing to differentiate")
    lines.extend(notes)
    tol = result.get("tolerance")
    if tol and len(rows) > 1:
        lines.append(f"agree = within {tol['autograd']['rtol']:g}·|value| + {tol['autograd']['atol']:g} (autograd), "
                     f"{tol['numeric']['rtol']:g}·|value| + {tol['numeric']['atol']:g} (central difference, "
                     f"h = {tol['numeric']['step']:g})")
    return "\n".join(lines)


def _render_tensor(result: dict, width: int | None) -> str:
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
    lines.extend(aligned(rows, width, flexible=(1,)))
    for leaf in result["leaves"]:
        if leaf.get("note"):
            lines.append(f"{leaf['name']}: {leaf['note']}")
    lines.extend(result.get("notes", []))
    return "\n".join(lines)


def _verdict(status: str | None) -> str:
    return {"agree": "✓", "disagree": "✗ differs", "undefined": "no derivative here", "pending": "after backward",
            "accumulated": "✓ accumulated", "cleared": "cleared",
            "untraced": "not checked"}.get(status or "", status or "")


def _num(value) -> str:
    """A check's numbers keep ten digits: a disagreement may hide in the sixth; None is a value that does not exist."""
    return "undefined" if value is None else number_text(value, digits=10)


def _cut(text: str, limit: int = DISPLAY_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
