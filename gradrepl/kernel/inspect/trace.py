"""Backward, node by node: which autograd nodes the engine ran, in which order, with which gradients.

Hooks on the graph record what happens; nothing is predicted (the engine only
guarantees order along dependencies). Every node gets a pre-hook (the order it
started in, and the gradients arriving: ``grad_outputs``) and a hook (the
gradients it passes on: ``grad_inputs``). An ``AccumulateGrad`` is recorded by
a hook on its leaf instead: that hook fires whether the engine runs the node
(``backward``) or only captures the gradient for it (``autograd.grad``).

``preview`` runs ``torch.autograd.grad`` with ``retain_graph=True`` towards
every leaf, so no ``.grad`` changes and the graph stays whole. ``recording``
wraps ``torch.autograd.backward`` and ``torch.autograd.grad`` while a learner
statement runs, so its own backward is traced and changes ``.grad`` as usual.
"""

from __future__ import annotations

import contextlib
import functools
import itertools

import torch

from gradrepl.kernel.inspect.graph import UNNAMED_LEAF
from gradrepl.kernel.inspect.made_by import made_by
from gradrepl.kernel.inspect.saved import reachable
from gradrepl.kernel.inspect.story import Story
from gradrepl.kernel.inspect.summary import summarize

MAX_NODES = 500    # nodes hooked and listed per backward; the rest run unrecorded
MAX_PASSES = 3     # backward calls traced in one statement (a loop may make hundreds)
ACCUMULATE = "AccumulateGrad"


class TraceError(Exception):
    """A trace that cannot start: a code and the names its words need (views/remarks.REQUEST_ERRORS)."""

    def __init__(self, code: str, **names) -> None:
        super().__init__(code)
        self.code, self.names = code, names


class BackwardRecorder:
    """Hooks on one graph, and what they saw, in the order it happened."""

    def __init__(self, roots: list, names: dict[int, str], root_name: str, limit: int = MAX_NODES):
        self.root_name = root_name
        walked = reachable_from(roots, limit + 1)
        self.capped = len(walked) > limit
        self.nodes = walked[:limit]
        self.ids = {node: f"n{index}" for index, node in enumerate(self.nodes)}
        self.records = {node: {"id": self.ids[node], "name": type(node).__name__,
                               "next": [self.ids[child] for child, _ in node.next_functions if child in self.ids],
                               "grad_outputs": None, "grad_inputs": None, "made_by": None,
                               "formulas": None} for node in self.nodes}
        self.leaves = []
        for node in self.nodes:
            if type(node).__name__ == ACCUMULATE:
                self.records[node]["leaf"] = names.get(id(node.variable), UNNAMED_LEAF)
                self.leaves.append(node.variable)
            else:
                self.records[node]["made_by"] = made_by(node)
        self.story = Story(self.nodes, self.records, names)
        self.ran: list = []
        self._handles: list = []

    def __enter__(self) -> "BackwardRecorder":
        for node in self.nodes:
            if type(node).__name__ == ACCUMULATE:
                self._handles.append(node.variable.register_hook(functools.partial(self._accumulate, node)))
            else:
                self._handles.append(node.register_prehook(functools.partial(self._arrive, node)))
                self._handles.append(node.register_hook(functools.partial(self._leave, node)))
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def _arrive(self, node, grad_outputs):
        self.ran.append(node)
        self.records[node]["grad_outputs"] = _summaries(grad_outputs)

    def _leave(self, node, grad_inputs, grad_outputs):
        self.records[node]["grad_inputs"] = _summaries(grad_inputs)
        self.story.check(node, grad_inputs, grad_outputs)  # now: the node's saved values are freed after it runs

    def _accumulate(self, node, grad):
        if self.records[node]["grad_outputs"] is None:  # the hook of a leaf reached twice fires once
            self.ran.append(node)
        self.records[node].update(grad_outputs=_summaries((grad,)), grad_inputs=[])

    def result(self, preview: bool) -> dict:
        """The trace: executed nodes by order (from 1), then any node the engine did not run. ``preview``:
        it ran on the side and changed no .grad (the views word its leaves as what would be added)."""
        order = itertools.count(1)
        ran = set(self.ran)
        self.story.tell()
        nodes = [{"order": next(order), **self.records[node]} for node in self.ran]
        nodes += [{"order": None, **self.records[node]} for node in self.nodes if node not in ran]
        trace = {"root": self.root_name, "nodes": nodes, "capped": self.capped, "note": None, "preview": preview}
        if self.capped:
            trace["note"] = {"code": "trace_capped", "names": {"nodes": len(self.nodes)}}  # views/remarks.py
        return trace


