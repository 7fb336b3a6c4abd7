"""Which .grad changes in a step no backward pass made, though no wrapper saw them (writes.py sees only
``x.grad = t`` through torch.Tensor): ``torch._C.TensorBase.grad.__set__(x, t)``, ``x.grad.mul_(2)``.

Each row's tensor that requires grad is noted by the state of its .grad: which tensor it is and that
tensor's version counter (an in-place op bumps it; a .grad set anew is another tensor). Noted as the step
starts, as it ends, and just before and after each backward pass that reaches it (backward_log.py walks the
pass's graph and calls here: a leaf whose AccumulateGrad the pass runs, a tensor in backward(inputs=...), a
non-leaf whose node is in the graph, for its retained grad). A state that moved other than during a pass
that reached it (before, between, after the passes, or in a hook of a pass that never reached it) was
written by something else; so was a .grad whose value changed in a step where no pass moved it (a write
through .data bumps no version). A retained non-leaf .grad that a pass replaced can take the old one's
address, storage and version, so its state holds its values too (up to VALUES_NOTED numbers), and a row
whose .grad a pass moved is read again (writes.MARKED). Per pass the work is the graph's, not the rows'.

Only the first PASSES_WATCHED passes of a step are walked (a training loop's others run at torch's speed),
and a graph past WALK_NODES nodes is not: after such a pass, a .grad that moved since it was last noted
counts as not told apart (no "+added" claim). Reading a state runs no learner code: no values are read of a
.grad that is a tensor subclass, or while a dispatch mode is on (its __torch_dispatch__ could raise anything).
"""

from __future__ import annotations

from typing import NamedTuple

from gradrepl.kernel.inspect import writes
from gradrepl.kernel.inspect.captured import (DATA_PTR, DETACH, DISPATCH_DEPTH, GET, NO_TORCH_FUNCTION, NUMEL,
                                              TENSOR_TYPES, TOLIST, _id, _type, dict_get)

PASSES_WATCHED = 64
WALK_NODES = 100_000  # a pass's graph walked to find what it reaches (a larger one: not told apart)
VALUES_NOTED = 16  # a retained non-leaf .grad's numbers kept in its state, as the shadow formulas' cap

_watched: dict[int, list] = {}  # id(tensor) -> [weakref to the tensor, its .grad's state and numbers when last noted]
_by_node: dict[int, list] = {}  # id(grad_fn) -> entries of the retaining non-leaf rows it was the node of at the first pass
_open: list = []  # the entries each pass running now reached (None: not known); a hook's pass is inside another's
_outside: set[int] = set()  # ids of tensors whose .grad state moved other than by a pass that reached them
_by_pass: set[int] = set()  # ids of tensors whose .grad state a pass that reached them moved
_walked = 0  # passes of this step whose reach was looked up
_blind = False  # a pass ran whose reach is not known: what moved since last noted is not told apart


class Origins(NamedTuple):
    outside: frozenset[int]  # .grad moved other than by a backward pass that reached it (or not told apart)
    by_pass: frozenset[int]  # .grad moved by a pass that reached it


def begin(refs) -> None:
    """A step starts: note the .grad of each tensor the weak references in `refs` still reach."""
    global _walked, _blind
    for table in (_watched, _by_node, _outside, _by_pass):
        table.clear()
    _open.clear()
    _walked, _blind = 0, False
    with NO_TORCH_FUNCTION():  # only a tensor that requires grad has a .grad a pass writes: the rest cost nothing
        for ref in refs:
            tensor = ref()
            if tensor is None or not GET["requires_grad"](tensor):
                continue
            _watched[_id(tensor)] = [ref, _state(tensor), None]


def watching() -> bool:
    """Whether the next pass's reach is wanted (backward_log.py walks its graph only then)."""
    return bool(_watched) and not _blind and _walked < PASSES_WATCHED


