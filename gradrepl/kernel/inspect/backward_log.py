"""The log of the backward passes since a task started: which roots they started from, which nodes
and leaves they reached, and what each added to a leaf's .grad (task_state.py says why). It is
installed as autograd's one entry to the engine, and calls the engine captured at import."""

from __future__ import annotations

from gradrepl.kernel.inspect.captured import (ACCUMULATE_GRAD, AUTOGRAD, AUTOGRAD_GRAPH, BASE, DATA_PTR, DETACH, ENGINE,
                                              GET, GRADIENT_EDGE, NO_TORCH_FUNCTION, NUMEL, RUN_BACKWARD, STASH,
                                              STRIDED, TENSOR_TYPES, TOLIST, UNSTASH, _copy_context, _id, _issubclass,
                                              _len, _list, _tuple, _type, dict_get, set, sorted, type_name, zip)
from gradrepl.kernel.inspect import grad_origin
from gradrepl.kernel.inspect.reads import VALUE_CAP, _attribute, _index, _values, plain, quiet_grad


LOG_CALLS = 2_000       # backward passes logged per task; later ones run unlogged
LOG_NODES = 200_000     # graph nodes walked (and kept) per task
LOG_NUMBERS = 200_000   # gradient numbers kept per task, pass by pass (what each pass added to a leaf)


class _Log:
    """The backward passes since the task started: what each started from and reached."""

    def __init__(self) -> None:
        self.calls = 0
        self.roots: dict[int, list] = {}   # id(node) -> [node, passes started there, each pass's seeds]
        self.nodes: dict[int, list] = {}   # id(node) -> [node, passes that reached it]
        # id(tensor) -> [tensor, passes, grad, data_ptr, version, values, the last pass's operations,
        #                what each pass added to its .grad (flat lists; None past LOG_NUMBERS),
        #                each pass's seeds (one flat list per root; None past LOG_NUMBERS),
        #                whether the last pass went through a graph autograd made (create_graph)]
        self.leaves: dict[int, list] = {}
        self.made: dict[int, object] = {}  # id(node) -> node: made by a create_graph backward pass
        # id(node) -> [node, the gradient (flat numbers) the last pass through it brought in]: for the nodes
        # above, so a check can ask that the gradient really went through a tensor autograd made (g * 0 does not)
        self.arrived: dict[int, list] = {}
        # id(gradient) -> [gradient, the input it is d root / d of, data_ptr, version, values, the pass's
        #                  operations, its seeds, whether it went through a graph autograd made]: what
        #                  torch.autograd.grad returned, so `w.grad = torch.autograd.grad(loss, w)[0]` counts
        #                  as the pass that left w.grad (it is, while that tensor stays unchanged)
        self.given: dict[int, list] = {}
        self.numbers = 0
        self.full = False                  # past a cap: later passes were not logged


class Task:
    """The objects a task started from (held, so their ids stay theirs), its targets (to find, at each
    pass, the non-leaf tensors that retain their grad) and its backward log."""

    def __init__(self, token: str, namespace: dict, targets: list) -> None:
        self.token = token
        self.known: dict[int, tuple[object, str]] = {}
        # id -> (tensor, _version, data_ptr, values) at the start: how each was written since (task_state.py)
        self.tensors: dict[int, tuple] = {}
        self.namespace = namespace
        self.targets = [steps for _text, steps in targets]
        self.log = _Log()


_installed = False
_task: Task | None = None  # the task being worked on: the one backward passes are logged for
passes = 0  # backward passes run in this process (backward and autograd.grad): only a pass frees a graph


def passes_run() -> int:
    """How many backward passes ran since the log was installed (snapshot.py re-reads saved bytes after one)."""
    return passes


def begin(task: Task) -> None:
    """Make ``task`` the one the backward log is for (installing the log first, once)."""
    global _task
    install()
    _task = task


def current() -> Task | None:
    return _task


# -- the backward log -----------------------------------------------------------------

def install() -> None:
    """Route autograd's one entry to the engine through the log (once per process). It calls the
    engine captured at import, so a learner who replaced torch's own entry cannot fake a pass."""
    global _installed
    if _installed:
        return
    _installed = True
    AUTOGRAD._engine_run_backward = _run_backward
    AUTOGRAD_GRAPH._engine_run_backward = _run_backward


