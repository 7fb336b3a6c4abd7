"""A task's checks: what a lesson says to compare, and the comparison itself (no kernel, no torch).

A task is judged by behaviour: the state the learner's code left is compared
with the state the lesson's solution leaves from the same start (tutor/tasks.py
runs both and reads them through the kernel's ``task_state`` op, as plain
data). A check names a **target** (``w``, ``model[0]``, ``opt``, ``x.grad``) and
the **facts** of it to compare; a module's facts are those of every parameter
under it. A ``code`` check reads the attempt's source instead (code_rules.py),
for a prompt that names a form. Each check has the message a learner reads when
it is the first that fails.

Nothing here evaluates lesson or learner text: targets are parsed with ``ast``
into steps the kernel walks (name, attribute, integer index).
"""

from __future__ import annotations

import ast
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from gradrepl.tutor.code_rules import RULES
from gradrepl.views.numbers import shape_text
from gradrepl.views.remarks import task_read_words

# Facts of a tensor (a module's check applies them to each of its parameters and buffers).
TENSOR_FACTS = {
    "type": "only what it is (a tensor, None, a number; exact torch classes): every check compares that, "
            "and an nn.Parameter passes for a plain tensor unless the check names this fact",
    "value": "dtype, shape and values",
    "dtype": "the dtype",
    "shape": "the shape",
    "values": "the values",
    "floating": "whether the dtype is floating-point",
    "requires_grad": "the requires_grad flag",
    "is_leaf": "whether it is a leaf",
    "grad_fn": "the grad_fn's name",
    "retains_grad": "whether it retains its grad",
    "has_grad": "whether .grad is None",
    "grad": ".grad: None, or its dtype, shape and values",
    "grad_identity": "which tensor .grad is (the one the task started with, or a new one)",
    "identity": "which object it is (the one the task started with, or a new one, or the same as another target)",
    "backward": "whether a backward pass reached it",
    "backward_count": "how many backward passes reached it",
    "root": "whether a backward pass started at it",
    "root_count": "how many backward passes started at it",
    "grad_by_backward": ".grad is what the last backward pass left (not set or changed by hand)",
    "graph": "the kinds of operation (grad_fn names) the last backward pass reaching it went through",
    "pass_grads": "what each backward pass added to .grad (in any order): the passes themselves, not only their sum",
    "seeds": "the seed each backward pass reaching it (or started at it) began with, in any order: the "
             "solution's (ones by default), not one chosen to make the numbers come out",
    "through_grad": "the last backward pass reaching it went through a gradient autograd made with "
                    "create_graph=True (torch.autograd.grad's result), not a formula written by hand",
    "by_transform": "it is the very tensor a torch.func transform returned, unchanged since (not one computed "
                    "another way beside a transform whose result was dropped)",
    "grad_arrived": "the gradient the last backward pass brought into it (for a tensor autograd made with "
                    "create_graph=True): the pass really carried the solution's gradient through it",
    "at_moved_inputs": "the transform that returned it, run again with its inputs moved (x -> 0.75 x + 0.25), "
                       "gives the solution's values there too: its value depends on the task's model or "
                       "function, not on constants that match the solution's at this one point",
    "writes": "how its values were written: in place where autograd sees it (its version counter moved, as "
              "the solution's does), not through .data or by building it anew at the answer",
    "storage": "it and its .grad keep the memory they started with (not swapped by .data = or set_(): a view "
               "taken before would keep the old numbers)",
    "by_transform_of": "the task's own models and functions that the solution's transform runs ran inside the "
                       "transform that returned it (not a function written by hand beside it, of the inputs or of "
                       "numbers computed beforehand)",
}
MODULE_FACTS = {"type", "identity", "training"}
# A function the task names (the learner's own, `shifted`): run under the transform the attempt applied to it.
FUNCTION_FACTS = {
    "transformed": "the newest torch.func transform the attempt applied to it (jvp(shifted, ...), grad(wave)), "
                   "run again at the inputs it was given and at moved ones (x -> 0.75 x + 0.25), gives the "
                   "solution's values at both: the function itself computes it, not another beside it",
}
OPTIMIZER_FACTS = {"type", "identity", "params", "hyper", "state"}
VALUE_FACTS = {"type", "value"}
ALL_FACTS = set(TENSOR_FACTS) | MODULE_FACTS | OPTIMIZER_FACTS | VALUE_FACTS | set(FUNCTION_FACTS)
DEFAULT_FACTS = ("value", "requires_grad", "is_leaf", "grad", "identity", "params", "hyper")
CHECK_KEYS = {"state", "code", "facts", "message", "tolerance", "zero_grad_is_none"}

