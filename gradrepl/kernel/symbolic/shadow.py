"""A symbolic shadow of small tensors: while learner code runs, every op on a
small tensor that requires grad also records the same formula, which becomes
a sympy expression when a check asks for it.

Read it as autograd done a second time, by hand:

- a *leaf* (requires_grad, no grad_fn) becomes symbols, one per element;
- a tensor that does not require grad is a *constant*: its values, frozen
  when it was used (so ``detach()``, ``.data`` and ``torch.no_grad()`` give
  constants, exactly as autograd sees them);
- an op's output gets the op applied to its inputs' formulas, elementwise
  (formulas live in numpy object arrays, so broadcasting is numpy's, which
  is torch's; each element is a small Formula tree, since building sympy
  objects on every op would cost ~100 µs where a tree node costs ~1 µs);
- an op we do not understand is named ("F.conv1d is not traced
  symbolically") and everything computed from it carries that reason, so a
  formula is either right or absent, never silently wrong.

Only outputs with at most MAX_ELEMENTS elements that require grad are
traced; anything else costs one attribute check per op. A step is traced for
its first MAX_CALLS torch calls only: then the mode takes itself off torch's
mode stack, so a long training loop runs at torch's own speed, and what it
makes afterwards is "too long to check".

This module is the mode; formula.py holds the formulas, recorder.py the shadows,
rules.py what each op makes of its inputs, limits.py the bounds above.
"""

from __future__ import annotations

import sys

import torch
from torch.overrides import TorchFunctionMode

from gradrepl.kernel.symbolic.limits import MAX_CALLS, MAX_ELEMENTS
from gradrepl.kernel.symbolic.recorder import ShadowRecorder
from gradrepl.kernel.symbolic.rules import in_place_base, op_name


# -- the mode ----------------------------------------------------------------------------

RECORDER = ShadowRecorder()
_kinds: dict = {}  # func -> (name, in-place base or None, is backward, can flip requires_grad)
# Calls that can change a tensor's requires_grad flag (the property covers both get and set).
FLAG_FLIPPERS = frozenset({"requires_grad_", "requires_grad", "detach_"})


class ShadowMode(TorchFunctionMode):
    """Runs every torch call as usual, then records formulas for small outputs that require grad.

    After MAX_CALLS calls it stops recording and leaves torch's mode stack at
    the next line of Python (see _leave_when_on_top), so the rest of the step
    pays nothing for it.
    """

    def __init__(self, recorder: ShadowRecorder = RECORDER):
        super().__init__()
        self.recorder = recorder
        self.flipped_requires_grad = False  # the inspector's hint: may any flag have changed?
        self.calls = 0
        self.stopped = False  # past MAX_CALLS: calls pass straight through until the mode is off the stack
        self.off_stack = False
        self._traced_frames: list = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.calls += 1
        if self.calls > MAX_CALLS:
            if not self.stopped:
                self._stop()
            return func(*args, **kwargs)
        kind = _kinds.get(func)
        if kind is None:
            name = op_name(func)
            kind = _kinds[func] = (name, in_place_base(name), name == "backward", name in FLAG_FLIPPERS)
        name, in_place, is_backward, flips = kind
        if flips:
            self.flipped_requires_grad = True
        if is_backward:
            return self._backward(func, args, kwargs)
        before = None
        if in_place and args and isinstance(args[0], torch.Tensor) and args[0].numel() <= MAX_ELEMENTS \
                and torch.is_grad_enabled():  # under no_grad, record() only marks the output as changed
            if _any_requires_grad(args):
                before = self._safe(lambda: self.recorder.shadow_of(args[0]))
        out = func(*args, **kwargs)
        if isinstance(out, torch.Tensor):
            if not out.requires_grad or out.grad_fn is None or out.numel() > MAX_ELEMENTS:
                return out
        elif not (isinstance(out, (tuple, list)) or name == "__setitem__"):
            return out
        self._safe(lambda: self.recorder.record(func, name, args, kwargs, out, before))
        return out

    def __exit__(self, exc_type, exc_value, traceback):
        self._stop_tracing()
        if not self.off_stack:
            super().__exit__(exc_type, exc_value, traceback)

    def _stop(self) -> None:
        self.stopped = True
        self.flipped_requires_grad = True  # untraced calls may flip any flag
        self.recorder.cut()
        self._leave_when_on_top()

    def _leave_when_on_top(self) -> None:
        """Pop this mode off torch's stack at the next line of Python run outside a torch call.

        Inside __torch_function__ torch has taken the mode off its stack and puts it back
        afterwards, so it cannot leave from here. A line tracer on the frames below does it
        instead: at their next line the mode is on top again, and is popped (as its own
        __exit__ would); the tracer then removes itself. A tracer already set (a debugger)
        is left alone: the mode then just passes calls through.
        """
        if sys.gettrace() is not None:
            return
        frame = sys._getframe(1)
        while frame is not None:
            self._traced_frames.append(frame)
            frame = frame.f_back

        def tracer(frame, event, arg):
            stack = torch._C._len_torch_function_stack()
            if stack and torch._C._get_function_stack_at(stack - 1) is self:
                torch._C._pop_torch_function_stack()
                self.off_stack = True
                self._stop_tracing()
                return None
            return tracer

        for frame in self._traced_frames:
            frame.f_trace = tracer
        sys.settrace(tracer)

    def _stop_tracing(self) -> None:
        if self._traced_frames:
            sys.settrace(None)
            for frame in self._traced_frames:
                frame.f_trace = None
            self._traced_frames = []

    def _backward(self, func, args, kwargs):
        root = args[0] if args else None
        if isinstance(root, torch.Tensor) and root.requires_grad:
            gradient = kwargs.get("gradient", args[1] if len(args) > 1 else None)
            self._safe(lambda: self.recorder.before_backward(root, gradient))
        return func(*args, **kwargs)

    @staticmethod
    def _safe(work):
        try:
            return work()
        except Exception:  # the shadow is a helper: its failure must not change what learner code does
            return None


def _any_requires_grad(args) -> bool:
    return any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
