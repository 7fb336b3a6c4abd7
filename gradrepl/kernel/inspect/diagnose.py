"""Torch's autograd errors and warnings recognised, and silent accumulation caught, as data.

Causes are keyed on the text torch itself raises (checked against torch 2.13
by the tests), so an unknown message gets no diagnosis rather than a wrong one.
The kernel sends a diagnosis code (and, for accumulation, the leaves' names and
numbers); views/diagnosis.py says it in words.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import re
import traceback
import weakref
from dataclasses import dataclass
from typing import Callable

import torch

from gradrepl.kernel.inspect.made_by import RECORD, made_by

# (fragment of torch's message, diagnosis code); the first matching fragment wins. The words for each code
# are the frontend's (views/diagnosis.py): the kernel sends data only.
_ERRORS = (
    ("grad can be implicitly created only for scalar outputs",
     "backward_of_non_scalar"),
    ("Trying to backward through the graph a second time",
     "graph_freed"),
    ("Only Tensors of floating point and complex dtype can require gradients",
     "integer_requires_grad"),
    ("only Tensors of floating point dtype can require gradients",
     "integer_requires_grad_"),
    ("you can only change requires_grad flags of leaf variables",
     "flag_of_non_leaf"),
    ("a view of a leaf Variable that requires grad is being used in an in-place operation",
     "in_place_into_leaf_view"),
    ("a leaf Variable that requires grad is being used in an in-place operation",
     "in_place_on_leaf"),
    ("one of the variables needed for gradient computation has been modified by an inplace operation",
     "saved_tensor_modified"),
    ("does not require grad and does not have a grad_fn",
     "backward_without_graph"),
    ("One of the differentiated Tensors does not require grad",
     "grad_of_untracked_input"),
    ("Mismatch in shape: grad_output",
     "gradient_shape_mismatch"),
    ("Setting requires_grad=True on inference tensor outside InferenceMode",
     "inference_tensor_requires_grad"),
    ("Inplace update to inference tensor outside InferenceMode",
     "inference_tensor_in_place"),
    ("Inference tensors cannot be saved for backward",
     "inference_tensor_saved"),
)

_WARNINGS = (
    ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed", "grad_of_non_leaf"),
)


# -- causes that name the learner's tensors ---------------------------------------------------------
# Each is data: a cause code and the names found (tensors, a layer, a Function, sizes; diagnose() and
# its finders at the end of this file); views/diagnosis.py words them (CAUSE_WORDS). Names come from
# the failing line and the live namespace, looked up, never evaluated. A cause whose names cannot be
# found falls back to the plain code of _ERRORS.


def explain(exc: BaseException) -> str | None:
    """The diagnosis code of a known autograd error, else None."""
    return _lookup(str(exc), _ERRORS)


def explain_warning(message: str) -> str | None:
    """The diagnosis code of a known autograd warning text, else None."""
    return _lookup(message, _WARNINGS)


def _lookup(text: str, table) -> str | None:
    for fragment, code in table:
        if fragment in text:
            return code
    return None


class AccumulationWatch:
    """Notes when a backward() adds into a .grad that already held a non-zero gradient.

    During a step ``torch.autograd.backward`` (which ``Tensor.backward`` calls)
    is wrapped: before the real call the leaves the graph reaches are read, and
    those holding a non-zero .grad are remembered; after it, a grad that changed
    was added into. Usage: ``with watch.during_step(): exec(...)`` then ``watch.diagnoses()``.

    Not every such add is a mistake: micro-batches summed on purpose are several
    backward calls in one step at the same weights. So an add is noted only when
    the gradient it adds onto was made at other weights (the leaf changed since,
    as an optimizer step changes it) or by an earlier step (a cell run again), or
    came from where the watch did not see it. The watch lives as long as the
    kernel, remembering each leaf's version when a watched backward last reached it.

    Reading the graph costs Python work per node, so a training loop's backward
    calls are sampled: the first EVERY_UP_TO of a step, then the 16th, 32nd,
    64th, ... A loop that never zeroes its gradients accumulates on every call,
    so the second call already shows it; a long loop pays for a handful of reads.
    """

    MAX_NAMED = 3  # leaves named in one note before "and N more"
    EVERY_UP_TO = 8  # backward calls of a step watched one by one; after that, at powers of two

    def __init__(self, inspector) -> None:
        self.inspector = inspector
        self._events: dict[int, tuple[torch.Tensor, dict | None]] = {}  # id(leaf) -> (leaf, what it held)
        self._reached: dict[int, tuple[weakref.ref, int, int]] = {}  # id(leaf) -> (leaf, its version, step)
        self._step = 0

    @contextlib.contextmanager
    def during_step(self):
        """Watch backward() calls run inside the block (all of the first few, then a sample)."""
        self._events = {}
        self._step += 1
        self._reached = {key: seen for key, seen in self._reached.items() if seen[0]() is not None}
        real = torch.autograd.backward
        calls = 0

        @functools.wraps(real)
        def backward(tensors, *args, **kwargs):
            nonlocal calls
            calls += 1
            if calls > self.EVERY_UP_TO and calls & (calls - 1):
                return real(tensors, *args, **kwargs)
            if not isinstance(tensors, torch.Tensor):
                tensors = tuple(tensors)  # read twice: by the watch and by torch
            if kwargs.get("inputs") is not None and not isinstance(kwargs["inputs"], torch.Tensor):
                kwargs["inputs"] = tuple(kwargs["inputs"])
            try:
                leaves = _leaves(tensors, kwargs.get("inputs"))
                before = [found for found in _nonzero_grads(leaves) if not self._summed_on_purpose(found[0])]
            except Exception:  # the watch must never break the learner's backward
                leaves, before = [], []
            result = real(tensors, *args, **kwargs)
            for leaf, grad, version, held in before:
                now = _grad_of(leaf)
                if now is not None and (now is not grad or now._version != version):
                    self._events.setdefault(id(leaf), (leaf, held))
            try:
                for leaf in leaves:
                    self._reached[id(leaf)] = (weakref.ref(leaf), leaf._version, self._step)
            except Exception:
                pass
            return result

        torch.autograd.backward = backward
        try:
            yield self
        finally:
            torch.autograd.backward = real

    def _summed_on_purpose(self, leaf: torch.Tensor) -> bool:
        """Did a backward of this very step last reach ``leaf``, with ``leaf`` unchanged since?"""
        ref, version, step = self._reached.get(id(leaf), (None, None, None))
        return ref is not None and ref() is leaf and step == self._step and leaf._version == version

    def diagnoses(self) -> list[dict]:
        """The accumulation seen in the last step as data: [{"code": "accumulated", "leaves": [{"name",
        "shape", "held", "now"}], "more"}], empty if none (views/diagnosis.py words it)."""
        if not self._events:
            return []
        names = self.inspector.names_by_id()
        found = list(self._events.values())
        self._events = {}
        leaves = [{"name": names.get(id(leaf)), "shape": list(leaf.shape), "held": held,
                   "now": _seen(_grad_of(leaf))} for leaf, held in found[: self.MAX_NAMED]]
        return [{"code": "accumulated", "leaves": leaves, "more": len(found) - len(leaves)}]


def _leaves(tensors, inputs) -> list[torch.Tensor]:
    """The tensors whose .grad this backward call adds into."""
    if inputs is not None:
        return [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
    roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
    pending = [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    leaves = [t for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is None and t.requires_grad]
    seen = set(pending)
    while pending:
        node = pending.pop()
        if type(node).__name__ == "AccumulateGrad":
            leaves.append(node.variable)
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                pending.append(child)
    return leaves


def _nonzero_grads(leaves: list[torch.Tensor]) -> list[tuple]:
    """(leaf, grad, grad version, what it held) for leaves whose .grad is already non-zero."""
    found = []
    with torch.no_grad():
        for leaf in leaves:
            grad = _grad_of(leaf)
            if grad is not None and grad.layout == torch.strided and bool(grad.any()):
                found.append((leaf, grad, grad._version, _seen(grad)))
    return found


def _grad_of(t: torch.Tensor) -> torch.Tensor | None:
    """t.grad without torch's warning for non-leaves that keep none."""
    return t._grad if t.is_leaf or t.retains_grad else None


