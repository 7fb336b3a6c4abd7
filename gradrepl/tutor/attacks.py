"""Fixes that fix nothing: the moves `gradrepl lint` tries on every task, which must all be refused.

Each move is code a learner might type to make a check say "done" without
doing the task, written from the solution's own start and end states (so it
knows the answer, as a learner who skipped once would):

- **assign**: the solution's final values and .grad set directly (a new tensor
  made with them, weights copied in, ``x.grad = torch.tensor(12.)``);
- **rebind**: every name the task does not name rebound to a stand-in that
  agrees (lists of 1000 items, functions returning 0), as a learner rebinds
  ``_passes`` or ``loss_fn``;
- **patch**: torch's comparisons and readers patched to agree
  (``torch.allclose``, ``torch.equal``, ``Tensor.tolist``, ``.item``, ``.grad``,
  ``.requires_grad``);
- **replace**: the object the task is about replaced by a fresh one holding the
  solution's final state (``model[0] = nn.Linear(3, 4).requires_grad_(False)``),
  or by a tensor subclass whose readers say the solution's values;
- **carried state**: the solution, then its new optimizer handed the state of
  an optimizer the start holds (``opt.state.update(old.state)``: momentum
  buffers its first step would push with);
- **first only**: of several tensors the task changes, only the first fixed;
- **seed**: one backward pass on another graph (each leaf's ``.pow(1)``) whose
  seed is chosen to add exactly what the solution's passes add
  (``x3.pow(1).backward(torch.tensor(12.))``, or -14 to cancel a gradient):
  its numbers are written as ``float.fromhex`` strings, as a learner hiding
  them would, so only the task's behaviour checks can refuse it;
- **reseed**: the solution's own backward calls with other seeds that add up to
  the same (2 and 0 for two passes; one pass split into 2 and -1):
  ``y.backward(2 * ones, retain_graph=True); y.backward(0 * ones)``;
- **shift**: each gradient the solution changes in place shifted by the number
  that makes it come out (``x.grad.sub_(14)``);
- **hook**: a hook on each target that halves its gradient as backward runs,
  and the solution's backward calls seeded twice over
  (``x3.register_hook(lambda g: g * 0.5)``; the learner's ``g * 3`` on x3 ** 2);
- **typed gradients**: the solution with each ``.grad`` it reads replaced by the
  numbers the start holds (``w -= lr * torch.tensor([-4.03])``), and with the
  other sign, negated again (``w -= lr * -torch.tensor([4.03])``);

An exercise's moves are also tried after its starter code. Moves are data for
the kernel like any attempt; nothing here runs them.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

from gradrepl.tutor.code_rules import lesson_numbers
from gradrepl.tutor.lesson import Question
from gradrepl.tutor.task_checks import flatten, under

KEEP = {"torch", "nn", "F", "help"}
MAX_REPLACEMENTS = 4


@dataclass(frozen=True)
class Move:
    name: str
    code: str


def moves(question: Question, start: dict, end: dict, numbers: set[float] | None = None,
          starter_runs: bool = True) -> list[Move]:
    """Every move for this task, from the solution's start and end states, each with the starter first
    too when the task has one that runs without raising (``starter_runs``)."""
    numbers = numbers if numbers is not None else lesson_numbers(
        [question.prompt, question.solution, question.starter, question.setup, question.given])
    paths = _paths(question, end)
    found = [m for m in (_assign(paths, start, end, numbers), _rebind(question, start, paths),
                         _patch(paths, end), *_replace(question, paths, start, end), _liar(question, end),
                         _carried_state(question, paths, start, end),
                         _first_only(paths, start, end), _seeded(paths, start, end), _shifted(paths, start, end),
                         _typed_grads(question, paths, start),
                         _typed_grads(question, paths, start, flipped=True), _reseeded(question),
                         _hooked(question, paths, start, end)) if m is not None]
    if question.starter.strip() and starter_runs:
        found += [Move(f"{m.name}, after the starter", question.starter.rstrip() + "\n" + m.code) for m in found]
    return found


def _paths(question: Question, end: dict) -> list[str]:
    seen: dict[str, None] = {}
    for check in question.checks:
        if check.target:
            for path in under(end, check.target):
                seen.setdefault(path, None)
    return list(seen)


# -- the moves ------------------------------------------------------------------------

def _assign(paths: list[str], start: dict, end: dict, numbers: set[float]) -> Move | None:
    lines: list[str] = []
    typed = False  # at least one value that the lesson never wrote: the answer, typed in
    for path in paths:
        entry, before = end["entries"][path], start.get("entries", {}).get(path, {})
        if entry.get("kind") == "value" and _is_name(path):
            if entry.get("value") != before.get("value"):
                lines.append(f"{path} = {_literal(entry.get('value'))}")
                typed = typed or not _known(entry.get("value"), numbers)
            continue
        if entry.get("kind") != "tensor" or entry.get("values") is None:
            continue
        identity = str(entry.get("identity") or "")
        if identity.startswith("new:") and identity[4:] != path:
            if _is_name(path):
                lines.append(f"{path} = {identity[4:]}")
            continue
        if identity.startswith("new:"):
            if not _is_name(path):
                continue
            lines.append(f"{path} = {_tensor(entry)}")
            typed = typed or not _known(entry.get("values"), numbers)
        elif entry.get("values") != before.get("values"):
            lines.append(f"with torch.no_grad():\n    {path}.copy_({_tensor(entry, flags=False)})")
            typed = typed or not _known(entry.get("values"), numbers)
        grad = entry.get("grad")
        if _grad_of(grad) != _grad_of(before.get("grad")) or identity.startswith("new:"):
            lines.append(f"{path}.grad = {_grad(grad)}")
            typed = typed or grad is not None
    return Move("assign the solution's final values and .grad directly", "\n".join(lines)) if typed else None


def _rebind(question: Question, start: dict, paths: list[str]) -> Move | None:
    roots = {p.split(".")[0].split("[")[0] for p in paths}
    lines = []
    for name, kind in sorted((start.get("names") or {}).items()):
        if name in KEEP or name in roots or not name.isidentifier():
            continue
        stand_in = {"collection": "[1] * 1000", "callable": "lambda *a, **k: torch.tensor(0.0)",
                    "module": "lambda *a, **k: torch.tensor(0.0)", "value": "True",
                    "tensor": "torch.tensor(0.0)"}.get(kind)
        if stand_in:
            lines.append(f"{name} = {stand_in}")
    return Move("rebind every other name the check could read", "\n".join(lines)) if lines else None


def _patch(paths: list[str], end: dict) -> Move | None:
    first = next((end["entries"][p] for p in paths if end["entries"][p].get("kind") == "tensor"
                  and end["entries"][p].get("values") is not None), None)
    lines = ["torch.allclose = lambda *a, **k: True", "torch.equal = lambda *a, **k: True",
             "torch.isclose = lambda *a, **k: torch.tensor(True)"]
    if first is not None:
        values, grad = first.get("values"), first.get("grad")
        lines += [f"torch.Tensor.tolist = lambda self, *a, **k: {_literal(values)}",
                  f"torch.Tensor.item = lambda self: {_literal(flatten(values)[0] if flatten(values) else 0.0)}",
                  f"torch.Tensor.requires_grad = property(lambda self: {first.get('requires_grad')!r})",
                  f"torch.Tensor.is_leaf = property(lambda self: {first.get('is_leaf')!r})"]
        if grad is not None and grad.get("values") is not None:
            lines.append(f"torch.Tensor.grad = property(lambda self: {_grad(grad)})")
    return Move("patch torch's comparisons and readers to agree", "\n".join(lines))


def _replace(question: Question, paths: list[str], start: dict, end: dict) -> list[Move]:
    """Each object the task started from, replaced by a fresh one holding the solution's final state."""
    found = []
    for path in paths:
        entry = end["entries"][path]
        if not str(entry.get("identity") or "").startswith("start:") or path.endswith(".grad"):
            continue
        if entry.get("kind") == "tensor" and entry.get("values") is not None and _is_name(path):
            code = f"{path} = {_tensor(entry)}"
            if entry.get("grad") is not None:
                code += f"\n{path}.grad = {_grad(entry['grad'])}"
        elif entry.get("kind") == "module" and "." not in path:
            code = f"import copy\n{path} = copy.deepcopy({path})" + "".join(
                "\n" + _set_tensor(p, end["entries"][p]) for p in under(end, path)
                if end["entries"][p].get("kind") == "tensor" and end["entries"][p].get("values") is not None)
        else:
            continue
        found.append(Move(f"replace {path} with a fresh object holding the solution's state", code))
        if len(found) >= MAX_REPLACEMENTS:
            break
    return found