# One rule for every value, as torch.allclose's: |mine - solution's| <= ATOL + RTOL * |solution's|. A solution
# written another way (loss / 4 instead of the mean, a loop written out) differs in float32's last bits (~1e-7
# relative); a value scaled by hand (x 1.0001) is ten times past the line, on every parameter alike.
RTOL = 1e-5
ATOL = 1e-6    # near zero, where the relative part vanishes (a check's `tolerance` replaces it)


@dataclass(frozen=True)
class Check:
    """One condition of a task: facts of a target compared with the solution's, or a rule of the code."""

    message: str
    target: str = ""                       # a state check: what it is about
    facts: tuple[str, ...] = DEFAULT_FACTS
    rule: str = ""                         # a code check: a name in code_rules.RULES
    tolerance: float | None = None         # absolute, for values (default ATOL, plus RTOL)
    zero_grad_is_none: bool = False        # a .grad of zeros and no .grad count as the same (both cleared)

    @property
    def kind(self) -> str:
        return "code" if self.rule else "state"

    def describe(self) -> str:
        if self.rule:
            return f"code: {self.rule}"
        return f"{self.target}: {', '.join(self.facts)}"


class TargetError(ValueError):
    pass


def target_steps(text: str) -> list[list[Any]]:
    """`model[0].weight` as [["name", "model"], ["index", 0], ["attr", "weight"]] (parsed, never run)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise TargetError(f"{text!r} is not a name, attribute or [index] path") from None
    steps: list[list[Any]] = []
    while True:
        if isinstance(node, ast.Name):
            steps.append(["name", node.id])
            return steps[::-1]
        if isinstance(node, ast.Attribute):
            steps.append(["attr", node.attr])
            node = node.value
        elif isinstance(node, ast.Subscript) and _integer(node.slice) is not None:
            steps.append(["index", _integer(node.slice)])
            node = node.value
        else:
            raise TargetError(f"{text!r}: a target is a name followed by .attributes and [integer] indexes")


def canonical(text: str) -> str:
    """The target as the kernel names its entries: `model[0].weight`, spaces gone."""
    out = ""
    for kind, arg in target_steps(text):
        out += arg if kind == "name" else (f"[{arg}]" if kind == "index" else f".{arg}")
    return out


def _integer(node) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def parse_checks(raw: Any) -> tuple[list[Check], list[str]]:
    """A task's `checks` list as Checks, and what is wrong with it (messages without a place)."""
    problems: list[str] = []
    if not isinstance(raw, list) or not raw:
        return [], ["'checks' is a list of checks, each {state: TARGET, facts: [...], message} or "
                    "{code: RULE, message}"]
    checks = []
    for n, item in enumerate(raw, 1):
        where = f"check {n}"
        if not isinstance(item, dict):
            problems.append(f"{where}: a check is a mapping ({{state: w, facts: [grad], message: ...}})")
            continue
        unknown = set(item) - CHECK_KEYS
        if unknown:
            problems.append(f"{where}: unknown keys {sorted(unknown)} (known: {', '.join(sorted(CHECK_KEYS))})")
        message = str(item.get("message") or "").strip()
        if not message:
            problems.append(f"{where}: needs a 'message', what a learner reads when it is the first to fail")
        if bool(item.get("state")) == bool(item.get("code")):
            problems.append(f"{where}: give one of 'state' (a target to compare) or 'code' (a rule of the code)")
            continue
        if item.get("code"):
            rule = str(item["code"]).strip()
            if rule not in RULES:
                problems.append(f"{where}: unknown code rule {rule!r} (known: {', '.join(sorted(RULES))})")
                continue
            checks.append(Check(message, rule=rule))
            continue
        target = str(item["state"]).strip()
        try:
            target = canonical(target)
        except TargetError as exc:
            problems.append(f"{where}: {exc}")
            continue
        facts = item.get("facts", list(DEFAULT_FACTS))
        facts = [f.strip() for f in facts.split(",")] if isinstance(facts, str) else facts
        if not isinstance(facts, list) or not facts or not all(isinstance(f, str) for f in facts):
            problems.append(f"{where}: 'facts' is a list of fact names")
            continue
        unknown_facts = [f for f in facts if f not in ALL_FACTS]
        if unknown_facts:
            problems.append(f"{where}: unknown facts {unknown_facts} (known: {', '.join(sorted(ALL_FACTS))})")
            continue
        tolerance = item.get("tolerance")
        if tolerance is not None and (isinstance(tolerance, bool) or not isinstance(tolerance, (int, float))
                                      or tolerance < 0):
            problems.append(f"{where}: 'tolerance' is a number >= 0")
            continue
        checks.append(Check(message, target=target, facts=tuple(facts), tolerance=tolerance,
                            zero_grad_is_none=bool(item.get("zero_grad_is_none"))))
    if checks and not any(c.kind == "state" for c in checks) and not problems:
        problems.append("a task needs at least one 'state' check: it is judged by what its code does")
    return checks, problems


