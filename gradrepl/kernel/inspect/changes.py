"""What changed in a group of tensors since the last step, told cheaply: C-level maps over
``_version``, ``requires_grad`` and ``.grad`` for a group that holds the same objects, full
signatures name by name for one whose contents changed (snapshot.py says why)."""

from __future__ import annotations

import weakref
from functools import partial
from itertools import chain, compress, count
from operator import attrgetter, call, is_not, not_, or_

import torch

from gradrepl.kernel.inspect.summary import dims


_VERSION = attrgetter("_version")
_REQUIRES_GRAD = attrgetter("requires_grad")
_GRAD = attrgetter("_grad")  # only for leaves: a non-leaf's .grad warns
_IS_LEAF = attrgetter("is_leaf")
_RETAINS_GRAD = attrgetter("retains_grad")
_NOT_NONE = partial(is_not, None)


def _signature(t: torch.Tensor) -> tuple:
    """Everything a row shows that can change without the tensor being replaced."""
    try:
        grad = grad_of(t)
        return (
            version_of(t),
            t.requires_grad,
            t.grad_fn,  # compared by identity; holding it keeps its Python wrapper stable
            None if grad is None else (id(grad), version_of(grad)),
            _shape_key(t),
            t.dtype,
            t.retains_grad,
            t.device,
        )
    except Exception as exc:  # the row says what went wrong; the same failure is no change
        return ("unreadable", type(exc), str(exc))


def _shape_key(t: torch.Tensor):
    try:
        return t.shape
    except RuntimeError:  # nested: no single shape
        return tuple(dims(t) or ())


def version_of(t: torch.Tensor) -> int:
    return _read(_VERSION, t, -1)  # inference tensors have no version counter


def _versions(tensors: list) -> list[int]:
    return _each(_VERSION, tensors, -1)


def _each(read, tensors: list, default) -> list:
    """read(t) for every tensor in one C-level map; one by one, `default` where it raises, if any raises.

    A tensor subclass may raise from anything (its __torch_function__ sees attribute reads too);
    its row then says it cannot be inspected, and the other rows go on.
    """
    try:
        return list(map(read, tensors))
    except Exception:
        return [_read(read, t, default) for t in tensors]


def _read(read, t, default):
    try:
        return read(t)
    except Exception:
        return default


def _DATA_PTR(t: torch.Tensor) -> int:
    return t.data_ptr()


def grad_of(t: torch.Tensor) -> torch.Tensor | None:
    """t.grad without torch's warning: a non-leaf that does not retain grad has none."""
    if t.grad_fn is not None and not t.retains_grad:
        return None
    return t._grad


def _grad_key(t: torch.Tensor):
    """Which .grad tensor ``t`` holds, and its version. Its data pointer too: a retained grad that a backward
    replaces is a new tensor made while the old one lived, whose Python object may then take the old one's
    freed address (same id, version 0), while its memory cannot be the old one's."""
    grad = _read(grad_of, t, None)
    return None if grad is None else (id(grad), version_of(grad), _read(_DATA_PTR, grad, None))


def _mismatches(new: list, old: list, low: int = 0, high: int | None = None) -> list[int]:
    """Positions where two equally long lists differ, found by halving (few differ, lists are long)."""
    if high is None:
        high = len(new)
    if high - low <= 64:
        return [i for i in range(low, high) if new[i] != old[i]]
    middle = (low + high) // 2
    found = []
    if new[low:middle] != old[low:middle]:
        found += _mismatches(new, old, low, middle)
    if new[middle:high] != old[middle:high]:
        found += _mismatches(new, old, middle, high)
    return found