def _liar(question: Question, end: dict) -> Move | None:
    """A tensor subclass whose readers say the solution's values, in place of the first tensor target."""
    for check in question.checks:
        entry = end.get("entries", {}).get(check.target) if check.target else None
        if entry and entry.get("kind") == "tensor" and entry.get("values") is not None and _is_name(check.target):
            values = _literal(entry.get("values"))
            code = ("class _Agrees(torch.Tensor):\n"
                    f"    def tolist(self, *a, **k):\n        return {values}\n"
                    f"    def item(self):\n        return {_literal((flatten(entry['values']) or [0.0])[0])}\n"
                    f"{check.target} = torch.Tensor._make_subclass(_Agrees, {_tensor(entry, flags=False)}, "
                    f"{entry.get('requires_grad')!r})")
            if entry.get("grad") is not None:
                code += f"\n{check.target}.grad = {_grad(entry['grad'])}"
            return Move(f"replace {check.target} with a tensor subclass that reports the solution's values", code)
    return None


def _carried_state(question: Question, paths: list[str], start: dict, end: dict) -> Move | None:
    """The solution, then each new optimizer handed the state (momentum buffers) of an optimizer the start
    holds: the parameters and hyperparameters are the solution's, its first step() is not a new one's."""
    old = next((p for p in start.get("order", []) if _is_name(p) and start["entries"][p].get("kind") == "optimizer"
                and start["entries"][p].get("state")), None)
    new = [p for p in paths if _is_name(p) and end["entries"][p].get("kind") == "optimizer"
           and str(end["entries"][p].get("identity") or "").startswith("new:")]
    if old is None or not new:
        return None
    code = "\n".join([f"_old_optimizer = {old}", question.solution.rstrip(),
                      *(f"{p}.state.update(_old_optimizer.state)" for p in new)])
    return Move("the solution, its new optimizer handed the old one's state (momentum buffers)", code)