def targets(checks: list[Check]) -> list[list[Any]]:
    """What the kernel reads for these checks: [text, steps] for each target, once, in order."""
    seen: dict[str, list[Any]] = {}
    for check in checks:
        if check.target and check.target not in seen:
            seen[check.target] = [check.target, target_steps(check.target)]
    return list(seen.values())


# -- comparing -------------------------------------------------------------------------

def under(state: dict, target: str) -> list[str]:
    """The entries a check on ``target`` covers: the target and everything read under it, in order."""
    return [p for p in state.get("order", []) if p == target or p.startswith(target + ".") or
            p.startswith(target + "[")]


def difference(check: Check, learner: dict, reference: dict) -> str | None:
    """What differs between the learner's state and the solution's for this check (None: nothing)."""
    if learner.get("unreadable"):
        return task_read_words(learner["unreadable"])
    if reference.get("unreadable"):
        return "the solution's state could not be read: " + task_read_words(reference["unreadable"])
    ours, theirs = learner.get("entries", {}), reference.get("entries", {})
    paths = under(reference, check.target)
    extra = [p for p in under(learner, check.target) if p not in theirs]
    for path in paths:
        found = _entry_difference(check, path, ours.get(path), theirs[path])
        if found:
            return found
    if extra:
        return f"{extra[0]} is there, and the solution has no such thing"
    return None


def mistyped(check: Check, learner: dict, reference: dict) -> str | None:
    """The words for a target (or an entry under it) that is not there, cannot be read, or is another kind
    or class of thing than the solution's (a class of the learner's own with a ``dtype`` attribute, a tensor
    subclass): a check's message names one fact of the right kind of object, which says nothing true of
    this one, so these words lead the refusal alone. None otherwise (None or a number where a tensor
    belongs: the check's own message says what is missing)."""
    ours, theirs = learner.get("entries", {}), reference.get("entries", {})
    for path in under(reference, check.target):
        mine, want = ours.get(path), theirs[path]
        if want.get("kind") == "missing" or (mine is not None and mine.get("kind") == "value"):
            continue
        if mine is None or mine.get("kind") == "missing":
            return f"there is no {path} after your code: the task is about {path}, so your code must leave one"
        if _unreadable(mine):
            return f"{path} cannot be judged: {task_read_words(_unreadable(mine))}"
        if want.get("kind") != "object" and _misfits(check, mine, want):
            return (f"{path} is a {_type_text(mine)}, not a {_type_text(want)}: the task is about a "
                    f"{_type_text(want)} itself, whatever attributes another object has, so make {path} one")
    return None


def _unreadable(entry: dict) -> dict | None:
    """Why an entry could not be read: an entry of kind unreadable is its own reason ({"code", "names"})."""
    return entry.get("unreadable") or (entry if entry.get("kind") == "unreadable" else None)


def _misfits(check: Check, mine: dict, theirs: dict) -> bool:
    """Another kind of thing, or another class, than the solution's (a Parameter for a tensor may be honest)."""
    return mine.get("kind") != theirs.get("kind") or (mine.get("type") != theirs.get("type")
                                                      and not _honest_parameter(check, mine, theirs))


