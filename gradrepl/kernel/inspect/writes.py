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
"""

from __future__ import annotations

import torch

MARKED: set[int] = set()  # ids of tensors that may have been written behind their version counter

_BASE = torch._C.TensorBase
_installed = False


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
    data = _BASE.__dict__["data"]
    grad = _BASE.__dict__["grad"]
    retain_grad = _BASE.__dict__["retain_grad"]

    def get_data(self):
        _mark(self)
        return data.__get__(self)

    def set_data(self, value):
        _mark(self)
        data.__set__(self, value)

    def set_grad(self, value):
        _mark(self)
        grad.__set__(self, value)

    def delete_grad(self):
        _mark(self)
        grad.__delete__(self)

    def retain(self):
        _mark(self)
        return retain_grad(self)

    torch.Tensor.data = _NamedProperty("data", get_data, set_data, None, data.__doc__)
    torch.Tensor.grad = _NamedProperty("grad", grad.__get__, set_grad, delete_grad, grad.__doc__)
    retain.__name__ = retain.__qualname__ = "retain_grad"
    retain.__doc__ = retain_grad.__doc__
    torch.Tensor.retain_grad = retain


def take() -> frozenset[int]:
    """The ids marked since the last call; the marks start afresh."""
    if not MARKED:
        return frozenset()
    marked = frozenset(MARKED)
    MARKED.clear()
    return marked


def _mark(t) -> None:
    MARKED.add(id(t))
    base = t._base
    if base is not None:
        MARKED.add(id(base))