def _first_only(paths: list[str], start: dict, end: dict) -> Move | None:
    changed = [p for p in paths if end["entries"][p].get("kind") == "tensor" and _changed(
        start.get("entries", {}).get(p), end["entries"][p])]
    if len(changed) < 2:
        return None
    path, entry = changed[0], end["entries"][changed[0]]
    if str(entry.get("identity") or "").startswith("new:"):
        if not _is_name(path):
            return None
        code = f"{path} = {_tensor(entry)}\n{path}.grad = {_grad(entry.get('grad'))}"
    else:
        code = _set_tensor(path, entry)
    return Move(f"fix only the first of the tensors the task changes ({path})", code)


def _gradient_changes(paths: list[str], start: dict, end: dict) -> list[tuple[str, dict, list]]:
    """(path, end entry, what the solution added to its .grad, flat) of each leaf whose .grad changed."""
    found = []
    for path in paths:
        entry = end["entries"][path]
        grad = entry.get("grad")
        if entry.get("kind") != "tensor" or not entry.get("is_leaf") or not entry.get("requires_grad") \
                or grad is None or grad.get("values") is None:
            continue
        identity = str(entry.get("identity") or "")
        before = start.get("entries", {}).get(path) if identity.startswith("start:") else None
        if identity.startswith("new:") and identity[4:] != path:
            continue
        earlier = _grad_of((before or {}).get("grad"))
        now = flatten(grad["values"])
        was = flatten(earlier) if earlier is not None else [0.0] * len(now)
        if len(was) != len(now) or not all(isinstance(v, (int, float)) for v in now + was):
            continue
        added = [a - b for a, b in zip(now, was)]
        if any(added):
            found.append((path, entry, added))
    return found


