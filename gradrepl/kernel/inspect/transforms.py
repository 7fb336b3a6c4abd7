"""Whether a torch.func transform ran in a step: transforms return gradients as values and write no
.grad, so a learner who expected .grad to fill in is told (views/diagnosis.py words it).

The transforms are wrapped once, where the learner reaches them (``torch.func.grad`` and
``from torch.func import grad`` alike); a wrapper counts a call and calls through. A transform
that returns a function (grad, jacrev, ...) counts when that function is called, since that is
when it differentiates.

The tensors a transform returns (at the outermost level: nested transforms are one) are remembered, so
a task's check can ask whether a target is the very tensor a transform gave, unchanged since
(task_state.py's `by_transform`), and not one written by hand beside a transform whose result was dropped.

Each is remembered with what ran inside the outermost transform's call: the modules whose forward ran
(a global forward pre-hook) and the Python functions called (their code objects, by sys.setprofile), both
active only while a transform runs. So a check can ask that the task's own model or function was the one
transformed (`by_transform_of`), not a function written by hand beside it.

Each outermost call also keeps the function the learner handed the transform (``jvp(shifted, ...)``; for
``grad(grad(wave))``, wave, through the wrappers), so a task can run the transform of its own named
function again, at its inputs and at moved ones (`transformed`): a learner's function left buggy is judged
even when the tangent the checks read was taken from another function.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import io
import os
import sys
import types

import torch.func
import torch.nn.modules.module as _module_hooks

from gradrepl.kernel.guard import bounded
from gradrepl.kernel.inspect.captured import DATA_PTR, GET

RERUN_SECONDS = 10.0  # one run again of a learner's function by a task's check (the request's own limit is longer)
_RAISED = object()  # _run_again's call raised an Exception
KEPT = 256  # transform results remembered (the newest): a task reads its targets right after the attempt
# (tensor, data_ptr, version, {id: module whose forward ran}, {id: code object called},
#  (the call, its args, its kwargs, the tensor's index in the result or None): to run it again, moved)
_made: collections.deque = collections.deque(maxlen=KEPT)
# (function, call, args, kwargs) of each outermost transform call, newest last: the function the learner
# handed the transform (``jvp(shifted, ...)``; ``grad(wave)``'s wave), so a task can run its own
# function's transform again (``transformed``).
_given: collections.deque = collections.deque(maxlen=KEPT)
_depth = 0  # transforms running now: only the outermost one's results are the learner's
_derivatives = 0  # derivative calls so far (vjp's pull included): a vmap whose call ran none is no transform
_recording: tuple[dict, dict] | None = None  # (modules, codes) of the outermost call running now
_last: tuple[dict, dict] = ({}, {})  # ... and of the last one that ended (what ran inside a vjp, for its pull)
# A vmap's result is run again with its own inputs kept (the rows of an identity, a batch's directions) and
# the inputs moved where it differentiates: at each outermost derivative call inside it (vjp's primals, a
# grad's point), and a pull made before is made again at its vjp's moved primals.
_moving = False
_inner = 0  # derivative calls running now (vmap not counted): only the outermost moves its inputs
# torch's and gradrepl's own code lives here: a function grad(f) returns copies f's __module__ (functools.wraps),
# but its code is the transform's wrapper, which runs inside every such transform
TORCH_FILES = (os.path.dirname(torch.__file__) + os.sep,
               os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep)
_SETPROFILE, _GETPROFILE, _REGISTER = sys.setprofile, sys.getprofile, _module_hooks.register_module_forward_pre_hook


def _entry(t: torch.Tensor):
    for entry in _made:
        if entry[0] is t and entry[1] == DATA_PTR(t) and entry[2] == GET["_version"](t):
            return entry
    return None


def made_by_transform(t: torch.Tensor) -> bool:
    """Whether `t` is a tensor a transform returned, with its data and version as it returned them."""
    return _entry(t) is not None


def ran_inside(t: torch.Tensor, obj) -> bool:
    """Whether ``obj`` (a module, or a Python function) ran inside the transform call that returned ``t``:
    the module's forward, or the function's code."""
    entry = _entry(t)
    if entry is None:
        return False
    modules, codes = entry[3], entry[4]
    if isinstance(obj, torch.nn.Module):
        return modules.get(id(obj)) is obj
    code = getattr(obj, "__code__", None)
    return code is not None and codes.get(id(code)) is code


def at_moved_inputs(t: torch.Tensor) -> torch.Tensor | None:
    """The transform call that returned ``t`` run again with every floating-point input tensor moved
    (x -> 0.75 x + 0.25), and what it gives there; None when ``t`` is no transform's result or the run
    raised. A transformed function that calls the task's model only as ``net(t) * 0`` beside constants
    computed at this one point gives the same numbers at the moved point; the model's own does not. Its
    prints are dropped, and transforms nested inside run as one, unremembered and uncounted. Raises NoValue
    when the run did not return (_run_again)."""
    global _depth
    entry = _entry(t)
    if entry is None:
        return None
    global _moving
    call, args, kwargs, mapping, index = entry[5]
    _depth += 1
    _moving = mapping
    try:
        result = _run_again(lambda: call(*args, **kwargs) if mapping else call(*_moved(args), **_moved(kwargs)))
    finally:
        _depth -= 1
        _moving = False
    if result is _RAISED:
        return None
    if index is not None:
        result = result[index] if isinstance(result, (tuple, list)) and len(result) > index else None
    return result if isinstance(result, torch.Tensor) else None


def transformed(obj) -> tuple[list, list] | None:
    """The newest transform the learner applied to ``obj`` (a function or module handed to jvp, grad, ...,
    directly or inside another transform: grad(grad(wave)) transforms wave), run again at the inputs it
    was given and at moved ones: (the tensors it returns there, the tensors at the moved inputs); None
    when no transform was applied to ``obj`` or a run raised (NoValue raised: a run did not return,
    _run_again). So a task can judge the learner's own
    function by what its transform computes, not a tangent taken from another function beside it."""
    global _depth
    for func, call, args, kwargs in reversed(_given):
        if not _wraps(func, obj):
            continue
        _depth += 1
        try:
            at = _run_again(lambda: call(*args, **kwargs))
            moved = _RAISED if at is _RAISED else _run_again(lambda: call(*_moved(args), **_moved(kwargs)))
        finally:
            _depth -= 1
        return None if at is _RAISED or moved is _RAISED else (_tensors(at), _tensors(moved))
    return None


def _run_again(call):
    """call(), its prints dropped; _RAISED when it raised an Exception (the learner's function may raise at
    another point: nothing to compare). NoValue (guard.py) when it did not return: it ran past RERUN_SECONDS
    or raised a BaseException (KeyboardInterrupt, SystemExit), which must not end the check's request, nor
    the kernel; the check says so in words."""
    def quietly():
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                return call()
        except Exception:
            return _RAISED
    return bounded(quietly, RERUN_SECONDS)


def _wraps(func, obj) -> bool:
    """``func`` is ``obj``, or a transform's result (counted here) made from ``obj``, however deep."""
    for _ in range(64):
        if func is obj:
            return True
        if type(func) is not types.FunctionType:  # only our own wrappers are followed, read from their dict
            return False
        func = func.__dict__.get("_gradrepl_of")
    return False