def _seen(grad: torch.Tensor | None) -> dict | None:
    """A gradient in one number: its value when it holds one, else its norm (None: no gradient)."""
    if grad is None:
        return None
    with torch.no_grad():
        if grad.numel() == 1:
            return {"value": round(float(grad.real.item() if grad.is_complex() else grad.item()), 6)}
        return {"norm": torch.linalg.vector_norm(grad.float()).item()}
@dataclass(frozen=True)
class Scene:
    """Where an error happened: the learner's failing line, the step's source, a lookup of names
    (plain and dotted, never evaluated) and every named live tensor."""

    line: str
    source: str
    find: Callable[[str], object]
    tensors: Callable[[], list]

    @classmethod
    def of(cls, exc: BaseException, source: str, learner_files, namespace: dict, inspector) -> "Scene":
        """The scene of an error raised by a step of `source`: its last frame in learner code."""
        frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename in learner_files]

        def find(name: str):
            found = inspector.resolve(name)
            if found is not None:
                return found
            first, *rest = re.findall(r"[A-Za-z_]\w*|\[\d+\]", name) or [""]
            value = namespace.get(first)
            for part in rest:  # only into modules: their members are torch's lookups
                if not isinstance(value, torch.nn.Module):
                    return None
                value = value._modules.get(part[1:-1]) if part.startswith("[") else getattr(value, part, None)
            return value

        def tensors() -> list:
            named = [(name, inspector.resolve(name)) for name in inspector.names_by_id().values()]
            named += [(name, value) for name, value in namespace.items() if isinstance(value, torch.Tensor)]
            return [(name, tensor) for name, tensor in named if isinstance(tensor, torch.Tensor)]

        return cls(frames[-1].line or "" if frames else "", source, find, tensors)


