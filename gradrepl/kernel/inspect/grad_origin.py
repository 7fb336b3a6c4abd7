"""Which .grad changes in a step no backward pass made, though no wrapper saw them (writes.py sees only
``x.grad = t`` through torch.Tensor): ``torch._C.TensorBase.grad.__set__(x, t)``, ``x.grad.mul_(2)``.

Each row's tensor that requires grad is noted by the state of its .grad: which tensor it is and that
tensor's version counter (an in-place op bumps it; a .grad set anew is another tensor). Noted as the step
starts, as it ends (only the rows whose .grad the panel shows changed: no other is told), and just before
and after each backward pass that reaches it (backward_log.py walks the pass's graph and calls here: a leaf
whose AccumulateGrad the pass runs, a tensor in backward(inputs=...), a non-leaf whose node is in the graph,
for its retained grad). A state that moved other than during a pass
that reached it (before, between, after the passes, or in a hook of a pass that never reached it) was
written by something else; so was a .grad whose value changed in a step where no pass moved it (a write
through .data bumps no version). A retained non-leaf .grad that a pass replaced can take the old one's
address, storage and version, so its state holds its values too (up to VALUES_NOTED numbers), and a row
whose .grad a pass moved is read again (writes.MARKED). Per pass the work is the graph's, not the rows'.

A non-leaf row's node is looked up once, at the first watched pass after the row appears, and kept across
steps (_node_of, _by_node): a pass's graph then finds its candidates by node, each checked by its grad_fn
now. A node changes only by an in-place op on the tensor or its base, and the new node reaches the old one
(the op's edge to what it overwrote), so the old node is in any graph that reaches the new one; a view's
node is looked up at every step's first pass (its base's in-place op makes it a node that does not reach its
old one). A row a step began as a leaf is never looked up that step (to become a non-leaf it must drop
requires_grad and take an in-place op within it: a .grad a pass then gave it counts as set by something else).

Only the first PASSES_WATCHED passes of a step are walked (a training loop's others run at torch's speed),
and a graph past WALK_NODES nodes is not: after such a pass, a .grad that moved since it was last noted
counts as not told apart (no "+added" claim). Reading a state runs no learner code: no values are read of a
.grad that is a tensor subclass, or while a dispatch mode is on (its __torch_dispatch__ could raise anything).
"""

from __future__ import annotations

from typing import NamedTuple

from gradrepl.kernel.inspect import writes
from gradrepl.kernel.inspect.captured import (BASE, DATA_PTR, DETACH, DISPATCH_DEPTH, GET, NO_TORCH_FUNCTION, NUMEL,
                                              TENSOR_TYPES, TOLIST, _id, _type, dict_get)

VIEW = BASE.__dict__["_is_view"]
PASSES_WATCHED = 64
WALK_NODES = 100_000  # a pass's graph walked to find what it reaches (a larger one: not told apart)
VALUES_NOTED = 16  # a retained non-leaf .grad's numbers kept in its state, as the shadow formulas' cap

_watched: dict[int, list] = {}  # id(tensor) -> [weakref to the tensor, its .grad's state and numbers when last noted]
# Kept across steps: id(tensor) -> [weakref, id(its node) when looked up]; id(node) -> weakrefs to the tensors
# it was looked up as the node of (each checked by its grad_fn when a pass reaches the node)
_node_of: dict[int, list] = {}
_by_node: dict[int, list] = {}
_unplaced: list = []  # weakrefs to the non-leaf rows whose node the step's first watched pass looks up
_views: list = []  # weakrefs to the non-leaf rows that are views: looked up at every step's first watched pass
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
    for table in (_watched, _outside, _by_pass, _open, _unplaced):
        table.clear()
    _walked, _blind = 0, False
    with NO_TORCH_FUNCTION():  # only a tensor that requires grad has a .grad a pass writes: the rest cost nothing
        for ref in refs:
            tensor = ref()
            if tensor is None or not GET["requires_grad"](tensor):
                continue
            key = _id(tensor)
            leaf = GET["is_leaf"](tensor)
            _watched[key] = [ref, _state(tensor, leaf), None]
            known = dict_get(_node_of, key)
            if not leaf and (known is None or known[0]() is not tensor):
                _unplaced.append(ref)
    if len(_node_of) > 2 * len(_watched) + 1_000 or len(_by_node) > 2 * len(_node_of) + 1_000:  # rows gone, nodes left
        _forget_gone()