def _entry_difference(check: Check, path: str, mine: dict | None, theirs: dict) -> str | None:
    if mine is None or mine.get("kind") == "missing":
        return None if theirs.get("kind") == "missing" else f"{path} is not there"
    if theirs.get("kind") == "missing":
        return f"{path} exists; the solution has none"
    if _unreadable(mine):  # before its kind: an unreadable entry has none to compare
        return f"{path} cannot be judged: {task_read_words(_unreadable(mine))}"
    if _misfits(check, mine, theirs):
        return f"{path} is a {_type_text(mine)}, not a {_type_text(theirs)}"
    if theirs.get("unreadable"):
        return f"the solution's {path} could not be read: {task_read_words(theirs['unreadable'])}"
    kind = theirs.get("kind")
    if kind == "tensor":
        return _tensor_difference(check, path, mine, theirs)
    if kind == "module":
        if "identity" in check.facts and mine.get("identity") != theirs.get("identity"):
            return _identity_text(path, mine.get("identity"), theirs.get("identity"))
        if "training" in check.facts and mine.get("training") != theirs.get("training"):
            return f"{path} is in {'training' if mine.get('training') else 'eval'} mode"
        if (mine.get("parameters"), mine.get("children")) != (theirs.get("parameters"), theirs.get("children")):
            return f"{path} has other parameters or layers than the solution's"
        return None
    if kind == "optimizer":
        return _optimizer_difference(check, path, mine, theirs)
    if kind == "value":
        if "value" in check.facts and not same_values(mine.get("value"), theirs.get("value"), check.tolerance):
            return f"{path} is {_short(mine.get('value'))}"
        return None
    if "identity" in check.facts and mine.get("identity") != theirs.get("identity"):
        return _identity_text(path, mine.get("identity"), theirs.get("identity"))
    if "transformed" in check.facts and kind == "object":
        if mine.get("rerun"):
            return f"{path}, run again by the check under the transform your code applied to it, " \
                   f"{rerun_words(mine['rerun'])}"
        return _transformed_difference(path, mine.get("transformed"), theirs.get("transformed"), check.tolerance)
    if kind == "sequence" and mine.get("length") != theirs.get("length"):
        return f"{path} has {mine.get('length')} items"
    return None


