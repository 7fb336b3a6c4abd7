"""A task's state as plain data, read by means the learner's code cannot have rebound (op ``task_state``).

A task is judged by comparing what the learner's code left with what the
lesson's solution leaves, and the comparing happens in the frontend, on the
data this module sends. So this module only reads, and it reads through
references captured when it is imported (in the zygote, before any learner
code exists): TensorBase's own getsets and methods (an immutable C type),
builtins, dict's and object's methods, and the autograd engine's
``run_backward``. A learner who rebinds ``torch.allclose``, patches
``torch.Tensor.tolist`` or ``.grad``, or renames a helper changes nothing read
here. Only exact torch classes are read as tensors (a subclass can lie in any
method: it is reported by its type, which the solution's state does not
have); reads run with torch-function dispatch off, and a state is not read
while a TorchDispatchMode is active (it would see the reads).

``start`` marks the objects the task starts from (identity is judged against
them: "the same tensor", "the layer that is there") and starts a log of the
backward passes that accumulate gradients: which roots they started from,
which nodes and leaves they reached, and the .grad each leaf held after it.
That is how "backward ran", "it went through this y twice" and ".grad was set
by hand" are told apart, none of which a value can show.

What this cannot stop: code that reaches into gradrepl's own kernel modules
(through sys.modules, gc, frames) can change this reader too. The frontend
refuses attempts that use those doors directly (tutor/code_rules.py); the
kernel process is the learner's, so nothing in it is proof against every
trick, and the docs say so.
"""

from __future__ import annotations

import contextvars
import math
import os

import torch

# Builtins bound here: a learner who rebinds builtins.len or builtins.enumerate changes nothing this
# module calls (a module's own globals are looked up before builtins).
bool, int, float, str, list, tuple, dict, set, enumerate, len, id, type, issubclass, complex, zip, sorted = (  # noqa
    bool, int, float, str, list, tuple, dict, set, enumerate, len, id, type, issubclass, complex, zip, sorted)
_type, _id, _len, _str, _float, _list, _tuple, _issubclass = type, id, len, str, float, list, tuple, issubclass
_dict_get, _dict_items, _dict_values = dict.get, dict.items, dict.values
_object_getattribute = object.__getattribute__
_type_name = type.__dict__["__name__"].__get__
_type_module = type.__dict__["__module__"].__get__
_isfinite = math.isfinite
_urandom = os.urandom
_copy_context = contextvars.copy_context

_BASE = torch._C.TensorBase
_GET = {name: _BASE.__dict__[name].__get__ for name in (
    "grad", "requires_grad", "is_leaf", "grad_fn", "retains_grad", "dtype", "shape", "_version",
    "is_nested", "layout", "output_nr")}
_TOLIST, _DETACH, _NUMEL, _DATA_PTR = (_BASE.__dict__[n] for n in ("tolist", "detach", "numel", "data_ptr"))
_STRIDED = torch.strided
_NO_TORCH_FUNCTION = torch._C.DisableTorchFunction
_DISPATCH_DEPTH = torch._C._len_torch_dispatch_stack
_FUNCTION_MODE_ON = torch._C._is_torch_function_mode_enabled
_GRAD_ENABLED = torch._C.is_grad_enabled  # an attempt may leave recording off for every later step
_TENSOR_TYPES = {torch.Tensor: "torch.Tensor", torch.nn.Parameter: "torch.nn.Parameter"}
_MODULE, _OPTIMIZER = torch.nn.Module, torch.optim.Optimizer
_ACCUMULATE_GRAD = torch._C._functions.AccumulateGrad
_GRADIENT_EDGE = torch.autograd.graph.GradientEdge
_ENGINE = torch.autograd.variable.Variable._execution_engine
_RUN_BACKWARD = _type(_ENGINE).run_backward
_STASH, _UNSTASH = torch._C._stash_obj_in_tls, torch._C._remove_obj_from_tls
_AUTOGRAD, _AUTOGRAD_GRAPH = torch.autograd, torch.autograd.graph