def _run_backward(t_outputs, *args, **kwargs):
    global passes
    passes += 1
    task = _task
    log = task.log if task is not None else None
    inputs = args[3] if _len(args) > 3 else kwargs.get("inputs")
    accumulates = kwargs.get("accumulate_grad")  # backward(); autograd.grad writes only retained grads
    logged, watched = log is not None and not log.full, grad_origin.watching()
    limit = LOG_NODES - _len(log.nodes) if logged else 0  # one walk for the log and grad_origin, the larger budget
    if watched and grad_origin.WALK_NODES > limit:
        limit = grad_origin.WALK_NODES
    try:
        graph = _graph(t_outputs, inputs, limit) if logged or watched else None
    except RuntimeError:  # torch.func's own passes run on its wrapped tensors: nothing to log, nor to watch
        graph, logged = None, False
    walked = None
    if logged:  # backward(), and autograd.grad (its inputs, whose gradients it returns)
        seeds = args[0] if args else kwargs.get("grad_tensors")
        if accumulates:
            walked = _walk(graph, inputs, log, task, seeds, t_outputs)
        else:
            try:  # torch.func's own passes run on its wrapped tensors, which have no storage to read
                walked = _walk(graph, inputs, log, task, seeds, t_outputs)
            except RuntimeError:
                walked = None
    hooks = _watch_arrivals(log, walked[1]) if walked is not None else []
    STASH("context", _copy_context())  # what torch's own entry does for compiled autograd
    grad_origin.before_pass((graph[3] if accumulates else [], graph[1], graph[2]) if watched and graph is not None else None)
    try:
        result = RUN_BACKWARD(ENGINE, t_outputs, *args, **kwargs)
    finally:
        grad_origin.after_pass()
        UNSTASH("context")
        for hook in hooks:
            hook.remove()
    if log is not None and task is _task and (args[2] if _len(args) > 2 else kwargs.get("create_graph")):
        made = result if not kwargs.get("accumulate_grad") else [GET["grad"](leaf) for leaf in
                                                                  (walked[2] if walked is not None else [])]
        _made_by_autograd(log, made)
    if walked is not None and task is _task:
        if kwargs.get("accumulate_grad"):
            _note(log, *walked)
        else:
            try:
                _given(log, inputs, result, walked)
            except RuntimeError:  # a gradient without storage (inside a torch.func transform): not the learner's
                pass
    return result


def _given(log: _Log, inputs, result, walked: tuple) -> None:
    """Remember each gradient an autograd.grad pass returned, with the input it belongs to and the pass."""
    _roots, _nodes, _leaves, _before, names, seeds, through = walked
    log.calls += 1
    if log.calls >= LOG_CALLS:
        log.full = True
    if _type(inputs) not in (_list, _tuple) or _type(result) not in (_list, _tuple):
        return
    with NO_TORCH_FUNCTION():
        for given, grad in zip(inputs, result):
            if _type(grad) not in TENSOR_TYPES or not _issubclass(_type(given), BASE) or NUMEL(grad) > VALUE_CAP \
                    or log.numbers + NUMEL(grad) > LOG_NUMBERS:
                continue
            log.numbers += NUMEL(grad)
            log.given[_id(grad)] = [grad, given, DATA_PTR(grad), GET["_version"](grad),
                                    _values(grad).get("values"), names, seeds, through]


def _watch_arrivals(log: _Log, nodes: list) -> list:
    """Pre-hooks, for this pass only, on the nodes a create_graph pass made: each notes the gradient that
    arrives at it (d root / d that tensor)."""
    hooks = []
    for node in nodes:
        if dict_get(log.made, _id(node)) is node:
            def arrived(grad_outputs, node=node):
                first = grad_outputs[0] if _len(grad_outputs) else None
                log.arrived[_id(node)] = [node, _seed_numbers(first) if first is not None else []]
            hooks.append(node.register_prehook(arrived))
    return hooks


def _made_by_autograd(log: _Log, tensors) -> None:
    """Mark the nodes of gradients a create_graph pass made (autograd.grad's results, or the .grad a
    backward(create_graph=True) left): a later pass through one went through a graph autograd built."""
    with NO_TORCH_FUNCTION():
        for t in tensors if _type(tensors) in (_list, _tuple) else []:
            node = GET["grad_fn"](t) if _issubclass(_type(t), BASE) else None
            if node is not None and _len(log.made) < LOG_NODES:
                log.made[_id(node)] = node


def _graph(t_outputs, inputs, limit: int):
    """The roots, nodes and ids of nodes one backward pass reaches, and the tensors it accumulates into
    (before it runs: it frees the graph); None past `limit` nodes."""
    roots, nodes, leaves, stack, seen = [], [], [], [], set()
    outputs = t_outputs if _type(t_outputs) in (_list, _tuple) else [t_outputs]
    with NO_TORCH_FUNCTION():
        for out in outputs:
            if _type(out) is GRADIENT_EDGE:
                node = out.node
            elif _issubclass(_type(out), BASE):
                node = GET["grad_fn"](out)
                if node is None and GET["is_leaf"](out) and GET["requires_grad"](out):
                    leaves.append(out)  # backward on a leaf itself
            else:
                continue
            if node is not None:
                roots.append(node)
                stack.append(node)
        while stack:
            node = stack.pop()
            if _id(node) in seen:
                continue
            seen.add(_id(node))
            nodes.append(node)
            if _len(nodes) > limit:
                return None
            if _type(node) is ACCUMULATE_GRAD:
                leaves.append(node.variable)
                continue
            for following, _nr in node.next_functions:
                if following is not None:
                    stack.append(following)
        if inputs:  # backward(inputs=...) accumulates into those tensors only
            reached = {_id(t) for t in leaves} | seen
            leaves = [t for t in inputs if _issubclass(_type(t), BASE)
                      and (_id(t) in reached or _id(GET["grad_fn"](t)) in reached)]
    return roots, nodes, seen, leaves


