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

This module keeps the rows; walk.py walks the namespace into groups and
changes.py tells which of a group's tensors changed.

Learner code can run while a namespace is read (a tensor subclass's
``__torch_function__``, a dict subclass's ``__getitem__``) and hang or raise
past every check above. ``guarded_step`` reads through ``guard.bounded``; when
that fails, the namespace name being read then is skipped from the next walk on,
until it holds another object (identity or type), and the step says so once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import time
import warnings
import weakref
from collections import Counter
from itertools import chain

import torch

from gradrepl.kernel.guard import NoValue, bounded, cap
from gradrepl.kernel.inspect import backward_log, buffers, writes
from gradrepl.kernel.inspect.saved import saved_bytes
from gradrepl.kernel.inspect.summary import dims, summarize
from gradrepl.kernel.inspect.changes import Group, _signature, grad_of, version_of
from gradrepl.kernel.inspect.walk import CHECK_EVERY, Skipped, Walker

if TYPE_CHECKING:
    from gradrepl.kernel.inspect.walk import _FlatCache


TIME_BUDGET = 0.5        # seconds of inspection per step before the panel stops and says so
MAX_ALIASES = 16         # other names listed beside a row; the rest are counted
SKIPS_PER_STEP = 1       # reads tried again in one step after skipping what failed (each may cost guard's 5 s)


class GradsNow:
    """The rows' .grad cells at one moment, read after: a step replaces a changed row, never changes one in
    place, so a copy of the table holds them (a dict copy, not a read of every row: 2.4 ms a step at
    10,000 live tensors)."""

    def __init__(self, rows: dict[str, dict]) -> None:
        self._rows = rows

    def get(self, name: str):
        row = self._rows.get(name)
        return None if row is None else row.get("grad")


class Inspector:
    """Rows for the live tensors of a namespace, reported as deltas per step."""

    def __init__(self) -> None:
        writes.install()
        buffers.install()  # batch norm's running statistics, written behind their version counter
        backward_log.install()  # counts backward passes: graphs are re-read for freed bytes only after one
        self.reset()

    def reset(self) -> None:
        """Forget every row, as for a fresh namespace."""
        self._rows: dict[str, dict] = {}        # name -> row, first-appearance order
        self._sigs: dict[str, tuple] = {}       # name -> full signature
        self._refs: dict[str, weakref.ref] = {}  # name -> the tensor it named
        self._groups: dict[str, Group] = {}    # group key -> state after last step
        self._flat: dict[str, _FlatCache] = {}  # container path -> names of its tensors
        self._live: set[str] = set()            # names that own a row
        self._occurrences: Counter[int] = Counter()  # id(tensor) -> names reaching it
        self._changed: set[str] = set()         # names changed in the last step
        self._holding: set[str] = set()         # names whose graph holds saved tensors
        self._passes = -1                       # backward passes run when _holding was last re-read
        self._aliases: dict[str, list[str]] = {}  # row name -> the other names of its tensor
        self._held: dict[str, tuple[int, ...]] = {}  # row name -> ids of its tensor and its grad
        self._owner_of: dict[int, str] = {}     # id of a row's tensor or grad -> row name
        self._owed: dict[str, weakref.ref] = {}  # rows to build afresh whatever their signature
        self._skipped: dict[str, Skipped] = {}  # namespace names whose reading failed, left out of walks
        self._walker: Walker | None = None     # the walk of the step being read, to find what hung
        self._reading: tuple | None = None      # ("group", key) or ("row", name) being read after the walk
        self.stopped: dict | None = None        # why the last step's inspection stopped early (a remark)

    def guarded_step(self, namespace: dict, requires_grad_may_change: bool = True) -> tuple[list, list, list[dict]]:
        """step() through guard.bounded: (rows, removed, notes). What was being read when a read hung or
        raised is skipped from then on (``_skipped``) and the rest is read again (SKIPS_PER_STEP). The
        notes are remarks, {"code", "names"}: views/remarks.py words them."""
        notes: list[dict] = []
        for _ in range(1 + SKIPS_PER_STEP):
            try:
                rows, removed = bounded(lambda: self.step(namespace, requires_grad_may_change))
                return rows, removed, notes
            except NoValue as failed:
                self._forget_bulk_state()
                culprit = None if failed.interrupted else self._culprit(namespace)
                if culprit is None:
                    notes.append({"code": "panel_not_updated", "names": {"why": failed.reason}})
                    return [], [], notes
                self._skipped[culprit] = Skipped(namespace[culprit])
                shown = cap(culprit if culprit.isidentifier() else repr(culprit), 200)
                notes.append({"code": "panel_skips", "names": {"name": shown, "why": failed.reason}})
                requires_grad_may_change = True
        notes.append({"code": "panel_not_updated_more", "names": {}})
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
        walker = self._walker = Walker(self._flat, deadline, self._skipped)
        walked = walker.walk(namespace)
        groups: dict[str, Group] = {}
        candidates: dict[str, torch.Tensor] = {}
        swaps: list[tuple[Group | None, Group | None]] = []  # groups whose contents changed
        moves: list[tuple[str, int, int]] = []  # (name, old id, new id): a name of a group that now names another
        for key, (names, tensors) in walked.items():
            self._reading = ("group", key)
            group = self._groups.get(key)
            if group is not None and group.holds(names, tensors):
                changed_at = group.changed_indices(tensors, requires_grad_may_change)
            elif group is not None and (replaced := group.replaced(names, tensors)) is not None:
                # the same names, a few bound anew: patched, not rebuilt
                # what changed in the objects kept is read before the group takes the new ones; a position
                # bound anew may hold a non-leaf where a leaf was watched, and reading its .grad warns (into the
                # learner's output): the read is the inspector's, so is the warning, kept quiet
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    kept_changed = group.changed_indices(tensors, requires_grad_may_change)
                old_ids = group.replace(replaced, tensors)
                moves.extend((names[i], old, group.ids[i]) for i, old in zip(replaced, old_ids))
                changed_at = sorted(set(replaced).union(kept_changed))
            else:
                rebuilt = Group(names, tensors)
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
        removed = self._reclaim(swaps, moves) if swaps or moves else []
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
        """Rows whose saved tensors backward freed: the tensor itself did not change, its row does.
        Only a backward pass frees saved tensors, so without one since the last look none is re-read."""
        fresh = {row["name"] for row in changed}
        rows = []
        passes, self._passes = self._passes, backward_log.passes_run()
        for name in self._holding - fresh if passes != self._passes else ():
            ref = self._refs.get(name)
            tensor = None if ref is None else ref()
            self._reading = ("row", name)
            if tensor is not None and saved_bytes(tensor) != self._rows[name]["saved_bytes"]:
                self._rows[name] = _safe_row(name, tensor, self._aliases.get(name, []))
                rows.append(self._rows[name])
        for row in chain(changed, rows):
            (self._holding.add if row["saved_bytes"] else self._holding.discard)(row["name"])
        return rows

    def grads(self) -> GradsNow:
        """Each named tensor's .grad as its row shows it, to tell after a step whether one changed."""
        return GradsNow(dict(self._rows))

    def resolve(self, name: str) -> torch.Tensor | None:
        """The live tensor a row name refers to, or None (names are looked up, never evaluated)."""
        ref = self._refs.get(name)
        return None if ref is None else ref()

    def refs(self, requiring_grad: bool = False) -> list:
        """A weak reference to each row's tensor; with `requiring_grad`, only to those whose row says it
        requires grad (or could not read it): true when nothing ran since the last step read the table
        (a flip of requires_grad in a step has that step read every row again: the journal says so)."""
        if not requiring_grad:
            return list(self._refs.values())
        return [self._refs[name] for name, row in self._rows.items()
                if row.get("requires_grad") or "inspect_error" in row]

    def names_by_id(self) -> dict[int, str]:
        """id(tensor) -> row name for every live row, for the graph view."""
        result = {}
        for name in self._rows:
            tensor = self._refs[name]()
            if tensor is not None:
                result[id(tensor)] = name
        return result

    def _reclaim(self, swaps: list[tuple[Group | None, Group | None]],
                 moves: list[tuple[str, int, int]] = ()) -> list[str]:
        """Update which names own rows after some groups changed (swaps) or some names of a group were
        bound anew (moves); return names that disappeared.

        Work is proportional to the changed groups, unless a tensor involved is
        also reachable by another name: then every name is claimed afresh.
        """
        before: set[tuple[str, int]] = {(name, old) for name, old, _ in moves}  # across groups: a move is no change
        after: list[tuple[str, int]] = [(name, new) for name, _, new in moves]
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
            grad = grad_of(tensor)
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


def _row(name: str, t: torch.Tensor, aliases: list[str]) -> dict:
    """The row the frontend shows for one named tensor."""
    grad = grad_of(t)
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
        "version": version_of(t),
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


def _stop_note(walker: Walker, late: int | None, built: int) -> dict | None:
    """The step's remark when the time budget ran out (where, after how many rows), else None."""
    if walker.stopped_at is not None:
        return {"code": "panel_stopped_walk",
                "names": {"rows": walker.tensors_seen, "at": walker.stopped_at, "seconds": TIME_BUDGET}}
    if late is not None:
        return {"code": "panel_stopped_rows", "names": {"rows": built, "seconds": TIME_BUDGET}}
    return None