_SKIPPED = {"_", "torch", "nn", "F", "help"}  # the kernel's own names, and the last echoed value
ENTRY_CAP = 2048        # entries in one read (a module's parameters count one each); the rest: "truncated"
NAME_CAP = 1000         # characters of a name or a string value read
VALUE_CAP = 100_000     # elements of one tensor read as values; a bigger one is compared by type and shape
CHILD_CAP = 256         # entries under one target (a module's parameters, a list's items)
LOG_CALLS = 2_000       # backward passes logged per task; later ones run unlogged
LOG_NODES = 200_000     # graph nodes walked (and kept) per task
LOG_NUMBERS = 200_000   # gradient numbers kept per task, pass by pass (what each pass added to a leaf)


class _Log:
    """The backward passes since the task started: what each started from and reached."""

    def __init__(self) -> None:
        self.calls = 0
        self.roots: dict[int, list] = {}   # id(node) -> [node, passes started there]
        self.nodes: dict[int, list] = {}   # id(node) -> [node, passes that reached it]
        # id(tensor) -> [tensor, passes, grad, data_ptr, version, values, the last pass's operations,
        #                what each pass added to its .grad (flat lists; None past LOG_NUMBERS)]
        self.leaves: dict[int, list] = {}
        self.numbers = 0
        self.full = False                  # past a cap: later passes were not logged


class _Task:
    """The objects a task started from (held, so their ids stay theirs), its targets (to find, at each
    pass, the non-leaf tensors that retain their grad) and its backward log."""

    def __init__(self, token: str, namespace: dict, targets: list) -> None:
        self.token = token
        self.known: dict[int, tuple[object, str]] = {}
        self.namespace = namespace
        self.targets = [steps for _text, steps in targets]
        self.log = _Log()


_task: _Task | None = None
_installed = False


def read(namespace: dict, targets: list, start: bool, token: str = "", everything: bool = False) -> dict:
    """The state of ``targets`` ([path text, [[kind, arg], ...]] each) as JSON-ready data.

    ``start`` begins a task (marks the objects, starts the backward log) and also lists the
    namespace's names; otherwise ``token`` must be the one that start gave, or the state says the
    task did not start in this kernel (it was restarted since). ``everything`` reads every other
    name's tensors, modules and values too, after the targets (the solution's run: lint asks that
    each thing it changes is checked)."""
    global _task
    if start:
        _install()
        _task = _Task(_urandom(8).hex(), namespace, targets)
    task = _task
    state: dict = {"entries": {}, "order": [], "token": task.token if task else "",
                   "started": bool(task) and (start or token == task.token), "grad_enabled": bool(_GRAD_ENABLED())}
    if _DISPATCH_DEPTH() or _FUNCTION_MODE_ON():
        state["unreadable"] = ("a torch mode (TorchDispatchMode or TorchFunctionMode) is still active, "
                               "and it would see every read of your tensors")
        return state
    reader = _Reader(task if state["started"] else None, start, state)
    with _NO_TORCH_FUNCTION():
        for text, steps in targets:
            reader.target(_str(text), namespace, steps)
        if everything:
            for name, value in _list(_dict_items(namespace)):
                if _type(name) is _str and name not in state["order"] and not name.startswith("__") \
                        and name not in _SKIPPED and _kind_of(value) not in ("callable", "other"):
                    reader.target(name, namespace, [["name", name]])
        reader.finish()
    if start:
        state["names"] = {name: _kind_of(value) for name, value in _dict_items(namespace)
                          if _type(name) is _str and not name.startswith("__") and _len(name) <= NAME_CAP}
    if task is not None:
        state["log_full"] = task.log.full
    return state