_NAME = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[\d+\])*"
_SIZES = r"\[([\d, ]*)\]"


def diagnose(exc: BaseException, scene: Scene) -> tuple[str, dict[str, str | list[int]]] | None:
    """The cause code and names of an error, for the causes of CAUSE_WORDS, or None."""
    text = str(exc)
    for finder in _FINDERS:
        try:
            found = finder(exc, text, scene)
        except Exception:  # an odd tensor (inference: no version counter) or value: the plain words then
            continue
        if found:  # a name the finder could not know is left out (the words say "the left operand")
            return found[0], {key: value for key, value in found[1].items() if value is not None}
    return None


def _grad_not_tensor(exc, text, scene):
    if "assigned grad expected to be a Tensor or None" in text:
        return "grad_not_tensor", {"t": _before(rf"({_NAME})\.grad\s*=", scene.line, "the tensor")}


def _backward_named(exc, text, scene):
    """A backward that cannot start (a non-scalar, no graph), named by the tensor it was called on."""
    codes = {"grad can be implicitly created only for scalar outputs": "backward_of_non_scalar",
             "does not require grad and does not have a grad_fn": "backward_without_graph"}
    code = next((code for words, code in codes.items() if words in text), None)
    match = re.search(rf"({_NAME})\.backward\(", scene.line)
    if code and match:
        return code, {"t": match.group(1)}


def _grad_of_unrecorded_grad(exc, text, scene):
    """torch.autograd.grad asked to differentiate a gradient that an earlier torch.autograd.grad of the step
    made without create_graph=True: that pass was not recorded, and the flag is what is missing (the
    leaves may well require grad)."""
    if "does not require grad and does not have a grad_fn" not in text:
        return None
    call = next((node for node in ast.walk(_parsed(scene.line) or ast.Module(body=[], type_ignores=[]))
                 if _autograd_grad(node)), None)
    output = None if call is None else (call.args[0] if call.args else
                                        next((k.value for k in call.keywords if k.arg == "outputs"), None))
    if isinstance(output, (ast.List, ast.Tuple)) and output.elts:
        output = output.elts[0]
    if not isinstance(output, ast.Name):
        return None
    for source in (scene.source, *_earlier_sources()):  # the gradient may come from an earlier cell
        for node in ast.walk(_parsed(source) or ast.Module(body=[], type_ignores=[])):
            if not isinstance(node, ast.Assign) or not any(output.id in _bound(t) for t in node.targets):
                continue
            made = node.value.value if isinstance(node.value, ast.Subscript) else node.value
            if _autograd_grad(made) and not any(k.arg == "create_graph" for k in made.keywords):
                return "grad_of_unrecorded_grad", {"t": output.id}
    return None


def _earlier_sources() -> list[str]:
    """The statements of the steps before the failing one, the latest first."""
    if not RECORD.steps:
        return []
    current = RECORD.steps[-1][2]
    return [source for _, source, _ in reversed(RECORD.statements[:current])]


