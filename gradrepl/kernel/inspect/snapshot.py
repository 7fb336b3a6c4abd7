"""The live tensors of a namespace as rows, and what changed since the last step.

Every step the namespace is walked into lists, tuples, dicts and ``nn.Module``
parameters and buffers; each tensor gets the name a learner could type
(``xs[2]``, ``d['k']``, ``model[0].weight``). The walk yields *groups*: the
tensors of one flat container, of one module, or one run of top-level names.
A group that holds the same objects as last step is checked with C-level maps
over ``_version`` and ``requires_grad`` (plus ``.grad`` for tensors that take
part in autograd), so a step costs little more than one pass of C code over
what is alive and Python work only for what changed. A group whose contents
changed is compared name by name with full signatures.

Bounds: containers are followed ``MAX_DEPTH`` levels below a namespace name,
at most ``MAX_WIDTH`` elements of each are looked at, and modules are followed
``MAX_MODULE_DEPTH`` levels of submodules deep.

What these cheap checks cannot see (writes through ``t.data``, ``t.data =
other``, a lone ``retain_grad()``, a ``.grad`` assigned by hand) is reported by
class-level hooks (writes.py): the rows of the tensors they mark are read again.

A tensor reachable by several names has one row, under the name found first
(or the one its row already had); the other names are its ``"aliases"``.

Robustness: a tensor whose row cannot be read gets a row saying why
(``"inspect_error"``) and never takes other rows down; a container met again
inside itself is not followed; and a step's inspection stops after
``TIME_BUDGET`` seconds (``Inspector.stopped`` says where), keeping the
previous state of what it did not reach and owing the rest to the next step.
Inference tensors have no version counter; their version reads as -1.

Learner code can run while a namespace is read (a tensor subclass's
``__torch_function__``, a dict subclass's ``__getitem__``) and hang or raise
past every check above. ``guarded_step`` reads through ``guard.bounded``; when
that fails, the namespace name being read then is skipped from the next walk on,
until it holds another object (identity or type), and the step says so once.
"""

from __future__ import annotations

import time
import weakref
from collections import Counter
from functools import partial
from itertools import chain, compress, count
from operator import attrgetter, call, is_not, not_

import torch
from torch import nn

from gradrepl.kernel.guard import Failed, bounded, cap
from gradrepl.kernel.inspect import writes
from gradrepl.kernel.inspect.saved import saved_bytes
from gradrepl.kernel.inspect.summary import dims, summarize

SKIP_NAMES = frozenset({"torch", "nn", "F"})  # preloaded by the kernel
MAX_DEPTH = 4            # d['a'][0][1][2] is as deep as names go
MAX_WIDTH = 20_000       # elements of one list/tuple/dict looked at
MAX_MODULE_DEPTH = 16    # levels of submodules followed
TIME_BUDGET = 0.5        # seconds of inspection per step before the panel stops and says so
MAX_ALIASES = 16         # other names listed beside a row; the rest are counted
CHECK_EVERY = 64         # containers visited (or rows built) between two looks at the clock
SKIPS_PER_STEP = 1       # reads tried again in one step after skipping what failed (each may cost guard's 5 s)

_VERSION = attrgetter("_version")
_REQUIRES_GRAD = attrgetter("requires_grad")
_GRAD = attrgetter("_grad")  # only for leaves: a non-leaf's .grad warns
_IS_LEAF = attrgetter("is_leaf")
_NOT_NONE = partial(is_not, None)
_KEY_TYPES = (str, int, float, bool, type(None))  # dict keys a learner can type back
_INDEXED_MODULES = (nn.Sequential, nn.ModuleList, nn.ParameterList)
_KEYED_MODULES = (nn.ModuleDict, nn.ParameterDict)
_GONE = object()  # a namespace name no longer bound
PANEL_NOT_UPDATED = ("The tensor panel was not updated: reading your variables failed ({why}). An object "
                     "whose attributes raise or hang can cause this; `del` it.")