class _Reader:
    def __init__(self, task: _Task | None, start: bool, state: dict) -> None:
        self.task, self.start, self.state = task, start, state
        self.new: dict[int, tuple[object, str]] = {}  # objects not known at the start: first path seen
        self.later: list = []  # optimizers, read last

    # -- targets ----------------------------------------------------------------
    def target(self, text: str, namespace: dict, steps: list, value=None) -> None:
        later = bool(value is not None and not steps)
        try:
            if not later:
                value = self.resolve(namespace, steps)
        except _Unreadable as why:
            self.put(text, {"kind": "unreadable", "why": _str(why)})
            return
        except _Missing as why:
            self.put(text, {"kind": "missing", "why": _str(why)})
            return
        except Exception as exc:  # an object built to break readers: it cannot be judged, so it fails
            self.put(text, {"kind": "unreadable", "why": f"reading it raised {_type_name(_type(exc))}"})
            return
        if _issubclass(_type(value), _OPTIMIZER) and not later:
            # Read after the rest, so the tensors it holds are named where they live (net[2].bias).
            self.state["order"].append(text)
            self.later.append((text, value))
            return
        try:
            self.describe(text, value, 0)
        except Exception as exc:
            self.put(text, {"kind": "unreadable", "why": f"reading it raised {_type_name(_type(exc))}"})

    def finish(self) -> None:
        for text, value in self.later:
            self.state["order"].remove(text)
            self.target(text, {}, [], value=value)

    def resolve(self, namespace: dict, steps: list):
        kind, name = steps[0]
        missing = object()
        value = _dict_get(namespace, name, missing)
        if value is missing:
            raise _Missing(f"{name} is not defined")
        for kind, arg in steps[1:]:
            value = _index(value, arg) if kind == "index" else _attribute(value, arg)
        return value

    def put(self, path: str, entry: dict) -> None:
        if path not in self.state["entries"]:
            if _len(self.state["entries"]) >= ENTRY_CAP or _len(path) > NAME_CAP:
                self.state["truncated"] = True
                return
            if path not in self.state["order"]:
                self.state["order"].append(path)
        self.state["entries"][path] = entry

    # -- objects ----------------------------------------------------------------
    def describe(self, path: str, value, depth: int) -> None:
        kind = _type(value)
        if kind in _TENSOR_TYPES or _issubclass(kind, _BASE):
            self.put(path, self.tensor(path, value))
        elif _issubclass(kind, _MODULE):
            self.module(path, value, depth)
        elif _issubclass(kind, _OPTIMIZER):
            self.put(path, self.optimizer(path, value))
        elif value is None or kind in (bool, int, _float, _str):
            self.put(path, {"kind": "value", "type": _type_name(kind), "value": _plain(value)})
        elif kind in (_list, _tuple):
            self.put(path, {"kind": "sequence", "type": _type_name(kind), "length": _len(value),
                            "identity": self.label(value, path)})
            for i, item in enumerate(value[:CHILD_CAP]):
                self.describe(f"{path}[{i}]", item, depth + 1)
        else:
            self.put(path, {"kind": "object", "type": _qualified(kind), "identity": self.label(value, path)})

    def tensor(self, path: str, t) -> dict:
        kind = _type(t)
        if kind not in _TENSOR_TYPES:
            return {"kind": "tensor", "type": _qualified(kind), "identity": self.label(t, path),
                    "unreadable": "a subclass of torch.Tensor, whose methods can say anything"}
        entry = {"kind": "tensor", "type": _TENSOR_TYPES[kind], "identity": self.label(t, path)}
        entry.update(_facts(t))
        leaf, grad_fn = entry["is_leaf"], _GET["grad_fn"](t)
        grad = _GET["grad"](t) if leaf or entry["retains_grad"] else _quiet_grad(t)
        if grad is None:
            entry["grad"] = None
        elif _type(grad) not in _TENSOR_TYPES:
            entry["grad"] = {"type": _qualified(_type(grad)), "identity": self.label(grad, path + ".grad"),
                             "unreadable": "a subclass of torch.Tensor, whose methods can say anything"}
        else:
            entry["grad"] = {"type": _TENSOR_TYPES[_type(grad)], "identity": self.label(grad, path + ".grad"),
                             **_values(grad)}
        entry.update(self.passes(t, leaf, grad_fn, grad))
        return entry

    def passes(self, t, leaf: bool, grad_fn, grad) -> dict:
        """What the backward log says about ``t``: passes that reached it, started at it, and whether its
        .grad is still what the last of them left."""
        log = self.task.log if self.task else None
        if log is None or self.start:
            return {"backward": 0, "root": 0, "grad_by_backward": False, "graph": [], "pass_grads": []}
        record = _dict_get(log.leaves, _id(t))
        if record is not None and record[0] is t:
            same = (grad is not None and record[2] is grad and record[3] == _DATA_PTR(grad)
                    and record[4] == _GET["_version"](grad)
                    and (record[5] is None or record[5] == _values(grad).get("values")))
            return {"backward": record[1], "root": 0, "grad_by_backward": same, "graph": record[6],
                    "pass_grads": record[7]}
        node = _dict_get(log.nodes, _id(grad_fn)) if grad_fn is not None else None
        reached = node[1] if node is not None and node[0] is grad_fn else 0
        root = _dict_get(log.roots, _id(grad_fn)) if grad_fn is not None else None
        started = root[1] if root is not None and root[0] is grad_fn else 0
        # The engine writes a non-leaf's .grad only while it retains it, and such a target is logged above
        # (_retaining_targets): a .grad here was set by hand, or kept from before retain_grad().
        return {"backward": reached, "root": started, "grad_by_backward": False, "graph": [], "pass_grads": []}

    def module(self, path: str, module, depth: int) -> None:
        own = _object_getattribute(module, "__dict__")
        if _type(own) is not dict:
            raise _Unreadable("its __dict__ is not a dict")
        entry = {"kind": "module", "type": _qualified(_type(module)), "identity": self.label(module, path),
                 "training": bool(_dict_get(own, "training", False)), "parameters": [], "children": []}
        self.put(path, entry)
        if depth > 8:
            return
        for field, into in (("_parameters", "parameters"), ("_buffers", "parameters")):
            table = _dict_get(own, field)
            if _type(table) is not dict:
                continue
            for name, tensor in _list(_dict_items(table))[:CHILD_CAP]:
                if tensor is not None:
                    entry[into].append(_str(name))
                    self.describe(_child(path, name), tensor, depth + 1)
        children = _dict_get(own, "_modules")
        if _type(children) is dict:
            for name, child in _list(_dict_items(children))[:CHILD_CAP]:
                if child is not None:
                    entry["children"].append(_str(name))
                    self.describe(_child(path, name), child, depth + 1)

    def optimizer(self, path: str, opt) -> dict:
        own = _object_getattribute(opt, "__dict__")
        own = own if _type(own) is dict else {}
        groups = []
        raw = _dict_get(own, "param_groups")
        for g, group in enumerate(raw if _type(raw) is _list else []):
            if _type(group) is not dict:
                continue
            params = _dict_get(group, "params")
            labels = [self.label(p, f"{path}.param_groups[{g}][{i}]")
                      for i, p in enumerate(params if _type(params) in (_list, _tuple) else [])]
            hyper = {_str(k): _plain(v) for k, v in _dict_items(group) if k != "params"}
            groups.append({"params": labels, "hyper": hyper})
        return {"kind": "optimizer", "type": _qualified(_type(opt)), "identity": self.label(opt, path),
                "groups": groups}

    # -- identity -----------------------------------------------------------------
    def label(self, value, path: str) -> str:
        """"start:PATH" for an object the task started from (PATH: where it was then), else "new:PATH"
        (the first path it is seen at in this read), so two kernels' states compare by relation."""
        task = self.task
        if task is not None and self.start:
            task.known.setdefault(_id(value), (value, path))
        known = _dict_get(task.known, _id(value)) if task is not None else None
        if known is not None and known[0] is value:
            return "start:" + known[1]
        seen = self.new.setdefault(_id(value), (value, path))
        return "new:" + seen[1]