def _grad_without_graph(exc, text, scene):
    """torch.autograd.grad asked to differentiate an output with no graph: no backward() was called, so the
    words speak of that call, naming its output where it is a name."""
    if "does not require grad and does not have a grad_fn" not in text:
        return None
    call = next((node for node in ast.walk(_parsed(scene.line) or ast.Module(body=[], type_ignores=[]))
                 if _autograd_grad(node)), None)
    if call is None:
        return None
    output = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "outputs"), None)
    if isinstance(output, (ast.List, ast.Tuple)) and output.elts:
        output = output.elts[0]
    return "grad_without_graph", {"t": ast.unparse(output) if output is not None else "its output"}


def _autograd_grad(node) -> bool:
    """``node`` is a call of torch.autograd.grad (or autograd.grad)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "grad"):
        return False
    owner = node.func.value
    return (isinstance(owner, ast.Attribute) and owner.attr == "autograd") or \
        (isinstance(owner, ast.Name) and owner.id == "autograd")


def _bound(target) -> set[str]:
    """The names an assignment target binds (``g1, = ...`` binds g1)."""
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _grad_shape(exc, text, scene):
    match = re.search(rf"Function (\w+?)Backward\d* returned an invalid gradient at index (\d+) - got {_SIZES} "
                      rf"but expected shape compatible with {_SIZES}", text)
    if match:
        fn, index, got, want = match.groups()
        return "grad_shape", {"fn": fn, "index": index, "got": _sizes(got), "want": _sizes(want)}


def _grad_count(exc, text, scene):
    match = re.search(r"function (\w+?)Backward\d* returned an incorrect number of gradients "
                      r"\(expected (\d+), got (\d+)\)", text)
    if match:
        return "grad_count", dict(zip(("fn", "expected", "got"), match.groups()))


def _hook_no_grad(exc, text, scene):
    if "cannot register a hook on a tensor that doesn't require gradient" in text:
        return "hook_no_grad", {"t": _before(rf"({_NAME})\.register_hook\(", scene.line, "this tensor")}


def _gradcheck(exc, text, scene):
    match = re.search(r"Jacobian mismatch for output (\d+) with respect to input (\d+)", text)
    if match and type(exc).__name__ == "GradcheckError":
        output, index = match.groups()
        return "gradcheck", {"output": output, "inp": _gradcheck_input(scene.line, int(index))}


def _grad_none(exc, text, scene):
    if not (isinstance(exc, AttributeError) and text.startswith("'NoneType' object has no attribute")):
        return None
    match = re.search(rf"({_NAME})\.grad\.(\w+)", scene.line)
    if not match:
        return None
    name, attr = match.groups()
    tensor = scene.find(name)
    names = {"t": name, "attr": attr + ("()" if re.search(rf"\.grad\.{attr}\(", scene.line) else "")}
    if isinstance(tensor, torch.Tensor) and tensor.grad_fn is not None:
        return "grad_none_non_leaf", names
    if isinstance(tensor, torch.Tensor) and not tensor.requires_grad:
        return "grad_none_no_grad", names
    return "grad_none_yet", names


def _matmul(exc, text, scene):
    match = re.search(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)", text)
    if not match:
        return None
    rows, cols, inner, out = map(int, match.groups())
    sizes = {"rows": str(rows), "cols": str(cols), "inner": str(inner), "out": str(out)}
    # Which operand is which comes from the line's own product (left and right of `@`, matmul's
    # arguments), never from matching shapes: two operands of one shape are still two names. A shape
    # only tells which product of the line failed; an operand that is an expression has no name (None:
    # the words say "the left operand").
    products = _products(_parsed(scene.line) or _parsed(scene.source))
    fits = [(a, b) for a, b in products if _fits(scene.find, a, (rows, cols)) and _fits(scene.find, b, (inner, out))]
    named = [(a, b) for a, b in fits if a is not None or b is not None]
    if named or len(products) == 1 and fits:
        a, b = (named or fits)[0]
        return "matmul", {"a": a, "b": b, **sizes}
    layer, given = _linear_call(scene, inner, out)
    if layer is None:
        return None
    return "matmul_linear", {"a": given if _fits(scene.find, given, (rows, cols)) else None, "layer": layer, **sizes}


def _operand(node: ast.expr) -> str | None:
    """An operand's name as the learner wrote it (x, net.w, xs[0]), or None for an expression."""
    text = ast.unparse(node)
    return text if re.fullmatch(_NAME, text) else None