def _tensor_difference(check: Check, path: str, mine: dict, theirs: dict) -> str | None:
    facts, tol = check.facts, check.tolerance
    for fact in facts:
        found = None
        if fact in ("value", "dtype") and mine.get("dtype") != theirs.get("dtype"):
            found = f"{path} is {mine.get('dtype')}, not {theirs.get('dtype')}"
        elif fact in ("value", "shape") and mine.get("shape") != theirs.get("shape"):
            found = f"{path} has shape {shape_text(mine.get('shape') or [])}, not {shape_text(theirs.get('shape') or [])}"
        elif fact in ("value", "values") and not same_values(mine.get("values"), theirs.get("values"), tol):
            found = f"{path} holds other values than the solution leaves there"
        elif fact == "floating" and _floating(mine.get("dtype")) != _floating(theirs.get("dtype")):
            found = f"{path} is {mine.get('dtype')}" + (f", {_dtype_kind(mine.get('dtype'))}, not floating-point"
                                                      if _floating(theirs.get("dtype")) else "")
        elif fact in ("requires_grad", "is_leaf", "retains_grad", "grad_fn") and mine.get(fact) != theirs.get(fact):
            found = f"{path}.{fact} is {mine.get(fact)}"
        elif fact == "has_grad" and (mine.get("grad") is None) != (theirs.get("grad") is None):
            found = f"{path}.grad is None" if mine.get("grad") is None else f"{path}.grad is not None"
        elif fact == "grad":
            found = _grad_difference(path, mine.get("grad"), theirs.get("grad"), tol, check.zero_grad_is_none)
        elif fact == "grad_identity":
            ours = (mine.get("grad") or {}).get("identity")
            want = (theirs.get("grad") or {}).get("identity")
            if ours != want and mine.get("grad") is not None and theirs.get("grad") is not None:
                found = _identity_text(path + ".grad", ours, want)
        elif fact == "identity" and mine.get("identity") != theirs.get("identity"):
            found = _identity_text(path, mine.get("identity"), theirs.get("identity"))
        elif fact in ("backward", "root"):
            if bool(mine.get(fact)) != bool(theirs.get(fact)):
                verb = "reached" if fact == "backward" else "started at"
                found = (f"no backward pass {verb} {path}" if not mine.get(fact)
                         else f"a backward pass {verb} {path}, and the solution's does not")
        elif fact in ("backward_count", "root_count"):
            key = fact.removesuffix("_count")
            if (mine.get(key) or 0) != (theirs.get(key) or 0):
                verb = "reached" if key == "backward" else "started at"
                # the log counts backward() passes, and a torch.autograd.grad pass only while its result is .grad
                counted = " (counting a torch.autograd.grad pass only while its result is still .grad)" \
                    if key == "backward" else ""
                found = f"backward passes {verb} {path} {mine.get(key) or 0} time(s), not {theirs.get(key) or 0}{counted}"
        elif fact == "graph" and mine.get("graph") != theirs.get("graph"):
            found = (f"the last backward pass reaching {path} went through "
                     f"{', '.join(mine.get('graph') or []) or 'no operations'}, not the solution's operations")
        elif fact == "pass_grads" and not same_passes(mine.get("pass_grads"), theirs.get("pass_grads"), tol):
            count = len(mine.get("pass_grads") or [])
            found = f"the {count} backward pass(es) reaching {path} each added other gradients than the solution's"
        elif fact == "seeds" and not same_passes(mine.get("seeds"), theirs.get("seeds"), tol):
            found = _seed_words(path, mine.get("seeds"), theirs.get("seeds"))
        elif fact == "through_grad" and bool(mine.get("through_grad")) != bool(theirs.get("through_grad")):
            found = (f"the last backward pass reaching {path} went through no gradient that autograd made"
                     if not mine.get("through_grad") else
                     f"the last backward pass reaching {path} went through a gradient autograd made, and the "
                     "solution's does not")
        elif fact == "by_transform" and theirs.get("by_transform") and not mine.get("by_transform"):
            found = f"{path} is not what a torch.func transform returned: it was computed another way, or changed after"
        elif fact == "grad_arrived" and not same_passes([mine["grad_arrived"]] if mine.get("grad_arrived") else [],
                                                        [theirs["grad_arrived"]] if theirs.get("grad_arrived")
                                                        else [], tol):
            # yours, never the solution's: a refusal must not print a number the learner could type in
            found = (f"no backward pass went through {path}" if not mine.get("grad_arrived") else
                     f"the gradient that reached {path} in the last backward pass is not the solution's "
                     f"(yours was {_short(mine['grad_arrived'])})")
        elif fact == "by_transform_of" and [n for n in theirs.get("by_transform_of") or []
                                            if n not in (mine.get("by_transform_of") or [])]:
            never = [n for n in theirs.get("by_transform_of") or [] if n not in (mine.get("by_transform_of") or [])]
            found = (f"{' and '.join(never)} never ran inside the torch.func transform that returned {path}: "
                     "the transformed function must call it" if mine.get("by_transform") else
                     f"{path} is not what a torch.func transform of {' and '.join(never)} returned")
        elif fact == "at_moved_inputs" and mine.get("rerun"):
            found = f"the transform that returned {path}, run again by the check, {rerun_words(mine['rerun'])}"
        elif fact == "at_moved_inputs" and theirs.get("by_transform") and not same_values(
                mine.get("at_moved_inputs"), theirs.get("at_moved_inputs"), tol):
            found = (f"the transform that returned {path}, run again at other inputs, gives other values than the "
                     "solution's: what it differentiates matches the task's function at this one point only"
                     if mine.get("by_transform") else
                     f"{path} is not what a torch.func transform returned, so it cannot be run at other inputs")
        elif fact == "writes":
            found = _writes_difference(path, mine, theirs)
        elif fact == "storage":
            found = _storage_difference(path, mine, theirs)
        elif fact == "grad_by_backward" and theirs.get("grad_by_backward") and not mine.get("grad_by_backward"):
            found = (f"{path}.grad is not what a backward pass left there: it was set or changed by hand"
                     if mine.get("grad") is not None else f"{path}.grad is None")
        if found:
            return found
    return None