def _seeded(paths: list[str], start: dict, end: dict) -> Move | None:
    changes = [c for c in _gradient_changes(paths, start, end) if _is_name(c[0].split(".")[0].split("[")[0])]
    if not changes:
        return None
    lines = [f"{path} = {_tensor(entry)}" for path, entry, _ in changes
             if str(entry.get("identity") or "").startswith("new:") and _is_name(path)]
    roots = ", ".join(f"{path}.pow(1)" for path, _, _ in changes)
    seeds = ", ".join(f"torch.tensor({_hidden(_shaped(added, entry.get('shape')))}, dtype={entry.get('dtype')})"
                      for _path, entry, added in changes)
    lines.append(f"torch.autograd.backward([{roots}], [{seeds}])")
    return Move("one backward pass on another graph, seeded to add what the solution's passes add",
                "\n".join(lines))


class _Reseed(ast.NodeTransformer):
    """Each `R.backward(...)` statement with its seed scaled: the first by 2, the second by 0; a lone one
    split into two passes (2, then -1, the first keeping the graph)."""

    def __init__(self, calls: int) -> None:
        self.calls, self.seen = calls, 0

    def visit_Expr(self, node: ast.Expr):
        call = node.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "backward"):
            return node
        self.seen += 1
        if self.calls == 1:
            return [self._scaled(call, 2.0, keep=True), self._scaled(call, -1.0)]
        return self._scaled(call, 2.0 if self.seen == 1 else 0.0, keep=self.seen == 1) if self.seen <= 2 else node

    @staticmethod
    def _scaled(call: ast.Call, factor: float, keep: bool = False) -> ast.Expr:
        root = call.func.value
        seed = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "gradient"), None)
        if seed is None:
            seed = ast.parse(f"torch.ones_like({ast.unparse(root)})", mode="eval").body
        scaled = ast.parse(f"({ast.unparse(seed)}) * {_hidden(factor)}", mode="eval").body
        keywords = [k for k in call.keywords if k.arg not in ("gradient", "retain_graph")]
        if keep:
            keywords.append(ast.keyword("retain_graph", ast.Constant(True)))
        else:
            keywords += [k for k in call.keywords if k.arg == "retain_graph"]
        return ast.Expr(ast.Call(call.func, [scaled, *call.args[1:]], keywords))


def _reseeded(question: Question) -> Move | None:
    try:
        tree = ast.parse(question.solution)
    except SyntaxError:
        return None
    calls = sum(1 for node in ast.walk(tree) if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "backward")
    if not calls:
        return None
    code = ast.unparse(ast.fix_missing_locations(_Reseed(calls).visit(tree)))
    return Move("the solution's backward calls with other seeds that add up to the same", code)


class _Doubled(ast.NodeTransformer):
    """Every `R.backward(...)` statement with its seed doubled."""

    def visit_Expr(self, node: ast.Expr):
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "backward":
            return _Reseed._scaled(call, 2.0, keep=any(k.arg == "retain_graph" for k in call.keywords))
        return node


def _hooked(question: Question, paths: list[str], start: dict, end: dict) -> Move | None:
    """A hook on each target the start holds that halves its gradient, then the solution seeded twice."""
    hooked = [path for path, _entry, _added in _gradient_changes(paths, start, end)
              if str(_entry.get("identity") or "").startswith("start:") and _is_name(path.split(".")[0])]
    try:
        tree = ast.parse(question.solution)
    except SyntaxError:
        return None
    if not hooked:
        return None
    lines = [f"{path}.register_hook(lambda g: g * {_hidden(0.5)})" for path in hooked]
    lines.append(ast.unparse(ast.fix_missing_locations(_Doubled().visit(tree))))
    return Move("a hook on each target that rescales its gradient, the solution's seeds rescaled to match",
                "\n".join(lines))