class Group:
    """Cheap per-tensor state of one group, compared in bulk each step."""

    def __init__(self, names: list[str], tensors: list) -> None:
        self.names = names
        self.kept = 0  # leading names still naming the same objects as in the group it replaced
        self.ids = list(map(id, tensors))
        self.refs = list(map(weakref.ref, tensors))
        self.versions = _versions(tensors)
        self.requires_grad = _each(_REQUIRES_GRAD, tensors, False)
        self.any_requires_grad = any(self.requires_grad)
        # tensors that do not require grad are leaves, so reading their .grad never warns
        plain = list(compress(count(), map(not_, self.requires_grad)))
        holders = compress(plain, map(_NOT_NONE, _each(_GRAD, list(map(tensors.__getitem__, plain)), None)))
        self._watch(tensors, sorted(chain(compress(count(), self.requires_grad), holders)))

    def _watch(self, tensors: list, indices: list[int]) -> None:
        """Read .grad from now on for these positions (they take part in autograd or hold a grad).

        Leaves are checked in bulk (their .grad never warns); the rest one by one.
        """
        leaf = {i: _read(_IS_LEAF, tensors[i], True) for i in indices}
        self.leaf_keys = {i: _grad_key(tensors[i]) for i in indices if leaf[i]}
        self.other_keys = {i: _grad_key(tensors[i]) for i in indices if not leaf[i]}
        self.leaves = list(self.leaf_keys)
        self.leaf_print = self._leaf_print(tensors)

    def _leaf_print(self, tensors: list) -> tuple[list, list]:
        """Which grad tensor each watched leaf holds, and their versions, read with C-level maps."""
        leaves = tensors if len(self.leaves) == len(tensors) else list(map(tensors.__getitem__, self.leaves))
        grads = _each(_GRAD, leaves, None)
        return list(map(id, grads)), _versions(list(filter(_NOT_NONE, grads)))

    def _rewatch(self, tensors: list, hits: set[int], leaf_print: tuple) -> None:
        """Refresh the grad state of the positions that changed (leaf_print: read this step)."""
        moved = False
        for i in hits:
            before = (i in self.leaf_keys, i in self.other_keys)
            self.leaf_keys.pop(i, None)
            self.other_keys.pop(i, None)
            t = tensors[i]
            if _read(_REQUIRES_GRAD, t, False) or _grad_key(t) is not None:
                (self.leaf_keys if _read(_IS_LEAF, t, True) else self.other_keys)[i] = _grad_key(t)
            moved |= before != (i in self.leaf_keys, i in self.other_keys)
        if moved:
            self.leaves = sorted(self.leaf_keys)
            leaf_print = self._leaf_print(tensors)
        self.leaf_print = leaf_print

    def _other_grads_moved(self, tensors: list) -> list[int]:
        """Watched non-leaves whose .grad changed. One that neither retains its grad nor has become a leaf
        has none (grad_of), told by two C-level maps; only the others are read one by one."""
        positions, keys = list(self.other_keys), list(self.other_keys.values())
        if not positions:
            return []
        picked = list(map(tensors.__getitem__, positions))
        may_hold = list(map(or_, _each(_RETAINS_GRAD, picked, True), _each(_IS_LEAF, picked, True)))
        moved = [i for i, key in zip(compress(positions, may_hold), compress(keys, may_hold))
                 if _grad_key(tensors[i]) != key]
        cannot = list(map(not_, may_hold))
        moved += compress(compress(positions, cannot), map(_NOT_NONE, compress(keys, cannot)))
        return moved

    def differs_from(self, old: Group, tensors: list) -> list[int] | range:
        """Positions that are new or changed compared with the group's previous state.

        A position that still names the very object it named (`x = x + 1` replaced one name of fifty)
        counts only if what changed in it shows; the others are new. `kept`: the leading positions
        that still name the same objects, which add and remove no name (snapshot._reclaim).
        """
        shared = min(len(self.names), len(old.names))
        old_objects = map(call, old.refs[:shared])
        same = list(map(lambda mine, theirs, old_object, now, mine_id, their_id:
                        mine == theirs and mine_id == their_id and old_object is now,
                        self.names, old.names, old_objects, tensors, self.ids, old.ids))
        self.kept = same.index(False) if False in same else shared
        hits = set(range(shared, len(self.names)))
        hits.update(compress(count(), map(not_, same)))
        for mine, theirs in ((self.versions, old.versions), (self.requires_grad, old.requires_grad)):
            if mine[:shared] != theirs[:shared]:
                hits.update(i for i in _mismatches(mine[:shared], theirs[:shared]) if same[i])
        for mine, theirs in ((self, old), (old, self)):  # grads that appeared, changed or went
            for keys in (mine.leaf_keys, mine.other_keys):
                for i, key in keys.items():
                    if i < shared and same[i] and theirs.leaf_keys.get(i, theirs.other_keys.get(i)) != key:
                        hits.add(i)
        return sorted(hits)

    def replaced(self, names: list[str], tensors: list) -> list[int] | None:
        """Positions whose name now names another object (`x = x + 1`, one name of fifty), when the
        names are the same as last step; None when they are not (the group is then built afresh)."""
        if len(tensors) != len(self.refs) or names != self.names:
            return None
        return list(compress(count(), map(is_not, map(call, self.refs), tensors)))

    def replace(self, positions: list[int], tensors: list) -> list[int]:
        """Take the new objects at these positions (their names stay), without rebuilding the group's
        state name by name; return the old objects' ids, position for position. Read what changed in the
        other positions first (changed_indices): their grads are read afresh here."""
        old_ids = [self.ids[i] for i in positions]
        for i in positions:
            t = tensors[i]
            self.ids[i], self.refs[i] = id(t), weakref.ref(t)
            self.versions[i] = _read(_VERSION, t, -1)
            self.requires_grad[i] = _read(_REQUIRES_GRAD, t, False)
        self.any_requires_grad = any(self.requires_grad)
        self._rewatch(tensors, set(positions), self.leaf_print)
        return old_ids

    def holds(self, names: list[str], tensors: list) -> bool:
        """Same names for the very same objects as last step."""
        if names is self.names:
            return True  # a flat container's cached names: its identity was checked this step
        return (
            names == self.names
            and len(tensors) == len(self.refs)
            and not any(map(is_not, map(call, self.refs), tensors))
        )

    def changed_indices(self, tensors: list, requires_grad_may_change: bool = True) -> list[int]:
        """Positions whose version, requires_grad or grad changed; updates the state."""
        hits: set[int] = set()
        versions = _versions(tensors)
        if versions != self.versions:
            hits.update(_mismatches(versions, self.versions))
            self.versions = versions
        # one C call answers "still none requires grad?" for plain data
        if self.any_requires_grad or (requires_grad_may_change and torch._C._any_requires_grad(tensors)):
            requires_grad = _each(_REQUIRES_GRAD, tensors, False)
            if requires_grad != self.requires_grad:
                hits.update(_mismatches(requires_grad, self.requires_grad))
                self.requires_grad = requires_grad
                self.any_requires_grad = any(requires_grad)
        leaf_print = self._leaf_print(tensors)
        if leaf_print != self.leaf_print:
            hits.update(i for i, key in self.leaf_keys.items() if _grad_key(tensors[i]) != key)
        hits.update(self._other_grads_moved(tensors))
        if hits:
            self._rewatch(tensors, hits, leaf_print)
        return sorted(hits)