def _products(tree: ast.Module | None) -> list[tuple[str | None, str | None]]:
    """The matrix products of the failing line (or of its step, for a statement over several lines), as
    (left, right) operand names: a @ b, torch.matmul(a, b), torch.mm(a, b), a.matmul(b), a.mm(b)."""
    found = []
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            found.append((_operand(node.left), _operand(node.right)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("matmul", "mm") and not node.keywords:
            owner = ast.unparse(node.func.value)
            if owner in ("torch", "torch.linalg") and len(node.args) == 2:
                found.append((_operand(node.args[0]), _operand(node.args[1])))
            elif owner not in ("torch", "torch.linalg") and len(node.args) == 1:
                found.append((_operand(node.func.value), _operand(node.args[0])))
    return found


def _fits(find, name: str | None, shape: tuple[int, int]) -> bool:
    """An operand can be the one torch names: unnamed (nothing to check), or its tensor of that shape."""
    return name is None or _flat_shape(find(name)) == shape


def _linear_call(scene, inner: int, out: int) -> tuple[str | None, str | None]:
    """(the nn.Linear whose weight met the input, the name of what the line passed to it) for a
    layer called on the line, or a layer inside a model called on the line (by its weight's shape)."""
    tree = _parsed(scene.line) or _parsed(scene.source)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)] if tree is not None else []
    for call in calls:
        name = _operand(call.func)
        value = scene.find(name) if name else None
        if isinstance(value, torch.nn.Linear) and value.in_features == inner:
            return name, _operand(call.args[0]) if call.args else None
    for call in calls:  # a model called on the line: the layer inside it whose weight is out×inner
        name = _operand(call.func)
        if name is None or not isinstance(scene.find(name), torch.nn.Module):
            continue
        layer = next((found[:-len(".weight")] for found, tensor in scene.tensors()
                      if found.startswith((name + ".", name + "[")) and found.endswith(".weight")
                      and tuple(tensor.shape) == (out, inner)), None)
        if layer is not None:
            return layer, _operand(call.args[0]) if call.args else None
    return None, None