def rerun_words(reason: dict) -> str:
    """What the learner's function did when a check ran it again and it did not return (task_state.py's
    ``rerun``, a guard.NoValue reason; a KeyboardInterrupt there is the function's own, no Ctrl-C)."""
    if reason.get("why") == "timed_out":
        return f"did not return within {reason.get('seconds', 0):g} s during the check"
    if reason.get("why") == "not_run":
        return "was not run: a function the check ran again before it did not return in time"
    raised = reason.get("error") if reason.get("why") == "raised" else "KeyboardInterrupt"
    return f"raised {raised} during the check: a function the check runs must return its value"


def _transformed_difference(path: str, mine: dict | None, theirs: dict | None, tol: float | None) -> str | None:
    """The task's function under the transform the attempt applied to it, against the solution's."""
    if theirs is None:
        return None
    if mine is None:
        return (f"no torch.func transform was applied to {path} itself (or it raised when run again), so what "
                f"{path} computes is not what was transformed: apply the transform to {path}")
    if not same_values(mine.get("at"), theirs.get("at"), tol):
        return f"{path}, under the transform your code applied to it, gives other values than the solution's"
    if not same_values(mine.get("moved"), theirs.get("moved"), tol):
        return (f"{path}, under the transform your code applied to it, gives the solution's values at these "
                "inputs only: at other inputs they differ")
    return None


def _writes_difference(path: str, mine: dict, theirs: dict) -> str | None:
    """An in-place write autograd saw (the version counter moved) where the solution makes one; a write
    through .data moves no counter, so autograd never knows the value changed."""
    if mine.get("hidden") and not theirs.get("hidden"):
        # Not "through .data" alone: a NumPy view (w.detach().numpy()) hides a write too, and naming .data to a
        # learner who never used it suggests it
        return (f"{path} was changed without its version counter moving (through a view autograd does not count), "
                "so autograd never saw it")
    if bool(mine.get("writes")) == bool(theirs.get("writes")):
        return None
    if theirs.get("writes"):
        return f"{path}._version did not move: no in-place write on {path} itself (one its version counter counts) changed it"
    return f"{path} was written in place, and the solution's is not"


def _storage_difference(path: str, mine: dict, theirs: dict) -> str | None:
    for where, ours, want in ((path, mine, theirs), (path + ".grad", mine.get("grad") or {}, theirs.get("grad") or {})):
        if want.get("same_storage") and ours.get("same_storage") is False:
            return (f"{where} is the same tensor with other memory under it now (its storage was swapped, by "
                    ".data = or set_()): a view of it taken before still holds the old numbers")
    return None


def _honest_parameter(check: Check, mine: dict, theirs: dict) -> bool:
    """An nn.Parameter where the solution has a plain tensor: a tensor all the same (torch's own subclass,
    read like one), so only a check that names the fact ``type`` tells the two apart."""
    return ("type" not in check.facts and mine.get("type") == "torch.nn.Parameter"
            and theirs.get("type") == "torch.Tensor")


def _seed_words(path: str, mine: list | None, theirs: list | None) -> str:
    """The seeds of the passes reaching ``path``, in words: the learner's, and the solution's only when they
    are backward's default (ones): a seed the solution computes is part of its answer, never printed."""
    def words(seeds: list | None) -> str:
        if seeds is None:
            return "not logged"
        shown = [" and ".join(_short(_one(root)) for root in each) or "none" for each in seeds]
        return ", ".join(shown) or "no pass"
    if mine is not None and theirs is not None and len(mine) != len(theirs):  # the count is what differs
        return (f"{_passes(len(mine))} reached {path} (seeded with {words(mine)}), where the solution runs "
                f"{_passes(len(theirs))}")
    default = theirs is not None and all(v == 1 for each in theirs for root in each for v in flatten(root))
    wanted = f"not backward's default seed of ones ({words(theirs)})" if default and theirs else "not the solution's seeds"
    return f"the backward passes reaching {path} were seeded with {words(mine)}, {wanted}"


def _passes(count: int) -> str:
    return "one backward pass" if count == 1 else f"{count} backward passes"


def _one(values: list) -> object:
    return values[0] if len(values) == 1 else values


def same_passes(mine: list | None, theirs: list | None, tol: float | None) -> bool:
    """Two lists of per-pass gradient additions match one to one, in any order (None: not logged)."""
    if mine is None or theirs is None:
        return mine is None and theirs is None
    if len(mine) != len(theirs):
        return False
    left = list(theirs)
    for added in mine:
        match = next((i for i, other in enumerate(left) if same_values(added, other, tol)), None)
        if match is None:
            return False
        left.pop(match)
    return True