class Inspector:
    """Rows for the live tensors of a namespace, reported as deltas per step."""

    def __init__(self) -> None:
        writes.install()
        self.reset()

    def reset(self) -> None:
        """Forget every row, as for a fresh namespace."""
        self._rows: dict[str, dict] = {}        # name -> row, first-appearance order
        self._sigs: dict[str, tuple] = {}       # name -> full signature
        self._refs: dict[str, weakref.ref] = {}  # name -> the tensor it named
        self._groups: dict[str, _Group] = {}    # group key -> state after last step
        self._flat: dict[str, _FlatCache] = {}  # container path -> names of its tensors
        self._live: set[str] = set()            # names that own a row
        self._occurrences: Counter[int] = Counter()  # id(tensor) -> names reaching it
        self._changed: set[str] = set()         # names changed in the last step
        self._holding: set[str] = set()         # names whose graph holds saved tensors
        self._aliases: dict[str, list[str]] = {}  # row name -> the other names of its tensor
        self._held: dict[str, tuple[int, ...]] = {}  # row name -> ids of its tensor and its grad
        self._owner_of: dict[int, str] = {}     # id of a row's tensor or grad -> row name
        self._owed: dict[str, weakref.ref] = {}  # rows to build afresh whatever their signature
        self._skipped: dict[str, _Skipped] = {}  # namespace names whose reading failed, left out of walks
        self._walker: _Walker | None = None     # the walk of the step being read, to find what hung
        self._reading: tuple | None = None      # ("group", key) or ("row", name) being read after the walk
        self.stopped: str | None = None         # why the last step's inspection stopped early

    def guarded_step(self, namespace: dict, requires_grad_may_change: bool = True) -> tuple[list, list, list[str]]:
        """step() through guard.bounded: (rows, removed, notes). What was being read when a read hung or
        raised is skipped from then on (``_skipped``) and the rest is read again (SKIPS_PER_STEP)."""
        notes: list[str] = []
        for _ in range(1 + SKIPS_PER_STEP):
            try:
                rows, removed = bounded(lambda: self.step(namespace, requires_grad_may_change))
                return rows, removed, notes
            except Failed as failed:
                self._forget_bulk_state()
                culprit = None if failed.interrupted else self._culprit(namespace)
                if culprit is None:
                    notes.append(PANEL_NOT_UPDATED.format(why=failed))
                    return [], [], notes
                self._skipped[culprit] = _Skipped(namespace[culprit])
                shown = cap(culprit if culprit.isidentifier() else repr(culprit), 200)
                notes.append(cap(f"panel skips {shown}: reading it {failed.why}; it stays off the panel "
                                 f"until {shown} holds another object", 1000))
                requires_grad_may_change = True
        notes.append(PANEL_NOT_UPDATED.format(why="more objects hung or raised; the next step reads on"))
        return [], [], notes

    def _forget_bulk_state(self) -> None:
        """After a step cut short: groups may hold state read this time whose changes were never reported,
        so the next step compares every name by its full signature (and claims names afresh)."""
        self._groups = {}
        self._flat = {}

    def _culprit(self, namespace: dict) -> str | None:
        """The namespace name whose reading the last step was in when it stopped, if one can be told."""
        walker, reading, self._reading = self._walker, self._reading, None
        if walker is None:
            return None
        root = walker.current
        if root is None and reading is not None:
            kind, what = reading
            if kind == "row":
                what = next((key for key, (names, _) in walker.groups.items() if what in names), None)
            root = walker.roots.get(what)
        return root if root is not None and root in namespace else None

    def step(self, namespace: dict, requires_grad_may_change: bool = True) -> tuple[list[dict], list[str]]:
        """Rows changed since the previous call (each with "changed": True) and names that disappeared.

        The kernel passes requires_grad_may_change=False when its torch-function
        journal saw no call that can flip a flag (requires_grad_, the property
        setter, detach_): then tensors that required no grad are not re-asked.
        """
        deadline = time.perf_counter() + TIME_BUDGET
        self._reading = None
        walker = self._walker = _Walker(self._flat, deadline, self._skipped)
        walked = walker.walk(namespace)
        groups: dict[str, _Group] = {}
        candidates: dict[str, torch.Tensor] = {}
        swaps: list[tuple[_Group | None, _Group | None]] = []  # groups whose contents changed
        for key, (names, tensors) in walked.items():
            self._reading = ("group", key)
            group = self._groups.get(key)
            if group is not None and group.holds(names, tensors):
                changed_at = group.changed_indices(tensors, requires_grad_may_change)
            else:
                rebuilt = _Group(names, tensors)
                changed_at = range(len(names)) if group is None else rebuilt.differs_from(group, tensors)
                swaps.append((group, rebuilt))
                group = rebuilt
            candidates.update(map(lambda i: (names[i], tensors[i]), changed_at))
            groups[key] = group
        if walker.stopped_at is None:
            swaps.extend((old, None) for key, old in self._groups.items() if key not in walked)
        else:  # what the walk did not reach keeps its last state
            groups.update((key, old) for key, old in self._groups.items() if key not in groups)
        self._groups = groups
        removed = self._reclaim(swaps) if swaps else []
        self._owe_marked()
        for name, ref in self._owed.items():
            tensor = ref()
            if tensor is not None:
                candidates.setdefault(name, tensor)

        changed: list[dict] = []
        late = None
        for done, (name, tensor) in enumerate(candidates.items()):
            if name not in self._live:
                continue  # another name reaches this tensor first
            if done % CHECK_EVERY == CHECK_EVERY - 1 and time.perf_counter() > deadline:
                late = done
                self._owed.update((n, weakref.ref(t)) for n, t in list(candidates.items())[done:] if n in self._live)
                break
            self._reading = ("row", name)
            owed = name in self._owed
            ref = self._refs.get(name)
            signature = _signature(tensor)
            if not owed and ref is not None and ref() is tensor and self._sigs[name] == signature:
                continue
            row = _safe_row(name, tensor, self._aliases.get(name, []))
            # all at once: a read cut short (guard.bounded) leaves the row as it was, still owed
            self._owed.pop(name, None)
            self._refs[name] = weakref.ref(tensor)
            self._sigs[name] = signature
            self._rows[name] = row
            self._remember(name, tensor)
            changed.append(self._rows[name])
        changed.extend(self._freed_graphs(changed))
        self._holding.difference_update(removed)
        self.stopped = _stop_note(walker, late, len(changed))
        self._changed = {row["name"] for row in changed}
        return [{**row, "changed": True} for row in changed], removed

    def table(self, namespace: dict | None = None) -> list[dict]:
        """Every live row in first-appearance order (changed flag = whether it changed in the last step).

        With a namespace, the table is first brought up to date and every row's
        summary is recomputed (this also catches writes through ``.data``).
        """
        if namespace is not None:
            self.step(namespace)
            for name in self._rows:
                tensor = self._refs[name]()
                if tensor is not None:
                    self._rows[name] = _safe_row(name, tensor, self._aliases.get(name, []))
            self._holding = {name for name, row in self._rows.items() if row["saved_bytes"]}
        return [{**row, "changed": name in self._changed} for name, row in self._rows.items()]

    def _freed_graphs(self, changed: list[dict]) -> list[dict]:
        """Rows whose saved tensors backward freed: the tensor itself did not change, its row does."""
        fresh = {row["name"] for row in changed}
        rows = []
        for name in self._holding - fresh:
            ref = self._refs.get(name)
            tensor = None if ref is None else ref()
            self._reading = ("row", name)
            if tensor is not None and saved_bytes(tensor) != self._rows[name]["saved_bytes"]:
                self._rows[name] = _safe_row(name, tensor, self._aliases.get(name, []))
                rows.append(self._rows[name])
        for row in chain(changed, rows):
            (self._holding.add if row["saved_bytes"] else self._holding.discard)(row["name"])
        return rows

    def resolve(self, name: str) -> torch.Tensor | None:
        """The live tensor a row name refers to, or None (names are looked up, never evaluated)."""
        ref = self._refs.get(name)
        return None if ref is None else ref()

    def names_by_id(self) -> dict[int, str]:
        """id(tensor) -> row name for every live row, for the graph view."""
        result = {}
        for name in self._rows:
            tensor = self._refs[name]()
            if tensor is not None:
                result[id(tensor)] = name
        return result

    def _reclaim(self, swaps: list[tuple[_Group | None, _Group | None]]) -> list[str]:
        """Update which names own rows after some groups changed; return names that disappeared.

        Work is proportional to the changed groups, unless a tensor involved is
        also reachable by another name: then every name is claimed afresh.
        """
        before: set[tuple[str, int]] = set()  # (name, id) pairs, across groups: a move is no change
        after: list[tuple[str, int]] = []
        for old, new in swaps:
            kept = 0 if new is None else new.kept  # an unchanged prefix adds and removes nothing
            if old is not None:
                before.update(zip(old.names[kept:], old.ids[kept:]))
            if new is not None:
                after.extend(zip(new.names[kept:], new.ids[kept:]))
        added = [pair for pair in after if pair not in before]
        gone = before.difference(after)
        occurrences = self._occurrences
        for _, tensor_id in gone:
            occurrences[tensor_id] -= 1
            if not occurrences[tensor_id]:
                del occurrences[tensor_id]
        for _, tensor_id in added:
            occurrences[tensor_id] += 1
        if any(occurrences[i] > 1 for _, i in added) or any(i in occurrences for _, i in gone):
            return self._claim_names()
        dropped = {name for name, _ in gone}.difference(name for name, _ in added)
        self._live.difference_update(dropped)
        self._live.update(name for name, _ in added)
        return self._drop_rows(dropped)

    def _claim_names(self) -> list[str]:
        """Give each tensor one name (the first found, or the one it already had); return dropped names."""
        names = list(chain.from_iterable(group.names for group in self._groups.values()))
        ids = list(chain.from_iterable(group.ids for group in self._groups.values()))
        self._occurrences = Counter(ids)
        owner = dict(zip(reversed(ids), reversed(names)))  # reversed: the first name wins
        aliases: dict[str, list[str]] = {}
        if len(owner) < len(ids):
            self._keep_old_names(owner, names, ids)
            for name, tensor_id in zip(names, ids):
                if owner[tensor_id] != name:
                    aliases.setdefault(owner[tensor_id], []).append(name)
            for name, others in aliases.items():
                if len(others) > MAX_ALIASES:  # `[t] * 10**6` must not make a row of a million names
                    aliases[name] = others[:MAX_ALIASES] + [f"(+{len(others) - MAX_ALIASES:,} more)"]
        self._live = set(owner.values())
        removed = self._drop_rows(self._rows.keys() - self._live)
        refs = dict(zip(names, chain.from_iterable(group.refs for group in self._groups.values())))
        for name in self._live:
            # a row whose aliases changed, or a name that now owns a row the walk did not report
            if name not in self._rows or aliases.get(name, []) != self._aliases.get(name, []):
                self._owed[name] = refs[name]
        self._aliases = aliases
        return removed

    def _drop_rows(self, names: set[str]) -> list[str]:
        """Forget the rows of these names; return them in table order."""
        removed = [name for name in self._rows if name in names] if names else []
        for name in removed:
            del self._rows[name], self._sigs[name], self._refs[name]
            self._forget_held(name)
            self._aliases.pop(name, None)
        for name in names:
            self._owed.pop(name, None)
        return removed

    def _remember(self, name: str, tensor: torch.Tensor) -> None:
        """Note which tensor and grad a row shows, so a mark on either finds the row."""
        self._forget_held(name)
        try:
            grad = _grad_of(tensor)
        except Exception:  # an exotic tensor: its row says it cannot be read
            grad = None
        held = (id(tensor),) if grad is None else (id(tensor), id(grad))
        self._held[name] = held
        for tensor_id in held:
            self._owner_of[tensor_id] = name

    def _forget_held(self, name: str) -> None:
        for tensor_id in self._held.pop(name, ()):
            if self._owner_of.get(tensor_id) == name:
                del self._owner_of[tensor_id]

    def _owe_marked(self) -> None:
        """Rows whose tensor (or its grad) was written behind its version counter are read again
        (all of them after a step that wrote more than the hooks follow, writes.MARK_BUDGET)."""
        marked = writes.take()
        if marked is None:
            self._owed.update(self._refs)
            return
        for tensor_id in marked:
            name = self._owner_of.get(tensor_id)
            if name is not None and name in self._refs:
                self._owed[name] = self._refs[name]

    def _keep_old_names(self, owner: dict[int, str], names: list[str], ids: list[int]) -> None:
        """A tensor reachable by several names keeps the name its row already has."""
        for name, tensor_id in zip(names, ids):
            if owner[tensor_id] != name and name in self._rows:
                tensor = self._refs[name]()
                if tensor is not None and id(tensor) == tensor_id:
                    owner[tensor_id] = name