def _parsed(line: str) -> ast.Module | None:
    """The line (or source) parsed, never run; None if it does not parse (a line of a longer statement)."""
    try:
        return ast.parse(line.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _inplace_saved(exc, text, scene):
    match = re.search(rf"modified by an inplace operation: \[\S+ {_SIZES}\](?:, which is output \d+ of (\w+),)? "
                      r"is at version (\d+); expected version (\d+)", text)
    if not match:
        return None
    shape, maker, got, want = match.groups()
    dims = tuple(_sizes(shape))
    # The saved tensor is the one torch names: the output of `maker` (its in-place changes rebase its
    # grad_fn onto that node), or a leaf when torch names no node; a same-shaped tensor at the same
    # version that some other op made is not it, nor one computed from it: each node stacked on `maker`'s
    # is an in-place op's, which bumped the version, so at most `got` of them lie between.
    by_tensor: dict[int, tuple[str, torch.Tensor]] = {}  # one name a tensor: the learner's own before `_`
    for name, tensor in scene.tensors():
        if tuple(tensor.shape) == dims and tensor._version == int(got) \
                and (_made_by(tensor.grad_fn, maker, int(got) + 1) if maker else tensor.grad_fn is None):
            if id(tensor) not in by_tensor or by_tensor[id(tensor)][0].startswith("_"):
                by_tensor[id(tensor)] = (name, tensor)
    candidates = list(by_tensor.values())
    ops = {name: _inplace_op(tensor, maker, int(got), int(want)) for name, tensor in candidates}
    changed = {name: _changer(name, scene.source) for name, _ in candidates}
    ops.update({name: _earlier_change(name) for name, _ in candidates if not ops[name] and not changed[name]})
    named = [name for name, _ in candidates if ops[name] or changed[name]]
    if len(named) != 1 and len(candidates) != 1:
        return None  # unsure which tensor it is: the plain words
    name = named[0] if len(named) == 1 else candidates[0][0]
    versions = {"t": name, "got": got, "want": want}
    if ops[name]:
        return "inplace_saved", {**versions, **ops[name]}
    if changed[name]:
        return "inplace_saved_in_step", {**versions, "changer": changed[name]}
    return "inplace_saved_op_unknown", versions


# An in-place form in a statement's text: a method ending in _ (y.mul_(2), torch.relu_(y)), an augmented
# assignment (y += 1), an assignment into part of it (y[0] = 5), a layer built with inplace=True.
_IN_PLACE = re.compile(r"\w_\(|(?:\*\*|//|>>|<<|[-+*/@%&|^])=(?!=)|\]\s*=(?!=)|inplace\s*=\s*True")


def _inplace_op(tensor: torch.Tensor, maker: str | None, got: int, want: int) -> dict | None:
    """{"changer", "step", "line"}: the learner's statement whose in-place op took `tensor` past the saved
    version, else None. Each in-place op on a tensor with a graph stacks a node on its grad_fn (and bumps
    its version once), so the op that made version want + 1 is got - want - 1 nodes down from the top;
    made_by knows the statement that made that node. Under torch.no_grad() an in-place op bumps the
    version and stacks nothing, so the statement found must read as an in-place op, and sit above the node
    of the op that made the tensor when torch names that (a saved output; for a saved input torch names
    the tensor's grad_fn now)."""
    node = tensor.grad_fn
    for _ in range(got - want - 1):
        node = _below(node)
    if node is None or maker and not _made_by(tensor.grad_fn, maker, depth=1) and not _made_by(_below(node), maker, got):
        return None
    made = made_by(node)
    source = (made or {}).get("source") or ""
    changer = next((line.strip() for line in source.splitlines() if _IN_PLACE.search(line)), None)
    if changer is None:
        return None
    return {"changer": changer, "step": str(made["step"]), "line": str(made["line"])}


def _earlier_change(name: str) -> dict | None:
    """{"changer", "step", "line"}: the last statement of an earlier step that changes `name` in place
    (y.mul_(3) under no_grad, w[0] = 2 on a tensor with no graph), by its text; None if none does (the
    failing step's own source is read next, by _changer)."""
    record = RECORD
    if not record.steps:
        return None
    current = record.steps[-1][2]  # the failing step's first statement: its lines may not have run yet
    for index in range(current - 1, -1, -1):
        line, source, _ = record.statements[index]
        if _changer(name, source):
            step = next(step for _, step, first, _ in reversed(record.steps) if first <= index)
            return {"changer": source.strip().splitlines()[0], "step": str(step), "line": str(line)}
    return None


def _below(node):
    """The node an in-place op's node was stacked on (its first input's), or None."""
    return node.next_functions[0][0] if node is not None and node.next_functions else None


def _made_by(node, maker: str, depth: int = 8) -> bool:
    """`node` is `maker`'s, or an in-place op's stacked on it (each rebases the grad_fn onto the last)."""
    while node is not None and depth > 0:
        if re.fullmatch(rf"{re.escape(maker)}(?:Backward\d*)?", type(node).__name__):  # torch says "Exp"
            return True
        node = _below(node)
        depth -= 1
    return False


_FINDERS = (_backward_named, _grad_of_unrecorded_grad, _grad_without_graph, _grad_not_tensor, _grad_shape, _grad_count, _hook_no_grad, _gradcheck, _grad_none, _matmul,
            _inplace_saved)


def _sizes(text: str) -> list[int]:
    """A shape torch wrote as `[2, 3]`, as its sizes (views write it 2×3)."""
    return [int(size) for size in text.replace(" ", "").split(",") if size]


def _before(pattern: str, line: str, default: str) -> str:
    match = re.search(pattern, line)
    return match.group(1) if match else default


def _flat_shape(value) -> tuple | None:
    """A tensor's shape as a matrix product sees it: its leading dimensions flattened into rows."""
    if not isinstance(value, torch.Tensor) or value.dim() < 1:
        return None
    cols = value.shape[-1]
    return (value.numel() // cols if cols else 0, cols) if value.dim() != 1 else (1, cols)


def _gradcheck_input(line: str, index: int) -> str:
    """The name of gradcheck's input `index` on the line (gradcheck(f, (x, y))), parsed, not run."""
    try:
        tree = ast.parse(line.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return f"input {index}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("gradcheck") and len(node.args) > 1:
            given = node.args[1]
            items = given.elts if isinstance(given, (ast.Tuple, ast.List)) else [given]
            if index < len(items):
                return ast.unparse(items[index])
    return f"input {index}"


def _changer(name: str, source: str) -> str | None:
    """The in-place change of `name` in the step's source (y.add_(1), y += 1, y[0] = 5), in its words."""
    match = re.search(rf"(?<![\w.]){re.escape(name)}\s*(?:\.(\w+_)\(|(\*\*|//|[-+*/@%])=|(\[[^\]\n]*\])\s*=(?!=))",
                      source)
    if not match:
        return None
    method, operator, index = match.groups()
    if method:
        return f"{name}.{method}()"
    return f"{name} {operator}=" if operator else f"{name}{index} = ..."