def watching() -> bool:
    """Whether the next pass's reach is wanted (backward_log.py walks its graph only then)."""
    return bool(_watched) and not _blind and _walked < PASSES_WATCHED


def before_pass(reach) -> None:
    """A pass starts; `reach` is (the tensors it accumulates into, the nodes of its graph), or None: not known."""
    global _walked, _blind
    entries = None
    if reach is not None and watching():
        if not _walked:
            _place_nodes()
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


def end(keys) -> Origins:
    """The step ended: which .grad states moved other than by a pass that reached them, and which a pass moved;
    the states now are read of the tensors whose ids are in `keys` (the rows whose .grad the step changed)."""
    with NO_TORCH_FUNCTION():
        for key in keys:
            entry = dict_get(_watched, key)
            if entry is not None:
                _note(entry, _outside)
    return Origins(frozenset(_outside), frozenset(_by_pass))


def _place_nodes() -> None:
    """The node of each non-leaf row not looked up yet, and of each view, as the step's first watched pass
    finds them (a step without a backward pass reads no grad_fn: a read makes the node's Python object)."""
    with NO_TORCH_FUNCTION():
        for ref in _views + _unplaced:
            tensor = ref()
            if tensor is not None and not GET["is_leaf"](tensor):
                _place(ref, tensor, GET["grad_fn"](tensor))
    _unplaced.clear()


def _place(ref, tensor, node) -> None:
    key = _id(tensor)
    known = dict_get(_node_of, key)
    if known is not None and known[0]() is tensor and known[1] == _id(node):
        return
    if known is None or known[0]() is not tensor:
        if VIEW(tensor):
            _views.append(ref)
    _node_of[key] = [ref, _id(node)]
    _by_node.setdefault(_id(node), []).append(ref)


def _forget_gone() -> None:
    """_node_of, _by_node and _views without the tensors that died (and the nodes none is known by)."""
    for key, known in list(_node_of.items()):
        if known[0]() is None:
            del _node_of[key]
    by_node = {}
    for ref, node_id in _node_of.values():
        by_node.setdefault(node_id, []).append(ref)
    _by_node.clear()
    _by_node.update(by_node)
    _views[:] = [ref for ref in _views if ref() is not None]


def _reached(leaves, nodes, seen) -> list:
    """The watched entries of the tensors a pass accumulates into and of the retaining non-leaf rows whose
    node it runs: the rows known by a node the pass reaches, each whose node now is in the graph (`seen`)."""
    found = []
    with NO_TORCH_FUNCTION():
        for leaf in leaves:
            entry = dict_get(_watched, _id(leaf))
            if entry is not None and entry[0]() is leaf:
                found.append(entry)
        looked = set()
        for node in nodes:
            for ref in dict_get(_by_node, _id(node), ()):
                tensor = ref()
                entry = None if tensor is None else dict_get(_watched, _id(tensor))
                if entry is None or entry[0]() is not tensor or _id(tensor) in looked:
                    continue
                looked.add(_id(tensor))
                if GET["is_leaf"](tensor) or not GET["retains_grad"](tensor):
                    continue
                now = GET["grad_fn"](tensor)
                if _id(now) in seen:  # its node now (after an in-place op, one that reaches this one)
                    found.append(entry)
                    _place(ref, tensor, now)
    return found


def _note(entry: list, moved: set[int], numbers: str = "kept") -> None:
    """An entry's .grad state now; its tensor's id goes in `moved` if the state moved since last noted.
    Around a pass that reached it a retained grad's numbers are read too ("read" before the pass,
    "compared" after: the pass may have replaced it by a .grad with the old one's address, storage and
    version); only there: a step's start and end read no numbers, so they cost the rows' getters alone."""
    tensor = entry[0]()
    if tensor is None:
        return
    state = _state(tensor, GET["is_leaf"](tensor))
    values = entry[2] if numbers == "kept" else _values(tensor)
    if state != entry[1] or numbers == "compared" and values != entry[2]:
        moved.add(_id(tensor))
        entry[1] = state
        if moved is _by_pass:
            writes.MARKED.add(_id(tensor))  # the row's own key may not see it (a retained grad)
    entry[2] = values


def _state(tensor, leaf: bool) -> tuple | None:
    """Which tensor holds `tensor`'s .grad, and its version (None: no .grad, or none a pass writes). Only
    TensorBase's own getters, and a plain .grad's storage: no learner code runs."""
    try:
        if not leaf and not GET["retains_grad"](tensor):
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
