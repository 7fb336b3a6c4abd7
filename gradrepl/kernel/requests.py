"""The requests a kernel answers: one learner namespace, and one method per op (protocol/messages.OPS).
worker.serve reads each request and writes the reply; a step's pieces are in step.py."""

from __future__ import annotations

import contextlib
import gc
import mmap
import os
import sys
import time
from dataclasses import asdict

import torch

from gradrepl import source_file
from gradrepl.kernel import helptext, sandbox, script_run, step_warnings
from gradrepl.kernel.guard import Overtime, safe_text, time_limit
from gradrepl.kernel.inspect import grad_origin, made_by, seal, writes
from gradrepl.kernel.inspect import task_state  # noqa: F401  (unused: seal.py checks learner code left it here)
from gradrepl.kernel.inspect.diagnose import AccumulationWatch, Scene
from gradrepl.kernel.inspect.transforms import TransformWatch
from gradrepl.kernel.inspect.graph import graph_of
from gradrepl.kernel.inspect.snapshot import Inspector
from gradrepl.kernel.inspect.series import series_of
from gradrepl.kernel.inspect.summary import summarize
from gradrepl.kernel.inspect.walk import Outputs
from gradrepl.kernel.inspect.trace import StepTraces, TraceError, preview
from gradrepl.kernel.step import (RESULT_CAP, TIMEIT_FILE, error_words,
                                  short_repr, split_last_expression, time_statement, warning_notes)
from gradrepl.kernel.streams import CappedStream, end_output
from gradrepl.kernel.check_memory import within_memory
from gradrepl.kernel.symbolic import checks as symbolic
from gradrepl.kernel.tracebacks import cell_name, error_info, remember_source
from gradrepl.protocol import messages as protocol
from gradrepl.protocol.interrupt_word import ANY_STEP

MEMORY_RESERVE = 16 << 20  # freed on MemoryError so the kernel can still report it
OUTPUTS_KEPT = 1000   # values in Out (and _N) at most, the oldest dropped first, as IPython's cache_size
COMPLETION_LIMIT = 200
_MISSING = object()  # a name the namespace does not hold (None is a value)
SIGNATURE_LIMIT = 40  # jedi's signatures cost ~1 ms each: only for the first candidates a menu shows


def fresh_namespace() -> dict:
    """What the learner starts with: torch, nn and F, as in most torch code."""
    return script_run.main_namespace({"__builtins__": __builtins__, "torch": torch, "nn": torch.nn,
                                      "F": torch.nn.functional, "Out": Outputs()})


