"""Which .grad changes in a step no backward pass made, though no wrapper saw them (writes.py sees only
``x.grad = t`` through torch.Tensor): ``torch._C.TensorBase.grad.__set__(x, t)``, ``x.grad.mul_(2)``.

Each row's tensor (a leaf, or one that retains its grad) is noted by the state of its .grad: which tensor
it is and that tensor's version counter (an in-place op bumps it; a .grad set anew is another tensor).
Noted as the step starts and just before and after each backward pass (backward_log.py calls here): a
state that moved outside a pass, before the first, between two or after the last, was written by
something else; so was a .grad whose value changed in a step where no pass moved it (a write through
.data bumps no version). A retained non-leaf .grad that a pass replaced can take the old one's address,
storage and version, so its state holds its values too (up to VALUES_NOTED numbers), and a row whose .grad
a pass moved is read again (writes.MARKED). Only the first PASSES_WATCHED passes of a step are noted: a
training loop's others run at torch's speed, and what they moved is not told apart.
"""

from __future__ import annotations

from typing import NamedTuple

from gradrepl.kernel.inspect import writes
from gradrepl.kernel.inspect.captured import DATA_PTR, DETACH, GET, NO_TORCH_FUNCTION, NUMEL, TOLIST, _id

PASSES_WATCHED = 64
VALUES_NOTED = 16  # a retained non-leaf .grad's numbers kept in its state, as the shadow formulas' cap

_watched: list[list] = []  # [weakref to the tensor, the state of its .grad when last noted]
_outside: set[int] = set()  # ids of tensors whose .grad state moved outside a pass
_by_pass: set[int] = set()  # ids of tensors whose .grad state a pass moved
_passes = 0
_depth = 0  # a pass run from inside another's hook is part of that pass


class Origins(NamedTuple):
    outside: frozenset[int]            # .grad moved outside any backward pass
    by_pass: frozenset[int] | None     # .grad moved by one (None: passes ran unwatched, any may have)


def begin(refs) -> None:
    """A step starts: note the .grad of each tensor the weak references in `refs` still reach."""
    global _passes, _depth
    _outside.clear()
    _by_pass.clear()
    _passes = _depth = 0
    with NO_TORCH_FUNCTION():  # only a tensor that requires grad has a .grad a pass writes: the rest cost nothing
        _watched[:] = [[ref, _state(tensor)] for ref in refs
                       if (tensor := ref()) is not None and GET["requires_grad"](tensor)]


def before_pass() -> None:
    global _depth
    _depth += 1
    if _depth == 1 and _passes < PASSES_WATCHED:
        _note(_outside)


def after_pass() -> None:
    global _depth, _passes
    _depth -= 1
    if _depth == 0:
        _passes += 1
        if _passes <= PASSES_WATCHED:
            _note(_by_pass)


def end() -> Origins:
    """The step ended: which .grad states moved outside a pass, and which a pass moved."""
    if _passes <= PASSES_WATCHED:
        _note(_outside)
    return Origins(frozenset(_outside), frozenset(_by_pass) if _passes <= PASSES_WATCHED else None)


def _note(moved: set[int]) -> None:
    """Each watched .grad's state now; the id of each whose state moved since last noted goes in `moved`."""
    with NO_TORCH_FUNCTION():
        for entry in _watched:
            tensor = entry[0]()
            if tensor is None:
                continue
            state = _state(tensor)
            if state != entry[1]:
                moved.add(_id(tensor))
                entry[1] = state
                if moved is _by_pass:
                    writes.MARKED.add(_id(tensor))  # the row's own key may not see it (a retained grad)


def _state(tensor) -> tuple | None:
    """Which tensor holds `tensor`'s .grad, and its version (None: no .grad, or none a pass writes)."""
    try:
        leaf = tensor is not None and GET["is_leaf"](tensor)
        if not leaf and not (tensor is not None and GET["retains_grad"](tensor)):
            return None
        grad = GET["grad"](tensor)
        if grad is None:
            return None
        values = None if leaf or NUMEL(grad) > VALUES_NOTED else repr(TOLIST(DETACH(grad)))  # nan == nan
        return _id(grad), DATA_PTR(grad), GET["_version"](grad), values
    except Exception:  # a tensor without storage (a transform's wrapper): nothing to note
        return None
