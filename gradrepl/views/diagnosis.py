"""Autograd's errors and warnings, and silent accumulation, explained in plain words.

The kernel recognises what happened (kernel/inspect/diagnose.py: torch's own message text, checked
against torch 2.13 by the tests) and sends a diagnosis: a code, with the tensors' names and numbers
where it has them (an ErrorInfo's "diagnosis", a step's "diagnoses"); the words are here. A step's
result gets them once, where the session receives it (`explain_step`), so the console, `run`, `play`
and --plain say the same.
"""

from __future__ import annotations

import re

from gradrepl.views.numbers import number_text, shape_text
from gradrepl.views.refusals import REFUSALS, refusal_words
from gradrepl.views.templates import filled, shaped
from gradrepl.views.why import NOT_LEAF, grad_none_words

ERRORS = {
    "backward_of_non_scalar":
        "backward() starts from a single number (a scalar), and this non-scalar tensor holds several values, "
        "so autograd does not know which gradient to start the graph with. "
        "Reduce it to a scalar first (call .sum() or .mean() on it, then .backward()), "
        "or pass backward() a gradient of its shape (torch.ones_like of it).",
    "graph_freed":
        "The graph was freed: an earlier backward() through it, the last one without retain_graph=True, freed "
        "the values this graph saved, so backward cannot walk this graph again. Pass retain_graph=True to "
        "every backward() but the last if you need several, or run the forward computation again to build a "
        "fresh graph.",
    "integer_requires_grad":
        "Gradients only exist for floating point (or complex) dtypes; this tensor's dtype is an integer type. "
        "Create it with a float dtype, e.g. torch.tensor([1.0, 2.0], requires_grad=True) "
        "or t.float().requires_grad_().",
    "integer_requires_grad_":
        "Gradients only exist for floating point dtypes; this tensor's dtype is an integer type. "
        "Convert it first: t = t.float().requires_grad_().",
    "flag_of_non_leaf":
        "This tensor is not a leaf: it was computed from others (it has a grad_fn), so autograd decides its "
        "requires_grad from its inputs, and only a leaf's flag can be switched off by hand (switching a non-leaf's on is allowed and changes nothing). "
        "For the same values cut off from the graph, use the tensor's .detach() (it shares the data, nothing "
        "is copied, and has requires_grad=False); "
        "to stop gradients at the start, set requires_grad on the leaf it was computed from.",
    "in_place_into_leaf_view":
        "This writes in place into part of a leaf that requires grad (like x[0] = 5), which would change "
        "the value autograd recorded. Do the update inside `with torch.no_grad():`, "
        "or build a new tensor with an out-of-place op (e.g. torch.where or x * mask).",
    "in_place_on_leaf":
        "An in-place op (add_, x += 1, x[0] = ...) on a leaf that requires grad would overwrite the value autograd "
        "recorded. For a parameter update wrap it in `with torch.no_grad():`; otherwise use the out-of-place op "
        "(x = x + 1) to make a new tensor.",
    "saved_tensor_modified":
        "A tensor that an earlier op saved for backward was changed by an in-place op afterwards. Every tensor "
        "has a version counter that in-place ops bump, and backward found a newer version than the one saved. "
        "Use the out-of-place form (y = y * 2 instead of y.mul_(2)), or modify a copy: y = y.clone() before "
        "changing it.",
    "backward_without_graph":
        "backward() was called on a tensor with no graph behind it: it has no grad_fn, because nothing it was "
        "computed from requires grad, or it was made under torch.no_grad() / with .detach(). Set "
        "requires_grad=True on the leaf inputs before computing, outside no_grad, and call backward() "
        "on that result.",
    "grad_of_untracked_input":
        "torch.autograd.grad was asked for the gradient of an input that does not require grad, so the graph "
        "never recorded it. Only pass inputs (usually leaves) created with requires_grad=True that the output "
        "was computed from.",
    "gradient_shape_mismatch":
        "The gradient passed to backward() must have exactly the shape of the tensor you call it on; "
        "torch.ones_like(y) always fits.",
    "inference_tensor_requires_grad":
        "This tensor was made inside torch.inference_mode(), which marks it as never needing gradients. "
        "Make a normal copy with t.clone() (outside inference mode), or use torch.no_grad() instead of "
        "inference_mode.",
    "inference_tensor_in_place":
        "Tensors made inside torch.inference_mode() cannot be changed by an in-place op outside it. "
        "Work on a normal copy: t = t.clone().",
    "inference_tensor_saved":
        "A tensor made inside torch.inference_mode() was used in a computation the graph records for backward. "
        "Use t.clone() to get a normal tensor, or create it under torch.no_grad() instead.",
}