def _tensors(result) -> list:
    many = isinstance(result, (tuple, list))
    return [value for value in (result if many else (result,)) if isinstance(value, torch.Tensor)]


def _moved(value):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        moved = value.detach() * 0.75 + 0.25
        try:
            return moved.requires_grad_() if value.requires_grad else moved
        except RuntimeError:  # inside vmap (a pull made again at moved primals), where no flag can be set
            return moved
    if isinstance(value, (tuple, list)):
        return type(value)(_moved(v) for v in value)
    if isinstance(value, dict):
        return {k: _moved(v) for k, v in value.items()}
    return value


def _remember(result, modules: dict, codes: dict, rerun: tuple) -> None:
    many = isinstance(result, (tuple, list))
    for i, value in enumerate(result if many else (result,)):
        if isinstance(value, torch.Tensor):
            try:
                ptr = DATA_PTR(value)
            except RuntimeError:  # a tensor without storage (vmap's, inside a map torch.func did not see)
                continue
            _made.append((value, ptr, GET["_version"](value), modules, codes, (*rerun, i if many else None)))


def _differentiating(call, args: tuple, kwargs: dict, move: bool = True):
    """Call a derivative transform, its inputs moved when it is the outermost one inside a vmap run again
    (``move``: a pull's cotangents are directions, kept)."""
    global _inner, _derivatives
    _derivatives += 1
    if move and _moving and not _inner:
        args, kwargs = _moved(args), _moved(kwargs)
    _inner += 1
    try:
        return call(*args, **kwargs)
    finally:
        _inner -= 1


