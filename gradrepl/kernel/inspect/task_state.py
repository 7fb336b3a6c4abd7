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
Each pass also keeps the seed it started from (``backward(gradient=...)``, ones
by default) and whether it went through a gradient that autograd itself made
with ``create_graph=True`` (``torch.autograd.grad``'s result, the engine's
nodes, not a formula rebuilt by hand). That is how "backward ran", "it went
through this y twice", "the seed was the solution's" and ".grad was set by
hand" are told apart, none of which a value can show.

The references are captured in captured.py, read through the primitives of
reads.py; the backward log is backward_log.py; this module reads a state.

What this cannot stop: code that reaches into gradrepl's own kernel modules
(through sys.modules, gc, frames) can change this reader too. The frontend
refuses attempts that use those doors directly (tutor/code_rules.py); the
kernel process is the learner's, so nothing in it is proof against every
trick, and the docs say so.
"""

from __future__ import annotations

from gradrepl.kernel.guard import NoValue
from gradrepl.kernel.inspect.torch_globals import Switches, described
from gradrepl.kernel.inspect.transforms import TORCH_FILES, at_moved_inputs, made_by_transform, ran_inside, transformed
from gradrepl.kernel.inspect.walk import output_name
from gradrepl.kernel.inspect.backward_log import Task, begin, current
from gradrepl.kernel.inspect.captured import (BASE, DATA_PTR, DISPATCH_DEPTH, FUNCTION_MODE_ON, GET, GRAD_ENABLED,
                                              MODULE, NO_TORCH_FUNCTION, OPTIMIZER, TENSOR_TYPES, _float, _id,
                                              _issubclass, _len, _list, _str, _tuple, _type, _urandom, bool, dict,
                                              dict_get, dict_items, enumerate, int, object_getattribute, type_name)
from gradrepl.kernel.inspect.reads import (CHILD_CAP, ENTRY_CAP, Missing, NAME_CAP, SKIPPED, Unreadable, _attribute,
                                           _child, _facts, _index, _values, kind_of, plain, qualified, quiet_grad,
                                           setting, unreadable)


def read(namespace: dict, targets: list, start: bool, token: str = "", everything: bool = False) -> dict:
    """The state of ``targets`` ([path text, [[kind, arg], ...]] each) as JSON-ready data.

    ``start`` begins a task (marks the objects, starts the backward log) and also lists the
    namespace's names; otherwise ``token`` must be the one that start gave, or the state says the
    task did not start in this kernel (it was restarted since). ``everything`` reads every other
    name's tensors, modules and values too, after the targets (the solution's run: lint asks that
    each thing it changes is checked). A read after the start puts torch's process-wide switches back as
    the start had them, once it has reported them (torch_globals.py): an attempt's set_default_dtype or
    manual_seed does not outlive it."""
    global _watched, _switches
    if start:
        begin(Task(_urandom(8).hex(), namespace, targets))
        _watched = (current(), _ran_candidates(namespace))
        _switches = (current(), Switches())
    task = current()
    state: dict = {"entries": {}, "order": [], "token": task.token if task else "",
                   "started": bool(task) and (start or token == task.token), "grad_enabled": bool(GRAD_ENABLED()),
                   "globals": described()}
    try:
        return _read(namespace, targets, start, task, state, everything)
    finally:
        if not start and state["started"] and _switches[0] is task:
            _switches[1].put_back()


def _read(namespace: dict, targets: list, start: bool, task: Task | None, state: dict, everything: bool) -> dict:
    if DISPATCH_DEPTH() or FUNCTION_MODE_ON():
        state["unreadable"] = unreadable("torch_mode_active")
        return state
    reader = _Reader(task if state["started"] else None, start, state)
    with NO_TORCH_FUNCTION():
        for text, steps in targets:
            reader.target(_str(text), namespace, steps)
        reader.named = False  # a function is run under its transform only when a check names it
        if everything:
            for name, value in _list(dict_items(namespace)):
                if _type(name) is _str and name not in state["order"] and not name.startswith("__") \
                        and name not in SKIPPED and not output_name(name) and kind_of(value) not in ("callable", "other"):
                    reader.target(name, namespace, [["name", name]])
        reader.finish()
    stuck: list = []  # a run again that ran out of time: the rest are not tried (each would take as long)
    for path, t in reader.transformed:  # after every read: the runs may leave backward passes in the log
        moved = _rerun(state["entries"][path], at_moved_inputs, t, stuck)
        with NO_TORCH_FUNCTION():
            state["entries"][path]["at_moved_inputs"] = (_values(moved)["values"] if _type(moved) in TENSOR_TYPES
                                                         else None)
    for path, function in reader.functions:
        runs = _rerun(state["entries"][path], transformed, function, stuck)
        with NO_TORCH_FUNCTION():
            state["entries"][path]["transformed"] = None if runs is None else {
                "at": [_values(t)["values"] for t in runs[0] if _type(t) in TENSOR_TYPES],
                "moved": [_values(t)["values"] for t in runs[1] if _type(t) in TENSOR_TYPES]}
    if start:
        state["names"] = {name: kind_of(value) for name, value in dict_items(namespace)
                          if _type(name) is _str and not name.startswith("__") and not output_name(name)
                          and _len(name) <= NAME_CAP}
    if task is not None:
        state["log_full"] = task.log.full
    return state


def _rerun(entry: dict, run, target, stuck: list):
    """run(target), the learner's function run again (transforms.py); None, and the entry's ``rerun`` the
    reason, when it did not return (it ran out of time, or raised KeyboardInterrupt or SystemExit), or was
    not run because one before it ran out of time (``stuck``)."""
    if stuck:
        entry["rerun"] = {"why": "not_run"}
        return None
    try:
        return run(target)
    except NoValue as failed:
        entry["rerun"] = failed.reason
        if failed.timed_out:
            stuck.append(failed.reason)
        return None


_watched: tuple = (None, [])  # (task, [(name, module or function)]): what the task starts from that can run
_switches: tuple = (None, None)  # (task, Switches): torch's process-wide switches as the task started


def _ran_candidates(namespace: dict) -> list:
    """The modules and Python functions the task starts from, by name: a transform's result is asked
    which of them ran inside it (``by_transform_of``)."""
    found = []
    for name, value in _list(dict_items(namespace)):
        if _type(name) is _str and not name.startswith("__") and not output_name(name) and _len(name) <= NAME_CAP \
                and (_issubclass(_type(value), MODULE) or _written_here(value)):
            found.append((name, value))
    return found[:CHILD_CAP]


def _written_here(value) -> bool:
    """A Python function whose code was written in the kernel (a lesson's or the learner's cell), not one of
    torch's (a vjp's pull runs inside jacrev too, as torch's own code)."""
    if type_name(_type(value)) != "function":
        return False
    module = object_getattribute(value, "__module__")
    if _type(module) is _str and module.partition(".")[0] in ("torch", "gradrepl", "functools"):
        return False
    filename = object_getattribute(object_getattribute(value, "__code__"), "co_filename")
    return not (_type(filename) is _str and filename.startswith(TORCH_FILES))


