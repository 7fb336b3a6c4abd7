"""Writes that bump no version counter, caught at the class level.

``w.data -= lr * w.grad``, ``w.data[0] = 7``, ``t.data = other``,
``w.grad.data.zero_()``, a lone ``y.retain_grad()`` and a ``.grad`` assigned
by hand change what a row shows without touching ``w._version``, so the
inspector's cheap checks cannot see them. Instead of per-op work, the few
entry points to such writes are wrapped once on ``torch.Tensor``: reading or
setting ``.data``, setting or deleting ``.grad``, and ``retain_grad()`` add
the tensor's id (and its base's, for a view) to ``MARKED``. The inspector
re-reads the rows of marked tensors, and of tensors whose grad is marked, at
the end of the step. Ids only: nothing is kept alive, and a recycled id at
worst refreshes a row that did not change.

A training loop sets ``p.grad = None`` thousands of times in one step, each a
Python call. Past MARK_BUDGET writes in a step the wrappers come off until the
step ends, and the step's marks say "every row": the inspector reads them all
once, instead of the loop paying for every write.
"""

from __future__ import annotations

import torch

MARKED: set[int] = set()  # ids of tensors that may have been written behind their version counter
GRAD_SET: set[int] = set()  # ids of tensors whose .grad was set or deleted by hand (x.grad = None) this step
MARK_BUDGET = 1000  # writes wrapped in one step; past it the wrappers come off until the step ends

_BASE = torch._C.TensorBase
_NATIVE = {name: _BASE.__dict__[name] for name in ("data", "grad", "retain_grad")}
_WRAPPED: dict[str, object] = {}  # name -> our wrapper, set on torch.Tensor while on
_installed = False
_marks_left = MARK_BUDGET
_overflowed = False  # this step went past the budget: any tensor may have been written


class _NamedProperty(property):
    """A property that keeps the getset's name, so torch-function modes see `data`/`grad` as before."""

    def __init__(self, name: str, fget, fset, fdel, doc: str | None) -> None:
        super().__init__(fget, fset, fdel, doc)
        self.__name__ = name


def install() -> None:
    """Wrap .data, .grad and retain_grad on torch.Tensor (once per process; later calls do nothing)."""
    global _installed
    if _installed:
        return
    _installed = True
    data, grad, retain_grad = _NATIVE["data"], _NATIVE["grad"], _NATIVE["retain_grad"]

    def get_data(self):
        _mark(self)
        return data.__get__(self)

    def set_data(self, value):
        _mark(self)
        data.__set__(self, value)

    def set_grad(self, value):
        _mark(self)
        GRAD_SET.add(id(self))
        grad.__set__(self, value)

    def delete_grad(self):
        _mark(self)
        GRAD_SET.add(id(self))
        grad.__delete__(self)

    def retain(self):
        _mark(self)
        return retain_grad(self)

    retain.__name__ = retain.__qualname__ = "retain_grad"
    retain.__doc__ = retain_grad.__doc__
    _WRAPPED.update(data=_NamedProperty("data", get_data, set_data, None, data.__doc__),
                    grad=_NamedProperty("grad", grad.__get__, set_grad, delete_grad, grad.__doc__),
                    retain_grad=retain)
    _wrap(True)


def _wrap(on: bool) -> None:
    """Our wrappers on torch.Tensor, or (off) the class's own descriptors back, as if never wrapped."""
    for name, wrapper in _WRAPPED.items():
        if on:
            setattr(torch.Tensor, name, wrapper)
        elif name in torch.Tensor.__dict__:
            delattr(torch.Tensor, name)


def take() -> frozenset[int] | None:
    """The ids marked since the last call, or None when that span went past MARK_BUDGET (any tensor may
    have been written: read every row). The marks start afresh, with the wrappers on."""
    global _marks_left, _overflowed, _grads_unknown
    overflowed, _overflowed, _marks_left = _overflowed, False, MARK_BUDGET
    _grads_unknown = _grads_unknown or overflowed
    if overflowed:
        MARKED.clear()
        _wrap(True)
        return None
    if not MARKED:
        return frozenset()
    marked = frozenset(MARKED)
    MARKED.clear()
    return marked


_grads_unknown = False  # a span went past the budget since grads_set() last answered


def grads_set() -> frozenset[int] | None:
    """The ids of tensors whose .grad was set or deleted by hand since the last call (None: past the budget,
    so any may have been). A .grad written so is not what a backward added onto what it held before."""
    global _grads_unknown
    unknown, _grads_unknown = _grads_unknown, False
    found = frozenset(GRAD_SET)
    GRAD_SET.clear()
    return None if unknown else found


def _mark(t) -> None:
    global _marks_left, _overflowed
    MARKED.add(id(t))
    base = t._base
    if base is not None:  # a write through a view changes the row of the tensor it views
        MARKED.add(id(base))
    _marks_left -= 1
    if _marks_left <= 0 and not _overflowed:
        _overflowed = True
        _wrap(False)  # the rest of the step runs at torch's own speed