# torch warns without naming the tensor: views/why.py's words for a tensor with no name
WARNINGS = {"grad_of_non_leaf": grad_none_words(NOT_LEAF, None) + "."}


_IN_PLACE_FIX = ("Use the out-of-place form ({t} = {t} + 1 instead of {t}.add_(1)), or change a copy made first: "
                 "{t} = {t}.clone().")
# The op that ran is known: its own out-of-place form ({fix}: views' out_of_place).
_THIS_FIX = "Use the out-of-place form ({fix}), or change a copy made first: {t} = {t}.clone()."
_AUGMENTED = re.compile(r"^([A-Za-z_][\w.]*)\s*(\*\*|//|>>|<<|[-+*/@%&|^])=\s*(.+)$")
_METHOD = re.compile(r"^([A-Za-z_][\w.]*)\.([a-z]\w*?)_\((.*)\)$")

# Causes that name the learner's tensors: the kernel sends the code and the names it found
# (kernel/inspect/diagnose.py's finders), one template per code.
CAUSE_WORDS = {
    "backward_of_non_scalar":
        "backward() starts from a single number (a scalar), and {t} holds several values, so autograd does not "
        "know which gradient to start the graph with. Reduce it to a scalar first, e.g. {t}.sum().backward() "
        "or {t}.mean().backward(), or pass a gradient of its shape: {t}.backward(torch.ones_like({t})).",
    "backward_without_graph":
        "backward() was called on {t}, which has no graph behind it: {t} has no grad_fn, because nothing "
        "{t} was computed from requires grad, or it was made under torch.no_grad() / with .detach(). Set "
        "requires_grad=True on the leaf tensors {t} was computed from, outside no_grad, compute {t} again and "
        "call {t}.backward().",
    "grad_of_unrecorded_grad":
        "torch.autograd.grad was asked to differentiate {t}, which has no grad_fn: {t} is itself a gradient, "
        "and the torch.autograd.grad call that made it did not record its own backward pass. Pass "
        "create_graph=True to that call (and to each one whose result is differentiated again); the leaves "
        "requiring grad is not enough. torch.func transforms need no flag.",
    "grad_without_graph":
        "torch.autograd.grad was asked to differentiate {t}, which has no graph behind it: it has no grad_fn, "
        "because nothing it was computed from requires grad, it was made under torch.no_grad() / with "
        ".detach(), or it is a gradient from a torch.autograd.grad call without create_graph=True. Compute it "
        "from leaves created with requires_grad=True, outside no_grad (and pass create_graph=True to a call "
        "whose result is differentiated again).",
    "grad_not_tensor":
        "{t}.grad holds a gradient, a tensor of {t}'s shape, or None, never a number: backward() adds into it. "
        "To clear it write {t}.grad = None (or {t}.grad.zero_(), or optimizer.zero_grad()); to set it, "
        "{t}.grad = torch.zeros_like({t}).",
    "grad_shape":
        "{fn}.backward returns one gradient per input of forward, each of that input's shape: the gradient at "
        "index {index} has shape {got}, but its input has shape {want}. Return a gradient shaped like the input "
        "(sum or reshape what you computed to shape {want}).",
    "grad_count":
        "{fn}.backward must return one gradient per argument of forward (ctx aside): {expected} here, and it "
        "returned {got}. Return a tuple with an entry for each, None for an argument that needs no gradient.",
    "hook_no_grad":
        "{t} does not require grad, so no gradient ever flows through it and a hook on it would never run. "
        "Set requires_grad=True on {t} (a leaf: {t}.requires_grad_()) before computing from it, or hook a "
        "result computed from a tensor that requires grad.",
    "gradcheck":
        "gradcheck compared the gradient your backward computes (analytical) with one it measured by nudging "
        "{inp} a little (numerical), and they differ for output {output}: the backward formula is wrong for "
        "{inp}. Check it against the derivative of forward (for x ** 2 it is 2 * x * grad); gradcheck also "
        "needs double precision inputs (dtype=torch.double).",
    "grad_none_yet":
        "{t}.grad is None: no backward() has reached {t} yet, or the loss was not computed from it. Call "
        "loss.backward() first; {t}.grad.{attr} works after that.",
    "grad_none_no_grad":
        "{t}.grad is None: {t} does not require grad, so backward() never computes a gradient for it. Create "
        "it with requires_grad=True (or call {t}.requires_grad_()) before computing the loss from it.",
    "grad_none_non_leaf":
        "{t}.grad is None: {t} is not a leaf (it was computed, it has a grad_fn) and backward() fills .grad only "
        "for leaves. Call {t}.retain_grad() before backward() to keep its gradient, or read the .grad of the "
        "leaf it was computed from.",
    "matmul_linear":
        "{layer} is an nn.Linear with in_features={inner}: it takes inputs whose last size is {inner}, but {a} "
        "is {rows}×{cols} (last size {cols}). Make the layer nn.Linear({cols}, ...) or give it inputs of "
        "width {inner}.",
    "matmul":
        "A matrix product needs the inner sizes to agree: {a} is {rows}×{cols} and {b} is {inner}×{out}, so "
        "{cols} columns meet {inner} rows. Transpose one ({b_t}), reshape, or multiply tensors whose inner "
        "sizes match.",
    "inplace_saved":
        "{t} was saved for backward at version {want} (an op of its graph needs that value for its gradient); then `{changer}` (step {step}, "
        "line {line}) changed it in place, which bumped its version counter to version {got}, so backward would "
        "compute with a value it never saw. " + _THIS_FIX,
    "inplace_saved_in_step":
        "{t} was saved for backward at version {want} (an op of its graph needs that value for its gradient); {changer} then changed it in "
        "place, which bumped its version counter to version {got}, so backward would compute with a value it "
        "never saw. " + _THIS_FIX,
    "inplace_saved_op_unknown":
        "{t} was saved for backward at version {want} (an op of its graph needs that value for its gradient); an in-place op ({t}.add_(), "
        "{t} += 1, {t}[0] = ...) then changed it in place, which bumped its version counter to version {got}, "
        "so backward would compute with a value it never saw. " + _IN_PLACE_FIX,
}