def _flat_values(values) -> list:
    if _type(values) is _list:
        return [x for v in values for x in _flat_values(v)]
    return [values]


def _ran_of(t) -> list:
    task, candidates = _watched
    if task is not current():
        return []
    return [name for name, value in candidates if ran_inside(t, value)]


class _Reader:
    def __init__(self, task: Task | None, start: bool, state: dict) -> None:
        self.task, self.start, self.state = task, start, state
        self.new: dict[int, tuple[object, str]] = {}  # objects not known at the start: first path seen
        self.later: list = []  # optimizers, read last
        self.transformed: list = []  # (path, tensor) of transforms' results, run again at moved inputs last
        self.functions: list = []  # (path, function or module) a check names, run under its transform last
        self.named = True  # reading a target a check names (not one of `everything`'s other names)

    # -- targets ----------------------------------------------------------------
    def target(self, text: str, namespace: dict, steps: list, value=None) -> None:
        later = bool(value is not None and not steps)
        try:
            if not later:
                value = self.resolve(namespace, steps)
        except Missing as why:
            self.put(text, {"kind": "missing", **why.reason()})
            return
        except Unreadable as why:
            self.put(text, {"kind": "unreadable", **why.reason()})
            return
        except Exception as exc:  # an object built to break readers: it cannot be judged, so it fails
            self.put(text, {"kind": "unreadable", **unreadable("raised", error=type_name(_type(exc)))})
            return
        if _issubclass(_type(value), OPTIMIZER) and not later:
            # Read after the rest, so the tensors it holds are named where they live (net[2].bias).
            self.state["order"].append(text)
            self.later.append((text, value))
            return
        try:
            self.describe(text, value, 0)
        except Exception as exc:
            self.put(text, {"kind": "unreadable", **unreadable("raised", error=type_name(_type(exc)))})

    def finish(self) -> None:
        for text, value in self.later:
            self.state["order"].remove(text)
            self.target(text, {}, [], value=value)

    def resolve(self, namespace: dict, steps: list):
        kind, name = steps[0]
        missing = object()
        value = dict_get(namespace, name, missing)
        if value is missing:
            raise Missing("not_defined", name=name)
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
        if kind in TENSOR_TYPES or _issubclass(kind, BASE):
            self.put(path, self.tensor(path, value))
        elif _issubclass(kind, MODULE):
            self.module(path, value, depth)
        elif _issubclass(kind, OPTIMIZER):
            self.put(path, self.optimizer(path, value))
        elif value is None or kind in (bool, int, _float, _str):
            self.put(path, {"kind": "value", "type": type_name(kind), "value": plain(value)})
        elif kind in (_list, _tuple):
            self.put(path, {"kind": "sequence", "type": type_name(kind), "length": _len(value),
                            "identity": self.label(value, path)})
            for i, item in enumerate(value[:CHILD_CAP]):
                self.describe(f"{path}[{i}]", item, depth + 1)
        else:
            self.put(path, {"kind": "object", "type": qualified(kind), "identity": self.label(value, path)})
            if self.named and depth == 0 and not self.start and type_name(kind) == "function":
                self.functions.append((path, value))

    def tensor(self, path: str, t) -> dict:
        kind = _type(t)
        if kind not in TENSOR_TYPES:
            return {"kind": "tensor", "type": qualified(kind), "identity": self.label(t, path),
                    "unreadable": unreadable("tensor_subclass")}
        entry = {"kind": "tensor", "type": TENSOR_TYPES[kind], "identity": self.label(t, path)}
        entry.update(_facts(t))
        entry.update(self.written(t, entry["values"]))
        leaf, grad_fn = entry["is_leaf"], GET["grad_fn"](t)
        grad = GET["grad"](t) if leaf or entry["retains_grad"] else quiet_grad(t)
        if grad is None:
            entry["grad"] = None
        elif _type(grad) not in TENSOR_TYPES:
            entry["grad"] = {"type": qualified(_type(grad)), "identity": self.label(grad, path + ".grad"),
                             "unreadable": unreadable("tensor_subclass")}
        else:
            entry["grad"] = {"type": TENSOR_TYPES[_type(grad)], "identity": self.label(grad, path + ".grad"),
                             **_values(grad)}
            entry["grad"].update(self.written(grad, entry["grad"]["values"]))
        entry.update(self.passes(t, leaf, grad_fn, grad))
        entry["by_transform"] = made_by_transform(t)
        entry["by_transform_of"] = _ran_of(t) if entry["by_transform"] else []
        if entry["by_transform"] and not self.start:
            self.transformed.append((path, t))
        return entry

    def passes(self, t, leaf: bool, grad_fn, grad) -> dict:
        """What the backward log says about ``t``: passes that reached it, started at it, and whether its
        .grad is still what the last of them left."""
        log = self.task.log if self.task else None
        if log is None or self.start:
            return {"backward": 0, "root": 0, "grad_by_backward": False, "graph": [], "pass_grads": [],
                    "seeds": [], "through_grad": False}
        record = dict_get(log.leaves, _id(t))
        given = dict_get(log.given, _id(grad)) if grad is not None else None
        if given is not None and given[0] is grad and given[1] is t and given[2] == DATA_PTR(grad) \
                and given[3] == GET["_version"](grad) and given[4] == _values(grad).get("values"):
            # .grad is, unchanged, the gradient torch.autograd.grad returned for t: that pass left it
            earlier = record if record is not None and record[0] is t else None
            added = earlier[7] if earlier is not None else []
            seeded = earlier[8] if earlier is not None else []
            return {"backward": (earlier[1] if earlier is not None else 0) + 1, "root": 0, "grad_by_backward": True,
                    "graph": given[5], "seeds": seeded + [given[6]] if seeded is not None else None,
                    "pass_grads": added + [_flat_values(given[4])] if added is not None else None,
                    "through_grad": given[7]}
        if record is not None and record[0] is t:
            same = (grad is not None and record[2] is grad and record[3] == DATA_PTR(grad)
                    and record[4] == GET["_version"](grad)
                    and (record[5] is None or record[5] == _values(grad).get("values")))
            return {"backward": record[1], "root": 0, "grad_by_backward": same, "graph": record[6],
                    "pass_grads": record[7], "seeds": record[8], "through_grad": record[9]}
        node = dict_get(log.nodes, _id(grad_fn)) if grad_fn is not None else None
        reached = node[1] if node is not None and node[0] is grad_fn else 0
        root = dict_get(log.roots, _id(grad_fn)) if grad_fn is not None else None
        started = root[1] if root is not None and root[0] is grad_fn else 0
        seeds = root[2] if started else []
        # The engine writes a non-leaf's .grad only while it retains it, and such a target is logged above
        # (_retaining_targets): a .grad here was set by hand, or kept from before retain_grad().
        came = dict_get(log.arrived, _id(grad_fn)) if grad_fn is not None else None
        return {"backward": reached, "root": started, "grad_by_backward": False, "graph": [], "pass_grads": [],
                "seeds": seeds, "through_grad": False,
                "grad_arrived": came[1] if came is not None and came[0] is grad_fn else None}

    def written(self, t, values) -> dict:
        """How ``t`` was written since the task started. ``writes``: the in-place writes autograd saw, by
        the tensor's own version counter (a write through ``.data`` bumps another tensor's, so none here);
        ``hidden``: its values changed while that counter stood still (through ``.data``);
        ``same_storage``: it keeps the memory it started with (``.data =`` and ``set_()`` swap it, and a
        view taken before keeps the old numbers). A tensor made since the start counts its writes from
        0, and nothing is known of what it held before."""
        task = self.task
        if task is None:
            return {}
        version, ptr = GET["_version"](t), DATA_PTR(t)
        if self.start:
            task.tensors.setdefault(_id(t), (t, version, ptr, values))
            return {"writes": 0, "hidden": False, "same_storage": True}
        mark = dict_get(task.tensors, _id(t))
        if mark is None or mark[0] is not t:
            return {"writes": version, "hidden": None, "same_storage": None}
        return {"writes": version - mark[1], "hidden": version == mark[1] and values != mark[3],
                "same_storage": ptr == mark[2]}

    def module(self, path: str, module, depth: int) -> None:
        own = object_getattribute(module, "__dict__")
        if _type(own) is not dict:
            raise Unreadable("odd_dict")
        entry = {"kind": "module", "type": qualified(_type(module)), "identity": self.label(module, path),
                 "training": bool(dict_get(own, "training", False)), "parameters": [], "children": []}
        self.put(path, entry)
        if depth > 8:
            return
        for field, into in (("_parameters", "parameters"), ("_buffers", "parameters")):
            table = dict_get(own, field)
            if _type(table) is not dict:
                continue
            for name, tensor in _list(dict_items(table))[:CHILD_CAP]:
                if tensor is not None:
                    entry[into].append(_str(name))
                    self.describe(_child(path, name), tensor, depth + 1)
        children = dict_get(own, "_modules")
        if _type(children) is dict:
            for name, child in _list(dict_items(children))[:CHILD_CAP]:
                if child is not None:
                    entry["children"].append(_str(name))
                    self.describe(_child(path, name), child, depth + 1)

    def optimizer(self, path: str, opt) -> dict:
        own = object_getattribute(opt, "__dict__")
        own = own if _type(own) is dict else {}
        groups = []
        raw = dict_get(own, "param_groups")
        for g, group in enumerate(raw if _type(raw) is _list else []):
            if _type(group) is not dict:
                continue
            params = dict_get(group, "params")
            labels = [self.label(p, f"{path}.param_groups[{g}]['params'][{i}]")
                      for i, p in enumerate(params if _type(params) in (_list, _tuple) else [])]
            hyper = {_str(k): setting(v) for k, v in dict_items(group) if k != "params"}
            groups.append({"params": labels, "hyper": hyper})
        return {"kind": "optimizer", "type": qualified(_type(opt)), "identity": self.label(opt, path),
                "groups": groups, "state": self.optimizer_state(path, dict_get(own, "state"))}

    def optimizer_state(self, path: str, table) -> list:
        """What step() keeps per parameter (SGD's momentum_buffer, Adam's moments): [{param, values}] with
        each parameter's label and each value plain. A fresh optimizer keeps none; one given an old
        optimizer's buffers moves the weights with that momentum at its first step."""
        found: list = []
        if not _issubclass(_type(table), dict):
            return found
        for i, (param, kept) in enumerate(_list(dict_items(table))[:CHILD_CAP]):
            values = {}
            if _issubclass(_type(kept), dict):
                for name, value in _list(dict_items(kept))[:CHILD_CAP]:
                    if _type(name) is not _str:
                        continue
                    values[_str(name)[:NAME_CAP]] = (_values(value)["values"] if _type(value) in TENSOR_TYPES
                                                     else plain(value))
            found.append({"param": self.label(param, f"list({path}.state)[{i}]"), "values": values})
        return found

    # -- identity -----------------------------------------------------------------
    def label(self, value, path: str) -> str:
        """"start:PATH" for an object the task started from (PATH: where it was then), else "new:PATH"
        (the first path it is seen at in this read), so two kernels' states compare by relation."""
        task = self.task
        if task is not None and self.start:
            task.known.setdefault(_id(value), (value, path))
        known = dict_get(task.known, _id(value)) if task is not None else None
        if known is not None and known[0] is value:
            return "start:" + known[1]
        seen = self.new.setdefault(_id(value), (value, path))
        return "new:" + seen[1]