def _shifted(paths: list[str], start: dict, end: dict) -> Move | None:
    lines = []
    for path, entry, added in _gradient_changes(paths, start, end):
        before = start.get("entries", {}).get(path) or {}
        same = (entry.get("grad") or {}).get("identity") == (before.get("grad") or {}).get("identity")
        if before.get("grad") is not None and same:
            lines.append(f"{path}.grad.add_(torch.tensor({_literal(_shaped(added, entry.get('shape')))}, "
                         f"dtype={entry.get('dtype')}))")
    return Move("shift each gradient by the number that makes it come out", "\n".join(lines)) if lines else None


def _typed_grads(question: Question, paths: list[str], start: dict, flipped: bool = False) -> Move | None:
    """The solution, with each target's .grad that it reads written in as the numbers the start holds;
    ``flipped``: written with the other sign, negated again (``-torch.tensor([4.03])``), as a learner
    who typed the number and let the operator beside it carry the sign."""
    code = question.solution
    for path in paths:
        grad = (start.get("entries", {}).get(path) or {}).get("grad")
        if grad is None or grad.get("values") is None:
            continue
        values = _negated(grad["values"]) if flipped else grad["values"]
        typed = _tensor({"values": values, "dtype": grad.get("dtype")}, flags=False)
        # A read: `w.grad` not followed by a method call on it, an attribute, or an assignment.
        pattern = re.compile(rf"(?<![\w.]){re.escape(path)}\.grad(?![\w.(\[])(?!\s*=[^=])")
        code = pattern.sub(f"(-{typed})" if flipped else typed, code)
    if code == question.solution:
        return None
    return Move("the solution with the gradients it reads typed in as numbers"
                + (", with the other sign" if flipped else ""), code)


def _negated(values: Any) -> Any:
    if isinstance(values, list):
        return [_negated(v) for v in values]
    return -values if isinstance(values, (int, float)) and not isinstance(values, bool) else values


# -- writing code ------------------------------------------------------------------------

def _shaped(flat: list, shape: list | None) -> Any:
    """A flat list of numbers in ``shape`` (a scalar for shape [])."""
    shape = list(shape or [])
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    return [_shaped(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])] if len(shape) > 1 \
        else list(flat)


def _hidden(value: Any) -> str:
    """A literal whose numbers are written as float.fromhex strings (no number a code rule reads)."""
    if isinstance(value, list):
        return "[" + ", ".join(_hidden(v) for v in value) + "]"
    return f"float.fromhex({float(value).hex()!r})"


def _changed(before: dict | None, after: dict) -> bool:
    if before is None or before.get("kind") != "tensor":
        return True
    return any(before.get(k) != after.get(k) for k in ("values", "requires_grad")) or \
        _grad_of(before.get("grad")) != _grad_of(after.get("grad"))


def _set_tensor(path: str, entry: dict) -> str:
    lines = [f"with torch.no_grad():\n    {path}.copy_({_tensor(entry, flags=False)})"]
    if entry.get("is_leaf"):
        lines.append(f"{path}.requires_grad_({entry.get('requires_grad')!r})")
    lines.append(f"{path}.grad = {_grad(entry.get('grad'))}")
    return "\n".join(lines)


def _grad_of(grad: dict | None) -> Any:
    return None if grad is None else grad.get("values")


def _tensor(entry: dict, flags: bool = True) -> str:
    args = f"{_literal(entry.get('values'))}, dtype={entry.get('dtype')}"
    if flags and entry.get("requires_grad"):
        args += ", requires_grad=True"
    return f"torch.tensor({args})"


def _grad(grad: dict | None) -> str:
    if grad is None or grad.get("values") is None:
        return "None"
    return f"torch.tensor({_literal(grad['values'])}, dtype={grad.get('dtype')})"


def _literal(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, str) and value in ("nan", "inf", "-inf"):
        return f"float({value!r})"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    return repr(value)


def _known(values: Any, numbers: set[float]) -> bool:
    """Every number in ``values`` is one the lesson writes (making it is not typing in an answer)."""
    return all(any(math.isclose(float(v), n, rel_tol=1e-9, abs_tol=1e-12) for n in numbers)
               for v in flatten(values) if isinstance(v, (int, float)) and not isinstance(v, bool))


def _is_name(path: str) -> bool:
    return path.isidentifier()