# What a cause calls a tensor the kernel could not name (an expression, not a name: names[field] is None).
UNNAMED = {"matmul": {"a": "the left operand", "b": "the right operand"}, "matmul_linear": {"a": "its input"}}


def out_of_place(changer: str, tensor: str) -> str:
    """The out-of-place form of the in-place statement that ran, in words: `s = s.mul(2) instead of
    s.mul_(2)`, `s = s * 2 instead of s *= 2`; for another form (s[0] = 1), the general advice."""
    text = changer.strip()
    method, augmented = _METHOD.match(text), _AUGMENTED.match(text)
    if method and method.group(1) == tensor:
        return f"{tensor} = {tensor}.{method.group(2)}({method.group(3)}) instead of {text}"
    if augmented and augmented.group(1) == tensor:
        return f"{tensor} = {tensor} {augmented.group(2)} {augmented.group(3)} instead of {text}"
    return f"an operation that makes a new tensor instead of {text}"


def _cause_names(code: str, names: dict) -> dict:
    """The kernel's names with the words for those it could not know, and the few derived from them."""
    given = shaped(names)
    names = {**given, **{field: words for field, words in UNNAMED.get(code, {}).items() if given.get(field) is None}}
    if code in ("inplace_saved", "inplace_saved_in_step") and given.get("changer") and given.get("t"):
        names["fix"] = out_of_place(str(given["changer"]), str(given["t"]))
    if code == "matmul":  # the operand to transpose: the right one, by its name where the kernel knew it
        known = given.get("b") or given.get("a")
        names["b_t"] = f"{known}.T" if known else ".T"
    return names