def reachable_from(roots: list, limit: int) -> list:
    """Nodes reachable from several roots, each once."""
    if len(roots) == 1:
        return reachable(roots[0], limit)
    nodes: dict = {}
    for root in roots:
        for node in reachable(root, limit):
            nodes.setdefault(node, None)
    return list(nodes)[:limit]


def preview(t: torch.Tensor, name: str, names: dict[int, str], retained: list[torch.Tensor] = (),
            limit: int = MAX_NODES) -> dict:
    """Run backward from ``t`` with recording, changing no .grad and freeing nothing.

    ``autograd.grad`` leaves leaves' .grad alone but fills the .grad of tensors
    that called ``retain_grad()``; each of ``retained`` gets back the .grad it
    held (that hook replaces .grad, it never adds in place). Hooks the learner
    registered run as in any backward.
    """
    if t.grad_fn is None:
        if t.requires_grad:
            raise TraceError("trace_leaf", name=name)
        raise TraceError("trace_untracked", name=name)
    if t.numel() != 1:
        raise TraceError("trace_not_scalar", name=name, shape=list(t.shape))
    kept = [(tensor, tensor.grad) for tensor in retained]
    with BackwardRecorder([t.grad_fn], names, name, limit) as recorder:
        try:
            leaves = recorder.leaves or [node.variable for node in reachable(t.grad_fn)
                                         if type(node).__name__ == ACCUMULATE]
            torch.autograd.grad(t, leaves, retain_graph=True, allow_unused=True)
        except RuntimeError as exc:
            if "second time" in str(exc):
                raise TraceError("trace_freed", name=name) from None
            raise TraceError("trace_failed", name=name, error=str(exc)) from None
        finally:
            for tensor, grad in kept:
                tensor.grad = grad
    return recorder.result(preview=True)


class StepTraces:
    """Traces of the backward calls a learner statement makes (``%trace STATEMENT``)."""

    def __init__(self, names: dict[int, str], namespace: dict, limit: int = MAX_NODES):
        self.names = names
        self.namespace = namespace  # a root made by the statement itself is named by a top-level lookup
        self.limit = limit
        self.traces: list[dict] = []
        self.untraced = 0

    @contextlib.contextmanager
    def recording(self):
        real_backward, real_grad = torch.autograd.backward, torch.autograd.grad

        @functools.wraps(real_backward)
        def backward(tensors, *args, **kwargs):
            tensors = tensors if isinstance(tensors, torch.Tensor) else tuple(tensors)
            return self._traced(real_backward, tensors, args, kwargs)

        @functools.wraps(real_grad)
        def grad(outputs, *args, **kwargs):
            outputs = outputs if isinstance(outputs, torch.Tensor) else tuple(outputs)
            return self._traced(real_grad, outputs, args, kwargs)

        torch.autograd.backward, torch.autograd.grad = backward, grad
        try:
            yield self
        finally:
            torch.autograd.backward, torch.autograd.grad = real_backward, real_grad

    def _traced(self, real, roots, args, kwargs):
        tensors = [roots] if isinstance(roots, torch.Tensor) else [t for t in roots if isinstance(t, torch.Tensor)]
        grad_fns = [t.grad_fn for t in tensors if t.grad_fn is not None]
        if not grad_fns or len(self.traces) >= MAX_PASSES:
            self.untraced += bool(grad_fns)
            return real(roots, *args, **kwargs)
        root_name = ", ".join(self._name_of(t) for t in tensors)
        with BackwardRecorder(grad_fns, self.names, root_name, self.limit) as recorder:
            try:
                return real(roots, *args, **kwargs)
            finally:
                self.traces.append(recorder.result(preview=False))  # the learner's own backward: .grad changed

    def _name_of(self, t: torch.Tensor) -> str:
        name = self.names.get(id(t))
        if name is None:
            name = next((key for key, value in self.namespace.items() if value is t), "<unnamed tensor>")
        return name

    def result(self) -> dict:
        note = None
        if self.untraced:
            note = {"code": "traces_untraced", "names": {"calls": self.untraced, "kept": MAX_PASSES}}
        return {"traces": self.traces, "note": note}


def _summaries(grads) -> list:
    return [summarize(g) if isinstance(g, torch.Tensor) else None for g in grads]