class _Unreadable(Exception):
    pass


class _Missing(Exception):
    pass


def _attribute(value, name: str):
    kind = _type(value)
    if kind in _TENSOR_TYPES or _issubclass(kind, _BASE):
        if name == "grad":
            return _GET["grad"](value) if _GET["is_leaf"](value) or _GET["retains_grad"](value) else _quiet_grad(value)
        raise _Unreadable(f"only .grad is read on a tensor, not .{name}")
    try:
        own = _object_getattribute(value, "__dict__")
    except AttributeError:
        raise _Unreadable(f"a {_type_name(kind)} has no attributes to read") from None
    if _type(own) is not dict:
        raise _Unreadable("its __dict__ is not a dict")
    if _issubclass(kind, _MODULE):
        for field in ("_parameters", "_buffers", "_modules"):
            table = _dict_get(own, field)
            if _type(table) is dict and name in table:
                return table[name]
    missing = object()
    found = _dict_get(own, name, missing)
    if found is missing:
        raise _Missing(f"it has no attribute {name!r}")
    return found


def _index(value, i: int):
    kind = _type(value)
    if _issubclass(kind, _MODULE):
        own = _object_getattribute(value, "__dict__")
        children = _dict_get(own, "_modules") if _type(own) is dict else None
        items = _list(_dict_values(children)) if _type(children) is dict else []
    elif kind in (_list, _tuple):
        items = value
    else:
        raise _Unreadable(f"a {_type_name(kind)} is not read by index")
    if not -_len(items) <= i < _len(items):
        raise _Missing(f"it has no item [{i}]")
    return items[i]