def _pull(real_vjp, vjp_args: tuple, vjp_kwargs: dict, pull, watch: TransformWatch):
    """vjp's pull, watched: calling it differentiates (the vjp's function ran inside, though before), and a
    vmap over it is a transform whose result a check can read."""
    made_moving = _moving and not _inner
    seen = _recording if _depth else _last

    @functools.wraps(pull)
    def pulled(*cotangents, **kw):
        watch.calls += 1
        if _recording is not None and seen is not _recording:
            _recording[0].update(seen[0])
            _recording[1].update(seen[1])
        if _moving and not _inner and not made_moving:  # made at the old point: made again at the moved one
            def again(*c, **k):
                return real_vjp(*_moved(vjp_args), **_moved(vjp_kwargs))[1](*c, **k)
            return _outermost(None, lambda *c, **k: _differentiating(again, c, k, move=False), *cotangents, **kw)
        return _outermost(None, lambda *c, **k: _differentiating(pull, c, k, move=False), *cotangents, **kw)

    return pulled


def _outermost(func, call, *args, _mapping: bool = False, **kwargs):
    """Run a transform's `call` as the outermost one (what ran inside recorded), `func` the function the
    learner handed it (None for a vmap or a vjp's pull: nothing `transformed` runs again)."""
    global _depth, _recording, _last
    if _depth:
        _depth += 1
        try:
            return call(*args, **kwargs)
        finally:
            _depth -= 1
    modules: dict = {}
    codes: dict = {}
    derivatives = _derivatives

    def forward_ran(module, _inputs):
        modules[id(module)] = module

    earlier = _GETPROFILE()

    def called(frame, event, arg):
        if event == "call":
            codes[id(frame.f_code)] = frame.f_code
        if earlier is not None:
            earlier(frame, event, arg)

    hook = _REGISTER(forward_ran)
    _SETPROFILE(called)
    _depth = 1
    _recording = (modules, codes)
    try:
        result = call(*args, **kwargs)
    finally:
        _depth = 0
        _recording, _last = None, (modules, codes)
        _SETPROFILE(earlier)
        hook.remove()
    if not _mapping or _derivatives != derivatives:  # a vmap that differentiated nothing made no derivative
        _remember(result, modules, codes, (call, args, kwargs, _mapping))
    if func is not None:
        _given.append((func, call, args, kwargs))
    return result


RUN_NOW = ("vjp", "jvp", "linearize")                                   # differentiate when called
RETURN_FUNCTIONS = ("grad", "grad_and_value", "jacrev", "jacfwd", "hessian")  # differentiate when theirs is
MAPS = ("vmap",)  # a transform only when a derivative runs inside (vmap over vjp's pull builds a Jacobian)


class TransformWatch:
    """Counts the torch.func transforms that ran; compare ``calls`` before and after a step."""

    def __init__(self) -> None:
        self.calls = 0

    def install(self) -> None:
        for name in RUN_NOW + RETURN_FUNCTIONS + MAPS:
            real = getattr(torch.func, name, None)
            if real is not None and not hasattr(real, "_gradrepl_counted"):
                wrapped = self._counting(real, returns_function=name not in RUN_NOW, maps=name in MAPS)
                setattr(torch.func, name, wrapped)
                if getattr(torch, name, None) is real:  # torch.vmap is torch.func.vmap
                    setattr(torch, name, wrapped)

    def _counting(self, real, returns_function: bool, maps: bool = False):
        @functools.wraps(real)
        def transform(*args, **kwargs):
            func = args[0] if args else kwargs.get("func")
            if not returns_function:
                self.calls += 1
                result = _outermost(func, lambda *a, **k: _differentiating(real, a, k), *args, **kwargs)
                if real.__name__ == "vjp" and isinstance(result, tuple) and len(result) > 1 and callable(result[1]):
                    result = (result[0], _pull(real, args, kwargs, result[1], self), *result[2:])
                return result
            made = real(*args, **kwargs)

            @functools.wraps(made)
            def differentiated(*inner, **inner_kwargs):
                if maps:
                    return _outermost(None, made, *inner, _mapping=True, **inner_kwargs)
                self.calls += 1
                return _outermost(func, lambda *a, **k: _differentiating(made, a, k), *inner, **inner_kwargs)
            differentiated._gradrepl_of = func
            return differentiated

        transform._gradrepl_counted = True
        return transform