def _reserve() -> mmap.mmap | None:
    """MEMORY_RESERVE bytes of address space, the budget the memory limit counts, never touched: it
    costs no memory and no time to start a kernel, and freeing it makes room under the limit."""
    try:
        return mmap.mmap(-1, MEMORY_RESERVE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (OSError, MemoryError):
        return None


def _task_state_op(look):
    """The op_task_state method, reading through ``look``'s reader (held in this closure) and saying what
    learner code rebound among the reader's names (the frontend refuses such an attempt)."""
    def op_task_state(self, message: dict) -> dict:
        read, changed = look()
        state = read(self.namespace, list(message.get("targets") or []), bool(message.get("start")),
                     str(message.get("token") or ""), bool(message.get("everything")))
        if changed:
            state["tampered"] = changed[:8]
        return {"state": state}
    return op_task_state


class Kernel:
    """One learner namespace and the requests that act on it."""

    def __init__(self, nonce: str):
        self.nonce = nonce
        self.namespace = fresh_namespace()
        self._last_output = None  # what _keep_output put in `_` last
        self.inspector = Inspector()
        self.watch = AccumulationWatch(self.inspector)  # remembers what each backward reached, step to step
        self.transforms = TransformWatch()
        self.transforms.install()
        self.executing = False
        self.running_step: int | None = None  # the step being run, for a SIGINT aimed at one step
        self.pending_interrupt: int | None = None  # a SIGINT that came between steps: the step it aims at
        self.last_step_failed = False  # for a step sent ahead with stop_after_error
        self.stdout = CappedStream(1)
        self.stderr = CappedStream(2)
        self.reserve: mmap.mmap | None = _reserve()
        self.learner_files = {TIMEIT_FILE}  # filenames of code the learner wrote (cells, the run script)
        self.help_pages: list[dict] = []  # help(obj) calls during the current step
        self.namespace["help"] = self.learner_help
        # Whether a requires_grad flag may have changed outside what the last step's journal saw.
        self.flags_dirty = True
        self.armed_trace: StepTraces | None = None  # set by op_trace_next for the next execute
        made_by.install()

    # -- requests -------------------------------------------------------
    def handle(self, message: dict) -> dict:
        op = message.get("op")
        handler = getattr(self, f"op_{op}", None)
        if op not in protocol.OPS or handler is None:
            return protocol.reply(message.get("id"), ok=False, error=_error("unknown_op", op=str(op)))
        if op != "execute":
            self.flags_dirty = True  # e.g. `inspect` evaluates code the journal did not see
        try:
            if op == "execute":
                return protocol.reply(message.get("id"), **handler(message))
            with time_limit(protocol.OP_SECONDS):  # learner objects reached by the op may hang
                return protocol.reply(message.get("id"), **handler(message))
        except Overtime:
            return protocol.reply(message.get("id"), ok=False, exhausted="time",
                                  error=_error("gave_up", op=op, seconds=protocol.OP_SECONDS))
        except (MemoryError, SystemError, OSError) as exc:
            self.release_reserve()  # first: even reading whether memory ran out needs some
            if not sandbox.out_of_memory(exc):
                raise
            return protocol.reply(message.get("id"), ok=False, exhausted="memory", notes=[], error=error_info(
                MemoryError("the kernel ran out of memory while answering"), self.learner_files,
                ("memory_limit", None)))
        except BaseException as exc:
            if op == "execute" or isinstance(exc, Exception):
                raise
            # Learner code the request reached raised KeyboardInterrupt or SystemExit (no Ctrl-C: SIGINT
            # stops only a step): a reply saying so, not a kernel that ends.
            return protocol.reply(message.get("id"), ok=False,
                                  error=_error("raised", op=op, error=type(exc).__name__))
        finally:
            self.restore_reserve()

    def release_reserve(self) -> None:
        if self.reserve is not None:
            self.reserve.close()
        self.reserve = None
        gc.collect()

    def restore_reserve(self) -> None:
        if self.reserve is None:
            self.reserve = _reserve()  # still full: None, and tried again after the next request

    def op_ping(self, message: dict) -> dict:
        return {"pid": os.getpid()}

    def op_execute(self, message: dict) -> dict:
        step = int(message.get("step", 0))
        if message.get("stop_after_error") and self.last_step_failed or script_run.ended():
            return {"skipped": True}  # sent ahead of a step that failed, or after the script's sys.exit()
        self.running_step = step
        self.stdout.new_step()
        self.stderr.new_step()
        started = time.perf_counter()
        filename = message.get("filename") or cell_name(step)
        outcome = {"result": None, "error": None, "notes": []}
        tracer, self.armed_trace = self.armed_trace, None
        transforms_before, grads_before = self.transforms.calls, self.inspector.grads()
        grad_origin.begin(self.inspector.refs(requiring_grad=not self.flags_dirty))  # only they have a .grad to watch
        first_line = int(message.get("first_line", 1))
        made_by.begin_step(step, message["source"], first_line)
        try:
            with tracer.recording() if tracer else contextlib.nullcontext():
                outcome = self._run(step, message["source"], filename, first_line,
                                    bool(message.get("timeit")), bool(message.get("shadows", True)))
            if tracer:
                outcome["trace"] = tracer.result()
            outcome["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
            # bounded reads; an object that hangs or raises is skipped from then on, said once in the notes
            rows, removed, panel_notes = self.inspector.guarded_step(self.namespace, self.flags_dirty)
            outcome["notes"].extend(panel_notes)
            outcome["grads_set"] = _grads_set(rows, self.inspector.resolve, grads_before)
        finally:
            # Whatever happened, the step's output ends, so the client never waits for it; the sentinels
            # go out just before the reply, so the client wakes up once for all three.
            outcome.setdefault("duration_ms", round((time.perf_counter() - started) * 1000, 3))
            end_output(self.nonce, step, (self.stdout, self.stderr), outcome["notes"])
        self.flags_dirty = False
        self.running_step = None
        self.last_step_failed = bool(outcome["error"])
        if self.inspector.stopped:
            outcome["notes"].append(self.inspector.stopped)
        # after step(): tensors made in this step are named; the words are the frontend's (views/diagnosis.py)
        diagnoses = outcome.pop("diagnoses", []) + self.watch.diagnoses()
        if self.transforms.calls != transforms_before and not any(
                row.get("grad") != grads_before.get(row["name"]) for row in rows):
            diagnoses.append({"code": "transform_no_grad"})
        if diagnoses:
            outcome["diagnoses"] = diagnoses
        outcome.update(tensors=rows, removed=removed)
        return outcome

    def op_tensors(self, message: dict) -> dict:
        return {"tensors": self.inspector.table(self.namespace)}

    def op_graph(self, message: dict) -> dict:
        name = message.get("name", "")
        tensor = self.inspector.resolve(name)
        if tensor is None:
            return {"error": _error("no_tensor", name=name)}
        graph = graph_of(tensor, self.inspector.names_by_id())
        graph["root"] = name
        return {"graph": graph}  # data: the frontend draws it (views/graph.py)

    def op_trace(self, message: dict) -> dict:
        name = message.get("name", "")
        tensor = self.inspector.resolve(name)
        if tensor is None:
            return {"error": _error("no_tensor", name=name)}
        names = self.inspector.names_by_id()
        retained = [t for t in map(self.inspector.resolve, names.values()) if t is not None and t.retains_grad]
        try:
            return {"trace": preview(tensor, name, names, retained)}
        except TraceError as exc:
            return {"error": _error(exc.code, **exc.names)}

    def op_trace_next(self, message: dict) -> dict:
        self.armed_trace = StepTraces(self.inspector.names_by_id(), self.namespace)
        return {}

    def op_series(self, message: dict) -> dict:
        name = str(message.get("name", ""))
        # Looked up, never evaluated: a row name (model[0].weight), else a plain variable (losses).
        value = self.inspector.resolve(name)
        if value is None and name.isidentifier():
            value = self.namespace.get(name, _MISSING)
        if value is None or value is _MISSING:
            return {"error": _error("no_variable", name=name)}
        series = series_of(value)
        if "code" not in series:
            return {"series": series}
        return {"error": _error(series["code"], name=name, **series["names"])}

    def op_inspect(self, message: dict) -> dict:
        try:
            value = eval(compile(message["expr"], "<inspect>", "eval"), self.namespace)
            return {"value": describe(value)}  # describing reads the value's own properties too
        except BaseException as exc:  # the learner's expression (or object) may raise anything
            error = exc  # a name of its own: `exc` is unbound once the except block ends
            message, unshown = safe_text(lambda: error)  # str(exc) may raise, hang or be megabytes
            value = {"kind": "error", "type": type(exc).__name__, "message": message,
                     "repr": f"{type(exc).__name__}: {message}"}
            return {"value": {**value, "unshown": unshown} if unshown else value}

    def op_read_script(self, message: dict) -> dict:
        """The text of the file a session's %run names, read here so the sandbox's limits apply (the
        frontend may run as another user than the learner: `gradrepl serve`); relative to the kernel's
        current folder, as learner code would open it."""
        path = str(message.get("path", ""))
        try:
            return {"source": source_file.read_text(path)}
        except source_file.Unreadable as exc:
            refused = sandbox.refusal(exc.oserror) if exc.oserror is not None else None
            if refused and refused[0] == "read_refused":  # words that say what may be read, and how to allow more
                return {"error": _error("file_refused", path=path, **refused[1])}
            return {"error": _error(exc.code, **exc.names)}

    # Read with references captured before any learner code ran (inspect/task_state.py), by the reader
    # captured at import, never this module's `task_state` looked up now: learner code walked frames to this
    # module's globals and replaced it (inspect/seal.py).
    op_task_state = _task_state_op(seal.sealed(sys.modules[__name__], "task_state"))

    def op_complete(self, message: dict) -> dict:
        jedi = _jedi()
        code, cursor = message.get("code", ""), int(message.get("cursor", 0))
        if not 0 <= cursor <= len(code):
            return {"error": _error("cursor_outside", cursor=cursor, length=len(code))}
        before = code[:cursor]
        line = before.count("\n") + 1
        column = len(before) - (before.rfind("\n") + 1)
        try:
            found = jedi.Interpreter(code, [self.namespace]).complete(line, column)
        except Exception as exc:  # jedi gives up on some half-typed code: the frontend logs why
            return {"error": f"jedi could not complete: {type(exc).__name__}: {exc}"}
        completions, failures = [], []
        for index, candidate in enumerate(found[:COMPLETION_LIMIT]):
            signature = None
            if index < SIGNATURE_LIMIT and candidate.type in ("function", "class"):
                try:
                    signatures = candidate.get_signatures()
                    signature = signatures[0].to_string() if signatures else None
                except Exception as exc:  # one bad signature must not hide the candidates
                    failures.append(f"{candidate.name}: {type(exc).__name__}: {exc}")
            typed = len(candidate.name) - len(candidate.complete or "")
            completions.append(asdict(protocol.Completion(candidate.name, cursor - typed, candidate.type, signature)))
        return {"completions": completions, "signature_errors": failures}

    def op_help(self, message: dict) -> dict:
        expr = message.get("expr", "")
        try:
            value = eval(compile(expr, "<help>", "eval"), self.namespace)
        except BaseException as exc:  # the learner's expression may raise anything
            return {"error": error_info(exc, self.learner_files, error_words(exc))}
        suffix = "??" if message.get("source") else "?"
        return {"display": {"kind": "help", "title": expr + suffix,
                            "fields": helptext.inspect_fields(value, expr, bool(message.get("source")))}}

    def learner_help(self, *args) -> None:
        """help(obj) in learner code: a help page for the frontend's pager instead of a dump into stdout."""
        if not args:
            self.help_pages.append({"kind": "help", "title": "help", "code": "help_usage"})  # views/help_page.py
            return
        for value in args:
            title = helptext.help_title(value, self.namespace)
            self.help_pages.append(helptext.page(f"help({title})", helptext.pydoc_text(value)))

    def op_check(self, message: dict) -> dict:
        return {"check": symbolic.check_tensor(self.namespace, message.get("name", ""), self.inspector.resolve)}

    def op_check_expr(self, message: dict) -> dict:
        return within_memory(  # at a point, or a constant: torch's crosscheck
            lambda: {"check": symbolic.check_expression(message.get("expr", ""), message.get("point", {}))}, True)

    def op_equivalent(self, message: dict) -> dict:
        return {"result": symbolic.equivalent(message.get("answer", ""), message.get("key", ""))}

    def op_reset(self, message: dict) -> dict:
        removed = [row["name"] for row in self.inspector.table()]  # names only: no re-summary
        self.namespace = fresh_namespace()
        self.namespace["help"] = self.learner_help
        self.inspector.reset()
        return {"removed": removed}

    def op_shutdown(self, message: dict) -> dict:
        return {}

    # -- one step -------------------------------------------------------
    def _keep_output(self, step: int, value) -> None:
        """As IPython's displayhook: Out[step] and _step hold the value, _, __ and ___ the last three,
        unless the learner gave `_` a value of their own (then the three are left alone)."""
        namespace = self.namespace
        outputs = namespace.get("Out")
        if type(outputs) is Outputs:
            outputs[step] = value
            while len(outputs) > OUTPUTS_KEPT:
                oldest = next(iter(outputs))
                namespace.pop(f"_{oldest}", None)
                del outputs[oldest]
        namespace[f"_{step}"] = value
        if "_" not in namespace or namespace["_"] is self._last_output:
            namespace["___"], namespace["__"] = namespace.get("__"), namespace.get("_")
            namespace["_"] = self._last_output = value

    def _run(self, step: int, source: str, filename: str, first_line: int, timed: bool, shadows: bool) -> dict:
        """One step: its code compiled under `filename` from `first_line` on, so tracebacks name the
        learner's cell or script and its real line numbers. `timed` runs %timeit on it instead;
        `shadows` false records no formulas (nothing will ask %check about this step)."""
        self.learner_files.add(filename)
        remember_source(filename, source, first_line)
        self.help_pages = []
        outcome = {"result": None, "error": None, "notes": []}
        journal = None
        watch = self.watch
        with step_warnings.during_step() as caught:
            try:
                body, last = split_last_expression(source, filename, first_line)
                self.executing = True
                pending, self.pending_interrupt = self.pending_interrupt, None
                if pending is not None and pending in (ANY_STEP, step):
                    raise KeyboardInterrupt  # Ctrl-C reached the kernel just before this step began
                if timed:
                    outcome["timeit"] = time_statement(source, self.namespace)  # views/remarks.py says it
                else:
                    with symbolic.recording() if shadows else contextlib.nullcontext() as journal, \
                            watch.during_step():
                        exec(body, self.namespace)
                        if last is not None:
                            value = eval(last, self.namespace)
                            if value is not None:
                                self._keep_output(step, value)
                                outcome["result"], unshown = short_repr(value)
                                if unshown:
                                    outcome["result"], outcome["result_unshown"] = None, unshown
            except SystemExit as exc:
                if (status := script_run.exit_status(exc)) is not None:  # a run ends as `python FILE` would
                    outcome["exit_status"] = status
                else:
                    outcome["error"] = error_info(exc, self.learner_files, ("sys_exit_in_session", None))
            except BaseException as exc:  # learner code may raise anything, KeyboardInterrupt included
                if isinstance(exc, (MemoryError, SystemError)):
                    self.release_reserve()  # first: even reading whether memory ran out needs some
                diagnosis = ("memory_limit", None) if sandbox.out_of_memory(exc) else \
                    error_words(exc, Scene.of(exc, source, self.learner_files, self.namespace, self.inspector))
                outcome["error"] = error_info(exc, self.learner_files, diagnosis)
            finally:
                self.executing = False
                self.flags_dirty = self.flags_dirty or journal is None or journal.flipped_requires_grad
        notes, diagnoses = warning_notes(caught)
        outcome["diagnoses"] = [{**found, "note": found["note"] + len(outcome["notes"])} for found in diagnoses]
        outcome["notes"].extend(notes)
        if self.help_pages:
            outcome["display"] = _merge_pages(self.help_pages)
        return outcome


def _error(code: str, **names) -> dict:
    """A request's error as data: the code and the names its words need (views/remarks.REQUEST_ERRORS)."""
    return {"code": code, "names": names}


def describe(value) -> dict:
    """A JSON description of any value, for lesson keys and %inspect; a repr that cannot be had is ""
    beside its reason ("unshown", worded by views/remarks.py)."""
    described = _described(value)
    if type(described.get("repr")) is tuple:
        described["repr"], unshown = described["repr"]
        if unshown:
            described["unshown"] = unshown
    return described


def _described(value) -> dict:
    if isinstance(value, torch.Tensor):
        row = {
            "kind": "tensor", "repr": short_repr(value), "shape": list(value.shape),
            "dtype": str(value.dtype), "device": str(value.device), "requires_grad": value.requires_grad,
            "is_leaf": value.is_leaf, "grad_fn": type(value.grad_fn).__name__ if value.grad_fn else None,
            "value": summarize(value),
        }
        if value.is_leaf:
            row["grad"] = summarize(value.grad) if value.grad is not None else None
        return row
    if value is None:
        return {"kind": "none", "repr": "None"}
    if isinstance(value, bool):
        return {"kind": "bool", "repr": repr(value), "value": value}
    if isinstance(value, (int, float)):
        return {"kind": "number", "repr": repr(value), "value": value}
    if isinstance(value, str):
        return {"kind": "str", "repr": short_repr(value), "value": value[:RESULT_CAP]}
    return {"kind": "other", "repr": short_repr(value), "type": type(value).__name__}


def _merge_pages(pages: list[dict]) -> dict:
    """Several help(...) calls in one step become one page (views/help_page.py joins their texts)."""
    if len(pages) == 1:
        return pages[0]
    return {"kind": "help", "title": ", ".join(page["title"] for page in pages), "pages": pages}


def _jedi():
    """jedi, with its cache in scratch (jedi may have been imported before HOME moved there)."""
    import jedi

    jedi.settings.cache_directory = os.path.join(os.environ["XDG_CACHE_HOME"], ".cache", "jedi")
    return jedi


def _grads_set(rows: list[dict], resolve, grads_before) -> list[str]:
    """The changed rows whose .grad the step set, deleted or changed other than by a backward pass
    (`x.grad = None`, `x.grad.mul_(2)`, grad_origin.py): what their .grad holds now is no addition onto what
    it held before the step (every changed row, when the writes went unfollowed). Only the changed rows are
    read (`resolve`: a row's name -> its tensor), not every live one: a step costs what it changed."""
    ids = writes.grads_set()
    if ids is None:
        return [row["name"] for row in rows]
    names: dict[int, list[str]] = {}  # id(tensor) -> the changed rows naming it
    for row in rows:
        tensor = resolve(row["name"])
        if tensor is not None:
            names.setdefault(id(tensor), []).append(row["name"])
    regraded = {row["name"] for row in rows if row.get("grad") != grads_before.get(row["name"])}
    # only a row whose .grad the panel shows changed can be named for its origin: only those are read again
    origins = grad_origin.end({i for i, named in names.items() if not regraded.isdisjoint(named)})
    set_by_write = {name for i in ids for name in names.get(i, ())}
    # moved other than by a pass that reached it; or changed while no pass moved it
    unmade = {name for i, named in names.items() if i in origins.outside or i not in origins.by_pass
              for name in named if name in regraded}
    return sorted(set_by_write | unmade)