def _child(path: str, name) -> str:
    name = _str(name)
    return f"{path}[{name}]" if name.isdigit() else f"{path}.{name}"


def _facts(t) -> dict:
    return {"requires_grad": bool(_GET["requires_grad"](t)), "is_leaf": bool(_GET["is_leaf"](t)),
            "retains_grad": bool(_GET["retains_grad"](t)),
            "grad_fn": _node_name(_GET["grad_fn"](t)), **_values(t)}


def _values(t) -> dict:
    facts = {"dtype": _str(_GET["dtype"](t)), "shape": [int(n) for n in _GET["shape"](t)] if not _GET["is_nested"](t)
             else None, "values": None}
    if _GET["is_nested"](t) or _GET["layout"](t) is not _STRIDED:
        facts["unreadable"] = "a nested or sparse tensor is not compared by value"
    elif _NUMEL(t) <= VALUE_CAP:
        facts["values"] = _plain(_TOLIST(_DETACH(t)))
    return facts


def _quiet_grad(t):
    """A non-leaf's .grad without torch's warning about reading it (it is None unless set by hand)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _GET["grad"](t)


def _node_name(node) -> str | None:
    return None if node is None else _type_name(_type(node))


def _qualified(kind) -> str:
    module = _type_module(kind)
    name = _type_name(kind)
    return name if module == "builtins" else f"{module}.{name}"


def _plain(value):
    """JSON-ready: numbers as numbers (non-finite ones spelled), nested lists kept; anything else its type."""
    kind = _type(value)
    if kind is _str:
        return value[:NAME_CAP]
    if value is None or kind is bool:
        return value
    if kind is int:
        return value
    if kind is _float:
        return value if _isfinite(value) else _str(value)
    if kind in (_list, _tuple):
        return [_plain(v) for v in value]
    if kind is complex:
        return _str(value)
    return f"<{_qualified(kind)}>"


def _kind_of(value) -> str:
    kind = _type(value)
    if kind in _TENSOR_TYPES or _issubclass(kind, _BASE):
        return "tensor"
    if _issubclass(kind, _MODULE):
        return "module"
    if _issubclass(kind, _OPTIMIZER):
        return "optimizer"
    if kind in (_list, _tuple, dict, set):
        return "collection"
    if value is None or kind in (bool, int, _float, _str):
        return "value"
    if _type_name(kind) in ("function", "builtin_function_or_method", "method", "type", "partial"):
        return "callable"
    return "other"


# -- the backward log -----------------------------------------------------------------

def _install() -> None:
    """Route autograd's one entry to the engine through the log (once per process). It calls the
    engine captured at import, so a learner who replaced torch's own entry cannot fake a pass."""
    global _installed
    if _installed:
        return
    _installed = True
    _AUTOGRAD._engine_run_backward = _run_backward
    _AUTOGRAD_GRAPH._engine_run_backward = _run_backward


def _run_backward(t_outputs, *args, **kwargs):
    task = _task
    log = task.log if task is not None else None
    walked = None
    if log is not None and kwargs.get("accumulate_grad") and not log.full:
        inputs = args[3] if _len(args) > 3 else kwargs.get("inputs")
        walked = _walk(t_outputs, inputs, log, task)
    _STASH("context", _copy_context())  # what torch's own entry does for compiled autograd
    try:
        result = _RUN_BACKWARD(_ENGINE, t_outputs, *args, **kwargs)
    finally:
        _UNSTASH("context")
    if walked is not None and task is _task:
        _note(log, *walked)
    return result