def _grad_difference(path: str, mine: dict | None, theirs: dict | None, tol: float | None,
                     zero_is_none: bool) -> str | None:
    if zero_is_none:
        mine, theirs = _cleared(mine), _cleared(theirs)
    if mine is None and theirs is None:
        return None
    if mine is None:
        return f"{path}.grad is None"
    if theirs is None:
        return f"{path}.grad is not None" + (" and not zeros" if zero_is_none else "")
    if mine.get("type") != theirs.get("type") or mine.get("unreadable"):
        unread = mine.get("unreadable")
        return f"{path}.grad cannot be judged: " + (task_read_words(unread) if unread else f"it is a {mine.get('type')}")
    if (mine.get("dtype"), mine.get("shape")) != (theirs.get("dtype"), theirs.get("shape")):
        return f"{path}.grad has another shape or dtype than the solution's"
    if not same_values(mine.get("values"), theirs.get("values"), tol):
        return f"{path}.grad holds other values than the solution leaves there"
    return None


def _cleared(grad: dict | None) -> dict | None:
    """A .grad of zeros counts as no .grad (zero_grad_is_none)."""
    if grad is None:
        return None
    values = grad.get("values")
    return None if values is not None and all(v == 0 for v in flatten(values)) else grad


def _optimizer_difference(check: Check, path: str, mine: dict, theirs: dict) -> str | None:
    if "identity" in check.facts and mine.get("identity") != theirs.get("identity"):
        return _identity_text(path, mine.get("identity"), theirs.get("identity"))
    ours, want = mine.get("groups") or [], theirs.get("groups") or []
    if "params" in check.facts:
        if len(ours) != len(want) or any(Counter(a["params"]) != Counter(b["params"]) for a, b in zip(ours, want)):
            return f"{path} holds other parameters than the solution's: " + _param_words(ours, want)
    if "hyper" in check.facts:
        for a, b in zip(ours, want):
            for name in sorted(set(a["hyper"]) | set(b["hyper"])):
                if not same_values(a["hyper"].get(name), b["hyper"].get(name), check.tolerance):
                    return f"{path}'s {name} is {_short(a['hyper'].get(name))}"
    if "state" in check.facts:
        return _optimizer_state_difference(path, mine.get("state") or [], theirs.get("state") or [],
                                           check.tolerance)
    return None


def _state_names(names: list[str]) -> str:
    """An optimizer state's keys in words: a key that is not a plain name (the learner's own, holding newlines
    that would print a verdict line of their own) is quoted with its escapes."""
    return ", ".join(name if name.isidentifier() else repr(name) for name in names)


def _optimizer_state_difference(path: str, ours: list[dict], want: list[dict], tol: float | None) -> str | None:
    """The per-parameter state step() keeps, mine against the solution's (by parameter label)."""
    mine = {entry["param"]: entry.get("values") or {} for entry in ours}
    theirs = {entry["param"]: entry.get("values") or {} for entry in want}
    for label in [*theirs, *(label for label in mine if label not in theirs)]:
        have, need = mine.get(label, {}), theirs.get(label, {})
        extra = sorted(set(have) - set(need))
        if extra:
            return (f"{path} keeps {_state_names(extra)} for {_label_name(label)}, and the solution's keeps none: its "
                    "next step() would move that weight with it (a new optimizer starts with no state)")
        missing = sorted(set(need) - set(have))
        if missing:
            return f"{path} keeps no {_state_names(missing)} for {_label_name(label)}, and the solution's does"
        for name in sorted(need):
            if not same_values(have[name], need[name], tol):
                return f"{path}'s {_state_names([name])} for {_label_name(label)} holds other values than the solution's"
    return None


def _param_words(ours: list[dict], want: list[dict]) -> str:
    """What the optimizer holds and what the solution's holds, in its own order, by paths that run; a copy
    is named as one (it has the values of the model's parameter, but step() would move the copy only)."""
    have = [label for g in ours for label in g["params"]]
    need = [label for g in want for label in g["params"]]
    if sorted(have) == sorted(need):
        return "the same tensors, grouped otherwise"
    words = f"it holds {_names(have)}, and the solution's holds {_names(need)}"
    if any(not label.startswith("start:") for label in have):
        words += " (a new tensor is not the model's parameter: step() would move it, not the model)"
    return words