def before_pass(reach) -> None:
    """A pass starts; `reach` is (the tensors it accumulates into, the nodes of its graph), or None: not known."""
    global _walked, _blind
    entries = None
    if reach is not None and watching():
        if not _walked:
            _find_nodes()
        _walked += 1
        entries = _reached(*reach)
        inside = {_id(entry) for known in _open if known for entry in known}  # an enclosing pass may have moved it
        with NO_TORCH_FUNCTION():
            for entry in entries:
                _note(entry, _by_pass if _id(entry) in inside else _outside, "read")
    elif _watched:
        _blind = True
    _open.append(entries)


def after_pass() -> None:
    entries = _open.pop() if _open else None
    with NO_TORCH_FUNCTION():
        for entry in entries or ():
            _note(entry, _by_pass, "compared")


def end() -> Origins:
    """The step ended: which .grad states moved other than by a pass that reached them, and which a pass moved."""
    with NO_TORCH_FUNCTION():
        for entry in _watched.values():
            _note(entry, _outside)
    return Origins(frozenset(_outside), frozenset(_by_pass))


def _find_nodes() -> None:
    """Each watched non-leaf that retains its grad, under its node's id, as the step's first watched pass
    finds them (a step without a backward pass reads no grad_fn: a read makes the node's Python object)."""
    with NO_TORCH_FUNCTION():
        for entry in _watched.values():
            tensor = entry[0]()
            if tensor is not None and not GET["is_leaf"](tensor) and GET["retains_grad"](tensor):
                _by_node.setdefault(_id(GET["grad_fn"](tensor)), []).append(entry)


def _reached(leaves, nodes) -> list:
    """The watched entries of the tensors a pass accumulates into and of the non-leaf rows whose node it runs."""
    found = []
    with NO_TORCH_FUNCTION():
        for leaf in leaves:
            entry = dict_get(_watched, _id(leaf))
            if entry is not None and entry[0]() is leaf:
                found.append(entry)
        if _by_node:
            for node in nodes:
                for entry in dict_get(_by_node, _id(node), ()):
                    tensor = entry[0]()
                    if tensor is not None and GET["grad_fn"](tensor) is node:
                        found.append(entry)
    return found


def _note(entry: list, moved: set[int], numbers: str = "kept") -> None:
    """An entry's .grad state now; its tensor's id goes in `moved` if the state moved since last noted.
    Around a pass that reached it a retained grad's numbers are read too ("read" before the pass,
    "compared" after: the pass may have replaced it by a .grad with the old one's address, storage and
    version); only there: a step's start and end read no numbers, so they cost the rows' getters alone."""
    tensor = entry[0]()
    if tensor is None:
        return
    state = _state(tensor)
    values = entry[2] if numbers == "kept" else _values(tensor)
    if state != entry[1] or numbers == "compared" and values != entry[2]:
        moved.add(_id(tensor))
        entry[1] = state
        if moved is _by_pass:
            writes.MARKED.add(_id(tensor))  # the row's own key may not see it (a retained grad)
    entry[2] = values


def _state(tensor) -> tuple | None:
    """Which tensor holds `tensor`'s .grad, and its version (None: no .grad, or none a pass writes). Only
    TensorBase's own getters, and a plain .grad's storage: no learner code runs."""
    try:
        if not GET["is_leaf"](tensor) and not GET["retains_grad"](tensor):
            return None
        grad = GET["grad"](tensor)
        if grad is None:
            return None
        if _type(grad) not in TENSOR_TYPES:  # a subclass: its __torch_dispatch__ may run on any op
            return _id(grad), _type(grad), GET["_version"](grad)
        return _id(grad), DATA_PTR(grad), GET["_version"](grad)
    except Exception:  # a tensor without storage (a transform's wrapper): nothing to note
        return None


def _values(tensor) -> str | None:
    """A retained non-leaf's plain .grad as text (repr: nan == nan), up to VALUES_NOTED numbers; else None.
    None too for a subclass, or while a dispatch mode is on (a __torch_dispatch__ would run on DETACH)."""
    try:
        if GET["is_leaf"](tensor) or not GET["retains_grad"](tensor) or DISPATCH_DEPTH():
            return None
        grad = GET["grad"](tensor)
        return repr(TOLIST(DETACH(grad))) if _type(grad) in TENSOR_TYPES and NUMEL(grad) <= VALUES_NOTED else None
    except Exception:
        return None