def _walk(graph: tuple | None, inputs, log: _Log, task: Task, seeds, t_outputs):
    """What the log keeps of one backward pass (its `_graph`), read before the pass runs.

    The task's non-leaf targets that retain their grad and whose node the pass reaches count as
    leaves: the engine writes their .grad too, so a .grad set by hand afterwards is told apart."""
    if graph is None or _len(graph[1]) > LOG_NODES - _len(log.nodes):
        log.full = True
        return None
    roots, nodes, seen, leaves = graph
    seeds = seeds if _type(seeds) in (_list, _tuple) else [seeds] * (
        _len(t_outputs) if _type(t_outputs) in (_list, _tuple) else 1)
    with NO_TORCH_FUNCTION():
        started = [_seed_numbers(seed) for seed in seeds]
        through = any(dict_get(log.made, _id(node)) is node for node in nodes)
        names = sorted({type_name(_type(node)) for node in nodes})
        if not inputs:
            leaves = leaves + [t for t in _retaining_targets(task) if _id(GET["grad_fn"](t)) in seen]
        before = [_grad_numbers(leaf) for leaf in leaves]
    return roots, nodes, leaves, before, names, started, through


def _note(log: _Log, roots: list, nodes: list, leaves: list, before: list, names: list, seeds: list,
          through: bool) -> None:
    log.calls += 1
    if log.calls >= LOG_CALLS:
        log.full = True
    size = _len(_flat(seeds))
    kept = seeds if log.numbers + size * (_len(roots) + _len(leaves) + 1) <= LOG_NUMBERS else None
    log.numbers += size if kept is not None else 0
    for table, items in ((log.roots, roots), (log.nodes, nodes)):
        for node in items:
            record = table.setdefault(_id(node), [node, 0, []])
            if record[0] is node:
                record[1] += 1
                if table is log.roots:
                    record[2] = record[2] + [kept] if record[2] is not None and kept is not None else None
    with NO_TORCH_FUNCTION():
        for leaf, earlier in zip(leaves, before):
            grad = GET["grad"](leaf) if GET["is_leaf"](leaf) or GET["retains_grad"](leaf) else quiet_grad(leaf)
            record = log.leaves.get(_id(leaf))
            known = record is not None and record[0] is leaf
            passes = record[1] + 1 if known else 1
            added = record[7] if known else []
            seeded = (record[8] + [kept] if record[8] is not None and kept is not None else None) if known \
                else ([kept] if kept is not None else None)
            now = _grad_numbers(leaf)
            if added is not None and now is not None and log.numbers + _len(now) <= LOG_NUMBERS:
                added = added + [[a - b for a, b in zip(now, earlier)] if earlier is not None else now]
                log.numbers += _len(now)
            else:
                added = None  # past the cap, or unreadable: "what each pass added" is not known
            if grad is None or _type(grad) not in TENSOR_TYPES:
                log.leaves[_id(leaf)] = [leaf, passes, None, 0, -1, None, names, added, seeded, through]
                continue
            values = _values(grad).get("values")
            log.leaves[_id(leaf)] = [leaf, passes, grad, DATA_PTR(grad), GET["_version"](grad), values, names,
                                     added, seeded, through]


def _retaining_targets(task: Task) -> list:
    """The task's targets that are non-leaf tensors retaining their grad, as the namespace holds them now."""
    found = []
    for steps in task.targets:
        try:
            value = dict_get(task.namespace, steps[0][1])
            for kind, arg in steps[1:]:
                value = _index(value, arg) if kind == "index" else _attribute(value, arg)
        except Exception:  # a target not there yet, or not readable: nothing to log for it
            continue
        if _type(value) in TENSOR_TYPES and not GET["is_leaf"](value) and GET["retains_grad"](value):
            found.append(value)
    return found


def _grad_numbers(leaf) -> list | None:
    """A leaf's .grad as one flat list of numbers (None: no .grad, or not one to read)."""
    grad = GET["grad"](leaf) if GET["is_leaf"](leaf) or GET["retains_grad"](leaf) else quiet_grad(leaf)
    if grad is None or _type(grad) not in TENSOR_TYPES or NUMEL(grad) > VALUE_CAP \
            or GET["layout"](grad) is not STRIDED:
        return None
    return _flat(TOLIST(DETACH(grad)))


def _seed_numbers(seed) -> list:
    """A pass's seed for one root as a flat list of numbers ([] when there is none to read)."""
    if not _issubclass(_type(seed), BASE) or _type(seed) not in TENSOR_TYPES or NUMEL(seed) > VALUE_CAP \
            or GET["layout"](seed) is not STRIDED:
        return []
    return [plain(v) for v in _flat(TOLIST(DETACH(seed)))]


def _flat(values) -> list:
    if _type(values) is _list:
        return [x for v in values for x in _flat(v)]
    return [values]