def _names(labels: list[str]) -> str:
    return ", ".join(_label_name(x) for x in labels) or "no parameters"


def _label_name(label: str) -> str:
    kind, _, path = label.partition(":")
    return path if kind == "start" else f"a new tensor ({path})"


def _identity_text(path: str, mine: str | None, theirs: str | None) -> str:
    mine, theirs = mine or "", theirs or ""
    if theirs.startswith("start:") and theirs[6:] == path:
        return f"{path} is not the object the task started with (it names a new one)"
    if theirs.startswith("start:"):
        return f"{path} should be {theirs[6:]} as the task started, and is not"
    if mine.startswith("start:") and mine[6:] == path:
        return f"{path} is still the object the task started with; the solution makes a new one"
    if theirs.startswith("new:") and theirs[4:] != path:
        return f"{path} should be the same object as {theirs[4:]}, and is not"
    return f"{path} is not the object it should be"


def _type_text(entry: dict) -> str:
    kind = entry.get("kind")
    if kind in ("missing", "unreadable"):
        return kind
    return str(entry.get("type") or kind)


def _floating(dtype: str | None) -> bool:
    return bool(dtype) and any(word in dtype for word in ("float", "half", "double", "bfloat"))


def _dtype_kind(dtype: str | None) -> str:
    """A dtype's kind in words (torch.complex64 is no integer, torch.bool no number)."""
    name = str(dtype or "")
    if _floating(name):
        return "a floating-point dtype"
    if "complex" in name:
        return "a complex dtype"
    if name.endswith("bool"):
        return "a bool dtype"
    if "int" in name:
        return "an integer dtype"
    return "a dtype of another kind"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


CHANGE_FACTS = ("value", "requires_grad", "is_leaf", "grad_fn", "retains_grad", "grad", "identity", "params",
                "hyper", "training")


def unchecked_changes(checks: list[Check], start: dict, end: dict) -> list[str]:
    """What the solution changes in place among the things the task started with that no check
    compares (a learner's attempt could leave them as they were and still pass). A name the solution
    binds to a new object (a loss, a loop variable) is a result made on the way, not state changed."""
    covered = {p for check in checks if check.target for p in under(end, check.target)}
    probe = Check("", facts=CHANGE_FACTS)
    found: list[str] = []
    for path in end.get("order", []):
        before = start.get("entries", {}).get(path)
        if path in covered or before is None or any(path.startswith(f + ".") or path.startswith(f + "[")
                                                    for f in found):
            continue
        after = end["entries"][path]
        if after.get("identity") and after.get("identity") != before.get("identity"):
            continue
        if _entry_difference(probe, path, after, before):
            found.append(path)
    return found


def flatten(values: Any) -> list:
    if isinstance(values, list):
        return [x for v in values for x in flatten(v)]
    return [values]


def same_values(a: Any, b: Any, tolerance: float | None = None) -> bool:
    """Nested lists of numbers equal within tolerance (NaN equals NaN); anything else exactly. ``b`` is the
    solution's: the relative part scales with it (torch.allclose's rule)."""
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and \
            all(same_values(x, y, tolerance) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if not (_number(a) and _number(b)):
        return a == b
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= (ATOL if tolerance is None else tolerance) + RTOL * abs(y)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) or value in ("nan", "inf", "-inf")


def seeds_in(state: dict, checks: list[Check]) -> list[float]:
    """The numbers of every backward seed logged on the checked targets (the rule against typed-in seeds)."""
    paths = {p for check in checks if check.target for p in under(state, check.target)}
    return [float(v) for path, entry in state.get("entries", {}).items() if path in paths
            for v in flatten(entry.get("seeds")) if isinstance(v, (int, float)) and not isinstance(v, bool)]


def numbers_in(state: dict, checks: list[Check]) -> list[float]:
    """Every number the checked targets hold in a state (for the rule against typed-in answers)."""
    found: list[float] = []
    paths = {p for check in checks if check.target for p in under(state, check.target)}
    for path, entry in state.get("entries", {}).items():
        if path not in paths:
            continue
        for values in (entry.get("values"), (entry.get("grad") or {}).get("values"), entry.get("value")):
            found.extend(float(v) for v in flatten(values) if isinstance(v, (int, float)) and not isinstance(v, bool))
    return found
