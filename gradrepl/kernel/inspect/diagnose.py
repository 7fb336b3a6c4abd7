"""Torch's autograd errors and warnings explained in plain words, and silent accumulation caught.

Explanations are keyed on the text torch itself raises (checked against
torch 2.13 by the tests), so an unknown message gets no explanation rather
than a wrong one.
"""

from __future__ import annotations

import contextlib
import functools

import torch

# (fragment of torch's message, explanation); the first matching fragment wins
_ERRORS = (
    ("grad can be implicitly created only for scalar outputs",
     "backward() starts from a single number (a scalar), and this non-scalar tensor holds several values, "
     "so autograd does not know which gradient to start the graph with. "
     "Reduce it to a scalar first, e.g. y.sum().backward() or y.mean().backward(), "
     "or pass a gradient of the same shape: y.backward(torch.ones_like(y))."),
    ("Trying to backward through the graph a second time",
     "The graph was freed: backward() frees the values the graph saved for it, so the same graph cannot be "
     "walked twice. Pass retain_graph=True to the first backward() if you need a second one, "
     "or run the forward computation again to build a fresh graph."),
    ("Only Tensors of floating point and complex dtype can require gradients",
     "Gradients only exist for floating point (or complex) dtypes; this tensor's dtype is an integer type. "
     "Create it with a float dtype, e.g. torch.tensor([1.0, 2.0], requires_grad=True) "
     "or t.float().requires_grad_()."),
    ("only Tensors of floating point dtype can require gradients",
     "Gradients only exist for floating point dtypes; this tensor's dtype is an integer type. "
     "Convert it first: t = t.float().requires_grad_()."),
    ("you can only change requires_grad flags of leaf variables",
     "This tensor is not a leaf: it was computed from others (it has a grad_fn), so autograd decides its "
     "requires_grad from its inputs, and only a leaf's flag can be set by hand. "
     "To get a copy cut off from the graph, use y.detach() (it shares the data and has requires_grad=False); "
     "to stop gradients at the start, set requires_grad on the leaf it was computed from."),
    ("a view of a leaf Variable that requires grad is being used in an in-place operation",
     "This writes in place into part of a leaf that requires grad (like x[0] = 5), which would change "
     "the value autograd recorded. Do the update inside `with torch.no_grad():`, "
     "or build a new tensor with an out-of-place op (e.g. torch.where or x * mask)."),
    ("a leaf Variable that requires grad is being used in an in-place operation",
     "An in-place op (add_, x += 1, x[0] = ...) on a leaf that requires grad would overwrite the value autograd "
     "recorded. For a parameter update wrap it in `with torch.no_grad():`; otherwise use the out-of-place op "
     "(x = x + 1) to make a new tensor."),
    ("one of the variables needed for gradient computation has been modified by an inplace operation",
     "A tensor that an earlier op saved for backward was changed by an in-place op afterwards. Every tensor "
     "has a version counter that in-place ops bump, and backward found a newer version than the one saved. "
     "Use the out-of-place form (y = y * 2 instead of y.mul_(2)), or modify a copy: y = y.clone() before changing it."),
    ("does not require grad and does not have a grad_fn",
     "backward() was called on a tensor with no graph behind it: it has no grad_fn, because nothing it was "
     "computed from requires grad, or it was made under torch.no_grad() / with .detach(). Set "
     "requires_grad=True on the leaf inputs (e.g. x) before computing, outside no_grad, and call backward() "
     "on that result."),
    ("One of the differentiated Tensors does not require grad",
     "torch.autograd.grad was asked for the gradient of an input that does not require grad, so the graph "
     "never recorded it. Only pass inputs (usually leaves) created with requires_grad=True that the output "
     "was computed from."),
    ("Mismatch in shape: grad_output",
     "The gradient passed to backward() must have exactly the shape of the tensor you call it on; "
     "torch.ones_like(y) always fits."),
    ("Setting requires_grad=True on inference tensor outside InferenceMode",
     "This tensor was made inside torch.inference_mode(), which marks it as never needing gradients. "
     "Make a normal copy with t.clone() (outside inference mode), or use torch.no_grad() instead of inference_mode."),
    ("Inplace update to inference tensor outside InferenceMode",
     "Tensors made inside torch.inference_mode() cannot be changed by an in-place op outside it. "
     "Work on a normal copy: t = t.clone()."),
    ("Inference tensors cannot be saved for backward",
     "A tensor made inside torch.inference_mode() was used in a computation the graph records for backward. "
     "Use t.clone() to get a normal tensor, or create it under torch.no_grad() instead."),
)

