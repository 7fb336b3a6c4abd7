"""The kernel's loop: read a request, do it, reply. Runs in the kernel process.

A kernel is either forked from the warm zygote (zygote.py) or spawned as
``python -m gradrepl.kernel.worker``; both end up in :func:`serve`.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import asdict
import ctypes
import faulthandler
import gc
import io
import mmap
import os
import signal
import sys
import time
import timeit
import types
import warnings

import torch

from gradrepl.kernel.inspect.diagnose import AccumulationWatch, explain, explain_warning
from gradrepl.kernel.inspect.graph import graph_of, render_text
from gradrepl.kernel.inspect.snapshot import Inspector
from gradrepl.kernel.inspect.summary import summarize
from gradrepl.kernel.inspect import task_state
from gradrepl.kernel.inspect.trace import StepTraces, TraceError, preview
from gradrepl.kernel import helptext, protocol, sandbox
from gradrepl.kernel.interrupt_target import AimedWord
from gradrepl.kernel.sandbox import threads as thread_bound
from gradrepl.kernel.guard import Failed, Overtime, bounded, cap, safe_text, time_limit
from gradrepl.kernel.symbolic import ops as symbolic
from gradrepl.kernel.tracebacks import cell_name, chain, error_info, remember_source

RESULT_CAP = protocol.RESULT_CAP   # characters of an echoed repr
MEMORY_RESERVE = 16 << 20  # freed on MemoryError so the kernel can still report it
OP_SECONDS = 30.0     # a request other than a step (completion, inspect, check) that runs longer is given up on
KERNEL_THREADS = max(1, min(4, os.cpu_count() or 1))  # torch's intra-op pool, fixed for a predictable footprint
COMPLETION_LIMIT = 200
SIGNATURE_LIMIT = 40  # jedi's signatures cost ~1 ms each: only for the first candidates a menu shows
TIMEIT_RUNS = 7  # as IPython's %timeit
TIMEIT_FILE = "<timeit-src>"  # the name timeit compiles a statement under

_libc = ctypes.CDLL(None)
MEMORY_EXPLANATION = ("The kernel reached its memory limit (--memory-limit), so the allocation failed. "
                      "Your variables are kept: delete big ones (del name) or make tensors smaller.")


def out_of_memory(exc: BaseException) -> bool:
    """MemoryError, or the SystemError ("error return without exception set", "returned NULL without
    setting an exception") that C code in sympy, torch or the import machinery gives when an
    allocation fails on the limit and it forgets to set MemoryError."""
    return isinstance(exc, MemoryError) or (isinstance(exc, SystemError) and sandbox.address_space_reached())


def fresh_namespace() -> dict:
    """What the learner starts with: torch, nn and F, as in most torch code."""
    return {"__name__": "__main__", "__builtins__": __builtins__, "torch": torch, "nn": torch.nn,
            "F": torch.nn.functional}


class CappedStream(io.TextIOBase):
    """sys.stdout/sys.stderr for learner code: passes text to the fd until the per-step cap."""

    def __init__(self, fd: int):
        self._fd = fd
        self.written = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return "utf-8"

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        data = str(text).encode("utf-8", "replace")
        room = protocol.OUTPUT_CAP - self.written
        if room > 0:
            _write_all(self._fd, data[:room])
        self.written += min(len(data), max(room, 0))
        self.dropped += max(len(data) - max(room, 0), 0)
        return len(text)

    def new_step(self) -> None:
        self.written = self.dropped = 0


class NoInput(io.TextIOBase):
    """input() has no terminal to read from in a kernel: say so instead of hanging."""

    def readable(self) -> bool:
        return True

    def readline(self, size: int = -1) -> str:
        raise RuntimeError("input() is not available in gradrepl: assign the value in code instead")

    read = readline


def _reserve() -> mmap.mmap | None:
    """MEMORY_RESERVE bytes of address space, the budget the memory limit counts, never touched: it
    costs no memory and no time to start a kernel, and freeing it makes room under the limit."""
    try:
        return mmap.mmap(-1, MEMORY_RESERVE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    except (OSError, MemoryError):
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Kernel:
    """One learner namespace and the requests that act on it."""

    def __init__(self, nonce: str):
        self.nonce = nonce
        self.namespace = fresh_namespace()
        self.inspector = Inspector()
        self.executing = False
        self.running_step: int | None = None  # the step being run, for a SIGINT aimed at one step
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

    # -- requests -------------------------------------------------------
    def handle(self, message: dict) -> dict:
        op = message.get("op")
        handler = getattr(self, f"op_{op}", None)
        if op not in protocol.OPS or handler is None:
            return protocol.reply(message.get("id"), ok=False, error=f"unknown op {op!r}")
        if op != "execute":
            self.flags_dirty = True  # e.g. `inspect` evaluates code the journal did not see
        try:
            if op == "execute":
                return protocol.reply(message.get("id"), **handler(message))
            with time_limit(OP_SECONDS):  # learner objects reached by the op may hang
                return protocol.reply(message.get("id"), **handler(message))
        except Overtime:
            return protocol.reply(message.get("id"), ok=False, exhausted="time", error=(
                f"the kernel gave up on {op} after {OP_SECONDS:g} s: a value it had to read "
                "(perhaps an object of yours) took too long"))
        except (MemoryError, SystemError) as exc:
            self.release_reserve()  # first: even reading whether memory ran out needs some
            if not out_of_memory(exc):
                raise
            return protocol.reply(message.get("id"), ok=False, exhausted="memory", notes=[], error=error_info(
                MemoryError("the kernel ran out of memory while answering"), self.learner_files,
                MEMORY_EXPLANATION))
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
        if message.get("stop_after_error") and self.last_step_failed:
            return {"skipped": True}  # sent ahead of a step that failed: it must not run
        self.running_step = step
        self.stdout.new_step()
        self.stderr.new_step()
        started = time.perf_counter()
        filename = message.get("filename") or cell_name(step)
        outcome = {"result": None, "error": None, "notes": []}
        tracer, self.armed_trace = self.armed_trace, None
        try:
            with tracer.recording() if tracer else contextlib.nullcontext():
                outcome = self._run(message["source"], filename, int(message.get("first_line", 1)),
                                    bool(message.get("timeit")), bool(message.get("shadows", True)))
            if tracer:
                outcome["trace"] = tracer.result()
            outcome["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
            # bounded reads; an object that hangs or raises is skipped from then on, said once in the notes
            rows, removed, panel_notes = self.inspector.guarded_step(self.namespace, self.flags_dirty)
            outcome["notes"].extend(panel_notes)
        finally:
            # Whatever happened, the step's output ends, so the client never waits for it; the sentinels
            # go out just before the reply, so the client wakes up once for all three.
            outcome.setdefault("duration_ms", round((time.perf_counter() - started) * 1000, 3))
            self._end_output(step, outcome["notes"])
        self.flags_dirty = False
        self.running_step = None
        self.last_step_failed = bool(outcome["error"])
        if self.inspector.stopped:
            outcome["notes"].append(self.inspector.stopped)
        outcome["notes"].extend(self.watch.notes())  # after step(): tensors made in this step are named
        outcome.update(tensors=rows, removed=removed)
        return outcome

    def op_tensors(self, message: dict) -> dict:
        return {"tensors": self.inspector.table(self.namespace)}

    def op_graph(self, message: dict) -> dict:
        name = message.get("name", "")
        tensor = self.inspector.resolve(name)
        if tensor is None:
            return {"error": f"no live tensor named {name!r} (see %tensors for the names)"}
        graph = graph_of(tensor, self.inspector.names_by_id())
        graph["root"] = name
        return {"graph": graph, "text": render_text(graph)}

    def op_trace(self, message: dict) -> dict:
        name = message.get("name", "")
        tensor = self.inspector.resolve(name)
        if tensor is None:
            return {"error": f"no live tensor named {name!r} (see %tensors for the names)"}
        names = self.inspector.names_by_id()
        retained = [t for t in map(self.inspector.resolve, names.values()) if t is not None and t.retains_grad]
        try:
            return {"trace": preview(tensor, name, names, retained)}
        except TraceError as exc:
            return {"error": str(exc)}

    def op_trace_next(self, message: dict) -> dict:
        self.armed_trace = StepTraces(self.inspector.names_by_id(), self.namespace)
        return {}

    def op_inspect(self, message: dict) -> dict:
        try:
            value = eval(compile(message["expr"], "<inspect>", "eval"), self.namespace)
        except BaseException as exc:  # the learner's expression may raise anything
            error = exc  # a name of its own: `exc` is unbound once the except block ends
            message = safe_text(lambda: error, "the error message")  # str(exc) may raise, hang or be megabytes
            return {"value": {"kind": "error", "type": type(exc).__name__, "message": message,
                              "repr": f"{type(exc).__name__}: {message}"}}
        return {"value": describe(value)}

    def op_task_state(self, message: dict) -> dict:
        # Read with references captured before any learner code ran (inspect/task_state.py).
        return {"state": task_state.read(self.namespace, list(message.get("targets") or []),
                                         bool(message.get("start")), str(message.get("token") or ""),
                                         bool(message.get("everything")))}

    def op_complete(self, message: dict) -> dict:
        jedi = _jedi()
        code, cursor = message.get("code", ""), int(message.get("cursor", 0))
        if not 0 <= cursor <= len(code):
            return {"error": f"the cursor ({cursor}) is outside the code ({len(code)} characters)"}
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
            return {"error": error_info(exc, self.learner_files, explain(exc))}
        suffix = "??" if message.get("source") else "?"
        return {"display": helptext.page(expr + suffix, helptext.inspect_text(value, expr, bool(message.get("source"))))}

    def learner_help(self, *args) -> None:
        """help(obj) in learner code: a help page for the frontend's pager instead of a dump into stdout."""
        if not args:
            text = ("help(obj) shows obj's documentation; obj? shows its signature and docstring, "
                    "obj?? its source too. %help lists gradrepl's commands.")
            self.help_pages.append(helptext.page("help", text))
            return
        for value in args:
            title = value if isinstance(value, str) else ".".join(
                part for part in (getattr(value, "__module__", None), getattr(value, "__qualname__", None)) if part
            ) or type(value).__name__
            self.help_pages.append(helptext.page(f"help({title})", helptext.pydoc_text(value)))

    def op_check(self, message: dict) -> dict:
        return {"check": symbolic.check_tensor(self.namespace, message.get("name", ""), self.inspector.resolve)}

    def op_check_expr(self, message: dict) -> dict:
        return {"check": symbolic.check_expression(message.get("expr", ""), message.get("point", {}))}

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
    def _run(self, source: str, filename: str, first_line: int, timed: bool, shadows: bool) -> dict:
        """One step: its code compiled under `filename` from `first_line` on, so tracebacks name the
        learner's cell or script and its real line numbers. `timed` runs %timeit on it instead;
        `shadows` false records no formulas (nothing will ask %check about this step)."""
        self.learner_files.add(filename)
        remember_source(filename, source, first_line)
        self.help_pages = []
        outcome = {"result": None, "error": None, "notes": []}
        journal = None
        watch = self.watch = AccumulationWatch(self.inspector)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                body, last = _split_last_expression(source, filename, first_line)
                self.executing = True
                if timed:
                    outcome["display"] = _time_statement(source, self.namespace)
                else:
                    with symbolic.recording() if shadows else contextlib.nullcontext() as journal, \
                            watch.during_step():
                        exec(body, self.namespace)
                        if last is not None:
                            value = eval(last, self.namespace)
                            if value is not None:
                                self.namespace["_"] = value
                                outcome["result"] = _short_repr(value)
            except SystemExit as exc:
                outcome["error"] = error_info(exc, self.learner_files, "sys.exit() ends a script, not the tutor: "
                                              "the kernel keeps running and your variables are kept.")
            except BaseException as exc:  # learner code may raise anything, KeyboardInterrupt included
                if isinstance(exc, (MemoryError, SystemError)):
                    self.release_reserve()  # first: even reading whether memory ran out needs some
                if out_of_memory(exc):
                    explanation = MEMORY_EXPLANATION
                else:
                    explanation = _explanation(exc)
                outcome["error"] = error_info(exc, self.learner_files, explanation)
            finally:
                self.executing = False
                self.flags_dirty = self.flags_dirty or journal is None or journal.flipped_requires_grad
        outcome["notes"].extend(_warning_notes(caught))
        if self.help_pages:
            outcome["display"] = _merge_pages(self.help_pages)
        return outcome

    def _end_output(self, step: int, notes: list[str]) -> None:
        """Flush every layer of output, then mark the end of this step's output on both pipes."""
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        _libc.fflush(None)  # C++ code printing through stdio
        for name, stream in (("stdout", self.stdout), ("stderr", self.stderr)):
            if stream.dropped:
                notes.append(f"{name} truncated: {stream.dropped:,} bytes not shown "
                             f"(the limit is {protocol.OUTPUT_CAP // 1024} KiB per step)")
        sentinel = protocol.output_sentinel(self.nonce, step)
        for fd in (1, 2):
            try:
                _write_all(fd, sentinel)
            except OSError:
                pass


def describe(value) -> dict:
    """A JSON description of any value, for lesson keys and %inspect."""
    if isinstance(value, torch.Tensor):
        row = {
            "kind": "tensor", "repr": _short_repr(value), "shape": list(value.shape),
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
        return {"kind": "str", "repr": _short_repr(value), "value": value[:RESULT_CAP]}
    return {"kind": "other", "repr": _short_repr(value), "type": type(value).__name__}


def _split_last_expression(source: str, filename: str, first_line: int = 1):
    """Compile a step; a final expression is compiled apart so its value can be echoed.

    Compiled at line 1 and then moved to `first_line` (code objects hold their lines relative to
    their first): cheaper than renumbering every node of the tree."""
    try:
        tree = ast.parse(source, filename, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = _moved(compile(ast.Expression(tree.body.pop().value), filename, "eval"), first_line - 1)
        return _moved(compile(tree, filename, "exec"), first_line - 1), last
    except SyntaxError as exc:
        if exc.lineno:  # the script's line, not the step's
            exc.lineno += first_line - 1
            exc.end_lineno = exc.end_lineno + first_line - 1 if exc.end_lineno else None
        raise


def _moved(code: types.CodeType, lines: int) -> types.CodeType:
    """`code` and the code nested in it (functions, classes, comprehensions), `lines` lines further down."""
    if not lines:
        return code
    consts = tuple(_moved(const, lines) if isinstance(const, types.CodeType) else const for const in code.co_consts)
    return code.replace(co_firstlineno=code.co_firstlineno + lines, co_consts=consts)


def _short_repr(value) -> str:
    try:
        text = bounded(lambda: repr(value))
    except Failed as failed:  # a broken __repr__ must not break the step
        text = f"<{type(value).__name__} object: its repr could not be shown: {failed}>"
    if len(text) > RESULT_CAP:
        text = text[:RESULT_CAP] + f"... ({len(text) - RESULT_CAP:,} more characters)"
    return text


def _time_statement(source: str, namespace: dict) -> str:
    """%timeit as IPython does it: loops until a run takes 0.2 s, 7 runs, mean ± std. dev. per loop."""
    timer = timeit.Timer(source, globals=namespace)
    loops, _ = timer.autorange()
    per_loop = [total / loops for total in timer.repeat(TIMEIT_RUNS, loops)]
    mean = sum(per_loop) / len(per_loop)
    std = (sum((t - mean) ** 2 for t in per_loop) / len(per_loop)) ** 0.5
    return (f"{_format_time(mean)} ± {_format_time(std)} per loop (mean ± std. dev. of {TIMEIT_RUNS} runs, "
            f"{loops:,} loop{'s' if loops != 1 else ''} each)")


def _format_time(seconds: float) -> str:
    """Three significant digits in the largest unit that keeps the number at least 1 (IPython's way)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _merge_pages(pages: list[dict]) -> dict:
    """Several help(...) calls in one step become one page."""
    if len(pages) == 1:
        return pages[0]
    return helptext.page(", ".join(page["title"] for page in pages),
                         "\n\n".join(page["text"] for page in pages))


def _explanation(exc: BaseException) -> str | None:
    """Plain words for an error, or for the nearest error of its chain that has them (a ValueError
    raised from autograd's RuntimeError is explained by the RuntimeError); explaining reads the
    exception, which may misbehave too."""
    for candidate in [exc] + [earlier for earlier, _ in reversed(chain(exc))]:
        try:
            words = bounded(lambda: explain(candidate) or sandbox.explain(candidate))
        except Failed:
            return None
        if words:
            return words
    return None


def _warning_notes(caught) -> list[str]:
    notes = []
    for warning in caught:
        message = safe_text(lambda: warning.message, "the warning")
        explanation = explain_warning(message)
        text = f"{warning.category.__name__}: {message}"
        notes.append(f"{text}\n{explanation}" if explanation else text)
    return notes


def warm_up() -> None:
    """What every step needs, imported before the first kernel: torch (above) and the shadow recorder."""
    from gradrepl.kernel.symbolic import shadow  # noqa: F401


# What only some requests need: sympy for checks (about 0.2 s), jedi for completion, torch._dynamo
# (optimizers and checkpointing import it on first use, about 0.6 s). The zygote imports these one
# by one while idle, after its first kernel runs; a kernel forked before that imports them on first use.
WARM_LATER = ("gradrepl.kernel.symbolic.crosscheck", "jedi", "torch._dynamo", "torch.utils.checkpoint")


def _jedi():
    """jedi, with its cache in scratch (jedi may have been imported before HOME moved there)."""
    import jedi

    jedi.settings.cache_directory = os.path.join(os.environ["XDG_CACHE_HOME"], ".cache", "jedi")
    return jedi


def _home_in_scratch(scratch: str) -> None:
    """Caches (jedi's, torch's, matplotlib's) go to scratch: the sandbox refuses writes anywhere else."""
    for var in ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        os.environ[var] = scratch


def serve(cmd_fd: int, reply_fd: int, out_fd: int, err_fd: int, interrupt_fd: int, nonce: str,
          policy: dict) -> None:
    """Become a kernel: wire the fds, harden the process, then answer requests until EOF.
    `interrupt_fd` is the client's InterruptTarget page (or /dev/null: every SIGINT counts)."""
    target = AimedWord.attach(interrupt_fd)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    _close_all_but({0, 1, 2, cmd_fd, reply_fd})
    kernel = Kernel(nonce)
    sys.stdout, sys.stderr, sys.stdin = kernel.stdout, kernel.stderr, NoInput()
    faulthandler.enable(file=2, all_threads=False)

    def on_sigint(signum, frame):
        if kernel.executing and (target is None or target.aimed_at(kernel.running_step)):
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    os.chdir(policy["scratch_dir"])
    _home_in_scratch(policy["scratch_dir"])
    layers = sandbox.apply(sandbox.Policy(
        memory_limit=policy["memory_limit"], allow_network=policy["allow_network"],
        scratch_dir=policy["scratch_dir"], workspace=policy.get("workspace"),
        readable=tuple(policy.get("readable", ())), disk=policy.get("disk")))
    # Threads created from here on inherit the sandbox's seccomp and Landlock rules.
    torch.set_num_threads(KERNEL_THREADS)
    # Under a thread bound the intra-op pool starts now: libgomp ends the process when it cannot make its
    # threads, as later, when learner threads may hold every one the bound allows. Not where the memory
    # limit leaves no room for their stacks: there, as without a bound, the pool's first use fails.
    if layers["threads"]["active"] and KERNEL_THREADS > 1 and \
            thread_bound.room_for_stacks(KERNEL_THREADS - 1, spare=MEMORY_RESERVE):
        torch.ones(KERNEL_THREADS << 16).add_(1)
    commands = os.fdopen(cmd_fd, "rb", buffering=0)
    reader = io.BufferedReader(commands, 1 << 16)
    _write_all(reply_fd, protocol.encode({"v": protocol.PROTOCOL_VERSION, "type": "ready", "pid": os.getpid(),
                                          "sandbox": layers, "torch": torch.__version__}))
    while True:
        try:
            line = reader.readline()
        except KeyboardInterrupt:  # an interrupt that arrived between steps: nothing to stop
            continue
        if not line:
            break
        message: dict = {}
        try:
            message = protocol.decode(line)
            answer = kernel.handle(message)
        except KeyboardInterrupt:
            answer = protocol.reply(message.get("id"), ok=False, error="interrupted")
        except Exception as exc:  # a bad request must not kill the kernel
            answer = protocol.reply(message.get("id"), ok=False, error=cap(f"{type(exc).__name__}: {exc}"))
        try:
            _write_all(reply_fd, _bounded_reply(answer))
        except BrokenPipeError:
            break
        if message.get("op") == "shutdown":
            break
    os._exit(0)


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor the kernel was handed or inherited but does not need: learner code can
    reach each one it holds (through /proc/self/fd)."""
    try:
        held = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        held = range(os.sysconf("SC_OPEN_MAX"))
    for fd in held:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the listing's own descriptor, closed already


def _bounded_reply(answer: dict) -> bytes:
    """The reply as one line the client accepts: never past protocol.REPLY_CAP."""
    data = protocol.encode(answer)
    if len(data) <= protocol.REPLY_CAP:
        return data
    return protocol.encode(protocol.reply(answer.get("id"), ok=False, error=(
        f"the kernel's answer was {len(data) >> 20} MiB, more than the {protocol.REPLY_CAP >> 20} MiB "
        "a reply may hold (too many tensors at once?)")))


def main(argv: list[str] | None = None) -> None:
    """Spawn mode: ``python -m gradrepl.kernel.worker CMD REPLY OUT ERR INTERRUPT NONCE POLICY_JSON``."""
    import json

    args = sys.argv[1:] if argv is None else argv
    cmd_fd, reply_fd, out_fd, err_fd, interrupt_fd = (int(a) for a in args[:5])
    nonce, policy = args[5], json.loads(args[6])
    # No zygote: this kernel's scratch tmpfs is its own (files do not outlive it).
    policy["disk"] = sandbox.own_scratch(policy["scratch_dir"], policy["disk_limit"])
    warm_up()
    serve(cmd_fd, reply_fd, out_fd, err_fd, interrupt_fd, nonce, policy)


if __name__ == "__main__":
    main()
