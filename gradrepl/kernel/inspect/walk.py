"""One walk of a namespace into groups of tensors, each named as a learner could type it (``xs[2]``,
``d['k']``, ``model[0].weight``): lists, tuples and dicts followed MAX_DEPTH levels and MAX_WIDTH
elements, modules MAX_MODULE_DEPTH levels of submodules, a container met inside itself not again,
and the walk stopped at its deadline (snapshot.py says why it exists)."""

from __future__ import annotations

import time
import weakref
from itertools import chain
from operator import call, is_not

import torch
from torch import nn


SKIP_NAMES = frozenset({"torch", "nn", "F"})  # preloaded by the kernel


def output_name(name: str) -> bool:
    """Whether `name` is one the kernel binds to step values, as IPython does: _, __, ___, _N, Out."""
    return name in ("_", "__", "___", "Out") or (name[:1] == "_" and name[1:].isdigit())


class Outputs(dict):
    """IPython's Out: step number -> the value of that step's last expression (kernel/requests.py keeps
    it). The walk leaves it out, as it leaves out _, _N, __: they are other names for the learner's values."""
MAX_DEPTH = 4            # d['a'][0][1][2] is as deep as names go
MAX_WIDTH = 20_000       # elements of one list/tuple/dict looked at
MAX_MODULE_DEPTH = 16    # levels of submodules followed
CHECK_EVERY = 64         # containers visited (or rows built) between two looks at the clock
_KEY_TYPES = (str, int, float, bool, type(None))  # dict keys a learner can type back
_INDEXED_MODULES = (nn.Sequential, nn.ModuleList, nn.ParameterList)
_KEYED_MODULES = (nn.ModuleDict, nn.ParameterDict)
_GONE = object()  # a namespace name no longer bound


class Skipped:
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


class Walker:
    """One walk of a namespace into ordered groups {key: (names, tensors)}."""

    def __init__(self, flat: dict[str, _FlatCache], deadline: float = float("inf"),
                 skipped: dict[str, Skipped] | None = None) -> None:
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
                if type(name) is not str or name.startswith("_") or name in SKIP_NAMES or (skipped and name in skipped) \
                        or type(value) is Outputs:
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