def _walk(t_outputs, inputs, log: _Log, task: _Task):
    """The roots, nodes and leaves one backward pass reaches (before it runs: it frees the graph).

    The task's non-leaf targets that retain their grad and whose node the pass reaches count as
    leaves: the engine writes their .grad too, so a .grad set by hand afterwards is told apart."""
    roots, nodes, leaves, stack, seen, names = [], [], [], [], set(), set()
    with _NO_TORCH_FUNCTION():
        for out in t_outputs if _type(t_outputs) in (_list, _tuple) else [t_outputs]:
            if _type(out) is _GRADIENT_EDGE:
                node = out.node
            elif _issubclass(_type(out), _BASE):
                node = _GET["grad_fn"](out)
                if node is None and _GET["is_leaf"](out) and _GET["requires_grad"](out):
                    leaves.append(out)  # backward on a leaf itself
            else:
                continue
            if node is not None:
                roots.append(node)
                stack.append(node)
        budget = LOG_NODES - _len(log.nodes)
        while stack:
            node = stack.pop()
            if _id(node) in seen:
                continue
            seen.add(_id(node))
            nodes.append(node)
            names.add(_type_name(_type(node)))
            if _len(nodes) > budget:
                log.full = True
                return None
            if _type(node) is _ACCUMULATE_GRAD:
                leaves.append(node.variable)
                continue
            for following, _nr in node.next_functions:
                if following is not None:
                    stack.append(following)
        if inputs:  # backward(inputs=...) accumulates into those tensors only
            reached = {_id(t) for t in leaves} | {_id(n) for n in nodes}
            leaves = [t for t in inputs if _issubclass(_type(t), _BASE)
                      and (_id(t) in reached or _id(_GET["grad_fn"](t)) in reached)]
        else:
            leaves += [t for t in _retaining_targets(task) if _id(_GET["grad_fn"](t)) in seen]
        before = [_grad_numbers(leaf) for leaf in leaves]
    return roots, nodes, leaves, before, sorted(names)


def _note(log: _Log, roots: list, nodes: list, leaves: list, before: list, names: list) -> None:
    log.calls += 1
    if log.calls >= LOG_CALLS:
        log.full = True
    for table, items in ((log.roots, roots), (log.nodes, nodes)):
        for node in items:
            record = table.setdefault(_id(node), [node, 0])
            if record[0] is node:
                record[1] += 1
    with _NO_TORCH_FUNCTION():
        for leaf, earlier in zip(leaves, before):
            grad = _GET["grad"](leaf) if _GET["is_leaf"](leaf) or _GET["retains_grad"](leaf) else _quiet_grad(leaf)
            record = log.leaves.get(_id(leaf))
            known = record is not None and record[0] is leaf
            passes = record[1] + 1 if known else 1
            added = record[7] if known else []
            now = _grad_numbers(leaf)
            if added is not None and now is not None and log.numbers + _len(now) <= LOG_NUMBERS:
                added = added + [[a - b for a, b in zip(now, earlier)] if earlier is not None else now]
                log.numbers += _len(now)
            else:
                added = None  # past the cap, or unreadable: "what each pass added" is not known
            if grad is None or _type(grad) not in _TENSOR_TYPES:
                log.leaves[_id(leaf)] = [leaf, passes, None, 0, -1, None, names, added]
                continue
            values = _values(grad).get("values")
            log.leaves[_id(leaf)] = [leaf, passes, grad, _DATA_PTR(grad), _GET["_version"](grad), values, names,
                                     added]


def _retaining_targets(task: _Task) -> list:
    """The task's targets that are non-leaf tensors retaining their grad, as the namespace holds them now."""
    found = []
    for steps in task.targets:
        try:
            value = _dict_get(task.namespace, steps[0][1])
            for kind, arg in steps[1:]:
                value = _index(value, arg) if kind == "index" else _attribute(value, arg)
        except Exception:  # a target not there yet, or not readable: nothing to log for it
            continue
        if _type(value) in _TENSOR_TYPES and not _GET["is_leaf"](value) and _GET["retains_grad"](value):
            found.append(value)
    return found


def _grad_numbers(leaf) -> list | None:
    """A leaf's .grad as one flat list of numbers (None: no .grad, or not one to read)."""
    grad = _GET["grad"](leaf) if _GET["is_leaf"](leaf) or _GET["retains_grad"](leaf) else _quiet_grad(leaf)
    if grad is None or _type(grad) not in _TENSOR_TYPES or _NUMEL(grad) > VALUE_CAP \
            or _GET["layout"](grad) is not _STRIDED:
        return None
    return _flat(_TOLIST(_DETACH(grad)))


def _flat(values) -> list:
    if _type(values) is _list:
        return [x for v in values for x in _flat(v)]
    return [values]