def error_words(code: str | None, names: dict | None = None) -> str | None:
    """The words for an error's diagnosis code (with the names the kernel found, for CAUSE_WORDS), or
    None for a code this frontend does not know."""
    if code in REFUSALS:
        return refusal_words(code, names)
    if code in CAUSE_WORDS and names:
        return filled(CAUSE_WORDS, code, _cause_names(code, names))
    return ERRORS.get(code) if code else None


def warning_words(code: str | None) -> str | None:
    return WARNINGS.get(code) if code else None


def _grad_seen(seen: dict | None) -> str:
    """A gradient as the watch saw it: its one number, or its norm."""
    if seen is None:
        return "nothing"
    if "value" in seen:
        return number_text(seen["value"], digits=6)
    return f"a gradient of norm {number_text(seen.get('norm'))}"


def accumulation_words(diagnosis: dict) -> str:
    """A backward that added into a .grad that already held a non-zero gradient."""
    leaves = diagnosis.get("leaves") or []
    more = int(diagnosis.get("more") or 0)
    if len(leaves) == 1 and not more:
        leaf = leaves[0]
        name = leaf.get("name")
        grad = f"{name}.grad" if name else f"the .grad of an unnamed leaf of shape {shape_text(leaf.get('shape'))}"
        zero = f"{name}.grad.zero_()" if name else "t.grad.zero_()"
        held, now = leaf.get("held"), leaf.get("now")
        if held is not None and "value" in held and held == now:  # (z * 0).backward(): it added 0
            cleared = f"{name}.grad = None" if name else "t.grad = None"
            return (f"this backward added 0 to {grad} (its gradient there is zero), so it still holds "
                    f"{_grad_seen(now)}: backward adds into .grad and never resets it. To clear it, use "
                    f"{zero} or {cleared} (optimizer.zero_grad() for a model's parameters).")
        return (f"{grad} already held {_grad_seen(leaf.get('held'))} before this backward, and now holds "
                f"{_grad_seen(leaf.get('now'))}: gradients accumulate (add up) across backward calls. "
                f"Zero them with {zero} or optimizer.zero_grad() before each backward.")
    labels = [f"{leaf['name']}.grad" if leaf.get("name") else
              f"an unnamed leaf's .grad ({shape_text(leaf.get('shape'))})" for leaf in leaves]
    shown = ", ".join(labels) + (f" and {more} more" if more else "")
    return (f"{shown} already held non-zero gradients before this backward: "
            "gradients accumulate (add up) across backward calls. "
            "Zero them with optimizer.zero_grad() (or t.grad.zero_() for each) before each backward.")


TRANSFORM_NO_GRAD = ("functional transform: nothing was written to .grad. torch.func's grad, vjp, jacrev "
                     "and jvp return derivatives as values; only backward() adds into .grad.")


def explain_error(error) -> None:
    """An ErrorInfo's explanation from its diagnosis (an autograd cause, or what the sandbox or a limit
    refused), unless the session already said why (a step timeout, a lost kernel)."""
    if error is not None and not error.explanation:
        error.explanation = error_words(error.diagnosis, error.diagnosis_names)


def explain_step(result, diagnoses: list[dict]) -> None:
    """A step's diagnoses (the kernel's data) in words: the error's explanation, a warning's explanation
    under its note, an accumulation as a note of its own."""
    explain_error(result.error)
    for diagnosis in diagnoses:
        if diagnosis.get("code") == "accumulated":
            result.notes.append(accumulation_words(diagnosis))
            continue
        if diagnosis.get("code") == "transform_no_grad":
            result.notes.append(TRANSFORM_NO_GRAD)
            continue
        words = warning_words(diagnosis.get("code"))
        index = diagnosis.get("note")
        if words and isinstance(index, int) and 0 <= index < len(result.notes):
            result.notes[index] = f"{result.notes[index]}\n{words}"