def _signature(t: torch.Tensor) -> tuple:
    """Everything a row shows that can change without the tensor being replaced."""
    try:
        grad = _grad_of(t)
        return (
            _version_of(t),
            t.requires_grad,
            t.grad_fn,  # compared by identity; holding it keeps its Python wrapper stable
            None if grad is None else (id(grad), _version_of(grad)),
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


def _row(name: str, t: torch.Tensor, aliases: list[str]) -> dict:
    """The row the frontend shows for one named tensor."""
    grad = _grad_of(t)
    grad_fn = t.grad_fn
    return {
        "name": name,
        "aliases": list(aliases),
        "shape": dims(t),
        "dtype": str(t.dtype),
        "device": str(t.device),
        "requires_grad": t.requires_grad,
        "is_leaf": t.is_leaf,
        "grad_fn": None if grad_fn is None else type(grad_fn).__name__,
        "retains_grad": t.retains_grad,
        "version": _version_of(t),
        "changed": True,
        "grad": None if grad is None else summarize(grad),
        "value": summarize(t),
        "saved_bytes": saved_bytes(t),
    }


def _safe_row(name: str, t: torch.Tensor, aliases: list[str]) -> dict:
    """The row, or one that says why this tensor cannot be inspected (its other facts where they read)."""
    try:
        return _row(name, t, aliases)
    except Exception as exc:
        why = f"cannot be inspected: {type(exc).__name__}: {exc}"
    row = {"name": name, "aliases": list(aliases), "shape": None, "dtype": "?", "device": "?",
           "requires_grad": False, "is_leaf": True, "grad_fn": None, "retains_grad": False, "version": -1,
           "changed": True, "grad": None, "value": None, "saved_bytes": 0, "inspect_error": why}
    for key, read in (("dtype", lambda: str(t.dtype)), ("device", lambda: str(t.device)),
                      ("requires_grad", lambda: bool(t.requires_grad)), ("is_leaf", lambda: bool(t.is_leaf)),
                      ("grad_fn", lambda: None if t.grad_fn is None else type(t.grad_fn).__name__)):
        try:
            row[key] = read()
        except Exception:
            pass  # the placeholder stays; inspect_error says why
    return row


def _stop_note(walker: _Walker, late: int | None, built: int) -> str | None:
    """Words for the step's note when the time budget ran out, else None."""
    if walker.stopped_at is not None:
        return (f"panel stopped after {walker.tensors_seen:,} rows: looking through {walker.stopped_at} took "
                f"over {TIME_BUDGET:g} s, so tensors past it keep what the panel last showed")
    if late is not None:
        return (f"panel stopped after {built:,} rows: reading tensors took over {TIME_BUDGET:g} s; "
                "the rest are shown after the next step")
    return None


def _version_of(t: torch.Tensor) -> int:
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


def _grad_of(t: torch.Tensor) -> torch.Tensor | None:
    """t.grad without torch's warning: a non-leaf that does not retain grad has none."""
    if t.grad_fn is not None and not t.retains_grad:
        return None
    return t._grad


def _grad_key(t: torch.Tensor):
    grad = _read(_grad_of, t, None)
    return None if grad is None else (id(grad), _version_of(grad))


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


class _Group:
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

    def differs_from(self, old: _Group, tensors: list) -> list[int] | range:
        """Positions that are new or changed compared with the group's previous state.

        When the old names and objects are a prefix of the new ones (a list grew,
        or shrank at the end), only the tail and what changed in the prefix count.
        """
        shared = min(len(self.names), len(old.names))
        if not (
            self.names[:shared] == old.names[:shared]
            and self.ids[:shared] == old.ids[:shared]
            and not any(map(is_not, map(call, old.refs[:shared]), tensors[:shared]))
        ):
            return range(len(self.names))
        self.kept = shared
        hits = set(range(shared, len(self.names)))
        for mine, theirs in ((self.versions, old.versions), (self.requires_grad, old.requires_grad)):
            if mine[:shared] != theirs[:shared]:
                hits.update(_mismatches(mine[:shared], theirs[:shared]))
        for mine, theirs in ((self, old), (old, self)):  # grads that appeared, changed or went
            for keys in (mine.leaf_keys, mine.other_keys):
                for i, key in keys.items():
                    if i < shared and theirs.leaf_keys.get(i, theirs.other_keys.get(i)) != key:
                        hits.add(i)
        return sorted(hits)

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
        hits.update(i for i, key in self.other_keys.items() if _grad_key(tensors[i]) != key)
        if hits:
            self._rewatch(tensors, hits, leaf_print)
        return sorted(hits)


class _Skipped:
    """A namespace value left out of walks: skipped while the name holds this very object of this type."""

    def __init__(self, value) -> None:
        self.type = type(value)  # type() and weakref run no learner code; value.__class__ could
        try:
            self.ref, self.id = weakref.ref(value), None
        except TypeError:
            self.ref, self.id = None, id(value)

    def holds(self, value) -> bool:
        if type(value) is not self.type:
            return False
        return self.ref() is value if self.ref is not None else id(value) == self.id


class _FlatCache:
    """Names of a container holding only tensors, valid while it holds the same objects."""

    def __init__(self, keys: list, names: list[str], tensors: list) -> None:
        self.keys = keys
        self.names = names
        self.refs = list(map(weakref.ref, tensors))

    def matches(self, keys: list, tensors: list) -> bool:
        return (
            len(tensors) == len(self.refs)
            and keys == self.keys
            and not any(map(is_not, map(call, self.refs), tensors))
        )

    def grown_names(self, path: str, tensors: list) -> list[str] | None:
        """Names for a list that only had tensors appended since it was cached, else None."""
        known = len(self.refs)
        if self.keys is not None or len(tensors) <= known:
            return None
        if any(map(is_not, map(call, self.refs), tensors[:known])):
            return None
        return self.names + [f"{path}[{i}]" for i in range(known, len(tensors))]


class _Walker:
    """One walk of a namespace into ordered groups {key: (names, tensors)}."""

    def __init__(self, flat: dict[str, _FlatCache], deadline: float = float("inf"),
                 skipped: dict[str, _Skipped] | None = None) -> None:
        self.flat = flat
        self.skipped = {} if skipped is None else skipped  # pruned here: names gone or holding another object
        self.current: str | None = None  # the namespace name being walked (what hung, if the walk does)
        self.roots: dict[str, str] = {}  # group key -> the namespace name it lies under (not for plain runs)
        self.seen_flat: set[str] = set()
        self.groups: dict[str, tuple[list, list]] = {}
        self.run: tuple[list, list] | None = None  # consecutive top-level tensors
        self.deadline = deadline
        self.visits = 0
        self.open: list[str] = []       # groups being filled (dropped, half-filled, if the walk stops)
        self.on_path: set[int] = set()  # containers being walked: one met again inside itself is a cycle
        self.stopped_at: str | None = None  # where the time budget ran out

    @property
    def tensors_seen(self) -> int:
        return sum(len(names) for names, _ in self.groups.values())

    def walk(self, namespace: dict) -> dict[str, tuple[list, list]]:
        skipped = self.skipped
        for name in [name for name, skip in skipped.items() if not skip.holds(namespace.get(name, _GONE))]:
            del skipped[name]  # gone, or holding another object: read again
        try:
            for name, value in list(namespace.items()):
                # globals() may hold keys that are no names (globals()[123] = ...): nothing to show
                if type(name) is not str or name.startswith("_") or name in SKIP_NAMES or (skipped and name in skipped):
                    continue
                self.current = name
                if isinstance(value, torch.Tensor):
                    if type(value) is torch.Tensor or type(value) is nn.Parameter:
                        if self.run is None:
                            self.run = self.groups.setdefault("\0" + name, ([], []))
                        self.run[0].append(name)
                        self.run[1].append(value)
                    else:  # a subclass may run learner code when read: a group of its own tells it apart
                        self.run = None
                        self.groups["\0" + name] = ([name], [value])
                        self.roots["\0" + name] = name
                elif isinstance(value, (list, tuple, dict, nn.Module)):
                    self.run = None
                    self.visit(value, name, 0)
            self.current = None
        except _OutOfTime as stop:
            self.current = None
            self.stopped_at = stop.path
            for key in self.open:
                self.groups.pop(key, None)
            return self.groups
        for path in self.flat.keys() - self.seen_flat:
            del self.flat[path]  # containers no longer reachable
        return self.groups

    def visit(self, value, path: str, depth: int) -> None:
        self.visits += 1
        if self.visits % CHECK_EVERY == 0 and time.perf_counter() > self.deadline:
            raise _OutOfTime(path)
        if isinstance(value, nn.Module):
            names, tensors = self.groups.setdefault(path, ([], []))
            self.roots[path] = self.current
            self.open.append(path)
            self.module(value, path, names, tensors, 0)
            self.open.pop()
        elif depth < MAX_DEPTH and id(value) not in self.on_path:
            self.on_path.add(id(value))
            if isinstance(value, dict):
                keys = [k for k in value if type(k) in _KEY_TYPES][:MAX_WIDTH]
                self.container(path, keys, [value[k] for k in keys], depth)
            elif isinstance(value, (list, tuple)):
                items = value if len(value) <= MAX_WIDTH else value[:MAX_WIDTH]
                self.container(path, None, list(items), depth)
            self.on_path.discard(id(value))

    def container(self, path: str, keys: list | None, items: list, depth: int) -> None:
        """Elements of a list/tuple (keys None) or dict; all-tensor ones are cached by identity."""
        cached = self.flat.get(path)
        self.roots[path] = self.current
        if cached is not None and cached.matches(keys, items):
            self.seen_flat.add(path)
            self.groups[path] = (cached.names, items)
            return
        types = set(map(type, items))
        if not any(issubclass(t, (torch.Tensor, list, tuple, dict, nn.Module)) for t in types):
            return  # numbers, strings, ...: nothing to show
        labels = range(len(items)) if keys is None else keys
        if all(issubclass(t, torch.Tensor) for t in types):
            names = cached and cached.grown_names(path, items) or [f"{path}[{label!r}]" for label in labels]
            self.flat[path] = _FlatCache(keys, names, items)
            self.seen_flat.add(path)
            self.groups[path] = (names, items)
            return
        names, tensors = self.groups.setdefault(path, ([], []))
        self.open.append(path)
        for label, item in zip(labels, items):
            if isinstance(item, torch.Tensor):
                names.append(f"{path}[{label!r}]")
                tensors.append(item)
            elif isinstance(item, (list, tuple, dict, nn.Module)):
                self.visit(item, f"{path}[{label!r}]", depth + 1)
        self.open.pop()

    def module(self, module: nn.Module, path: str, names: list, tensors: list, depth: int) -> None:
        """Parameters, buffers and tensor attributes of a module and its submodules, in order."""
        for key, value in chain(module._parameters.items(), module._buffers.items(), vars(module).items()):
            if isinstance(value, torch.Tensor) and not key.startswith("_"):
                names.append(_member(module, path, key))
                tensors.append(value)
        if depth < MAX_MODULE_DEPTH:
            for key, child in module._modules.items():
                if child is not None:
                    self.module(child, _member(module, path, key), names, tensors, depth + 1)


class _OutOfTime(Exception):
    """The walk ran past the step's time budget at `path`."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


def _member(module: nn.Module, path: str, key: str) -> str:
    """How a learner writes a module's member: model[0], blocks['a'], net.fc."""
    if isinstance(module, _INDEXED_MODULES) and key.isdigit():
        return f"{path}[{key}]"
    if isinstance(module, _KEYED_MODULES):
        return f"{path}[{key!r}]"
    if key.isidentifier():
        return f"{path}.{key}"
    return f"getattr({path}, {key!r})"