_WARNINGS = (
    ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",
     "This tensor is not a leaf: it was computed (it has a grad_fn), and backward() fills in .grad only for "
     "leaf tensors (made by you, with requires_grad=True), so its .grad stays None. Call y.retain_grad() "
     "before backward() to keep it, or read the leaf's .grad instead (e.g. x.grad)."),
)


def explain(exc: BaseException) -> str | None:
    """A short explanation of cause and fix for a known autograd error, else None."""
    return _lookup(str(exc), _ERRORS)


def explain_warning(message: str) -> str | None:
    """A short explanation for a known autograd warning text, else None."""
    return _lookup(message, _WARNINGS)


def _lookup(text: str, table) -> str | None:
    for fragment, explanation in table:
        if fragment in text:
            return explanation
    return None


class AccumulationWatch:
    """Notes when a backward() adds into a .grad that already held a non-zero gradient.

    During a step ``torch.autograd.backward`` (which ``Tensor.backward`` calls)
    is wrapped: before the real call the leaves the graph reaches are read, and
    those holding a non-zero .grad are remembered; after it, a grad that changed
    was added into. Usage: ``with watch.during_step(): exec(...)`` then ``watch.notes()``.
    """

    MAX_NAMED = 3  # leaves named in one note before "and N more"

    def __init__(self, inspector) -> None:
        self.inspector = inspector
        self._events: dict[int, tuple[torch.Tensor, str]] = {}  # id(leaf) -> (leaf, what it held)

    @contextlib.contextmanager
    def during_step(self):
        """Watch every backward() run inside the block."""
        self._events = {}
        real = torch.autograd.backward

        @functools.wraps(real)
        def backward(tensors, *args, **kwargs):
            if not isinstance(tensors, torch.Tensor):
                tensors = tuple(tensors)  # read twice: by the watch and by torch
            if kwargs.get("inputs") is not None and not isinstance(kwargs["inputs"], torch.Tensor):
                kwargs["inputs"] = tuple(kwargs["inputs"])
            try:
                before = _nonzero_grads(_leaves(tensors, kwargs.get("inputs")))
            except Exception:  # the watch must never break the learner's backward
                before = []
            result = real(tensors, *args, **kwargs)
            for leaf, grad, version, held in before:
                now = _grad_of(leaf)
                if now is not None and (now is not grad or now._version != version):
                    self._events.setdefault(id(leaf), (leaf, held))
            return result

        torch.autograd.backward = backward
        try:
            yield self
        finally:
            torch.autograd.backward = real

    def notes(self) -> list[str]:
        """Plain-words notes about accumulation seen in the last step (empty if none)."""
        if not self._events:
            return []
        names = self.inspector.names_by_id()
        found = [(names.get(id(leaf)), leaf, held) for leaf, held in self._events.values()]
        self._events = {}
        if len(found) == 1:
            name, leaf, held = found[0]
            grad = f"{name}.grad" if name else f"the .grad of an unnamed leaf of shape {list(leaf.shape)}"
            zero = f"{name}.grad.zero_()" if name else "t.grad.zero_()"
            now = _describe(_grad_of(leaf))
            return [f"{grad} already held {held} before this backward, and now holds {now}: "
                    "gradients accumulate (add up) across backward calls. "
                    f"Zero them with {zero} or optimizer.zero_grad() before each backward."]
        labels = [f"{name}.grad" if name else f"an unnamed leaf's .grad {list(leaf.shape)}"
                  for name, leaf, _ in found]
        shown = ", ".join(labels[: self.MAX_NAMED])
        if len(labels) > self.MAX_NAMED:
            shown += f" and {len(labels) - self.MAX_NAMED} more"
        return [f"{shown} already held non-zero gradients before this backward: "
                "gradients accumulate (add up) across backward calls. "
                "Zero them with optimizer.zero_grad() (or t.grad.zero_() for each) before each backward."]


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
    """(leaf, grad, grad version, description) for leaves whose .grad is already non-zero."""
    found = []
    with torch.no_grad():
        for leaf in leaves:
            grad = _grad_of(leaf)
            if grad is not None and grad.layout == torch.strided and bool(grad.any()):
                found.append((leaf, grad, grad._version, _describe(grad)))
    return found


def _grad_of(t: torch.Tensor) -> torch.Tensor | None:
    """t.grad without torch's warning for non-leaves that keep none."""
    return t._grad if t.is_leaf or t.retains_grad else None


def _describe(grad: torch.Tensor | None) -> str:
    """A gradient's value in a few words: the number itself, or its norm."""
    if grad is None:
        return "nothing"
    with torch.no_grad():
        if grad.numel() == 1:
            return repr(round(grad.item(), 6))
        return f"a gradient of norm {torch.linalg.vector_norm(grad.float()).item():.4g}"
