"""The only wire format between a frontend and a kernel.

JSON lines on a dedicated pipe pair. Every request is ``{"v", "id", "op", ...}``
and every reply ``{"v", "id", "type": "reply", "ok", ...}``; the kernel also
sends unsolicited ``{"type": "ready"}`` once it can take work. The learner's
stdout/stderr travel on their own pipes and end each step with a sentinel line
so the client knows all output of the step has arrived.

This module imports nothing heavy: both sides use it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

PROTOCOL_VERSION = 1
# Bytes of learner output kept per step and stream: the kernel stops writing there, the client stops reading.
OUTPUT_CAP = 1 << 20
REPLY_CAP = 16 << 20   # bytes of one reply line; anything longer means the kernel is broken
TEXT_CAP = 64 << 10    # bytes of one error message, traceback or warning the kernel sends
# The status a kernel ends with when it ran out of memory where no reply could say so (a limit of a
# few MiB: reading the next request, or starting, failed); the frontend words it as out of memory.
OUT_OF_MEMORY_EXIT = 86
# Seconds a request other than a step (completion, inspect, a task's check) may run in the kernel before it
# gives up on it (its SIGALRM); the frontend's own deadline (client/kernel_client.REQUEST_DEADLINE) is later.
OP_SECONDS = 30.0
RESULT_CAP = 20_000    # characters of an echoed repr (and of a str an inspect reply holds)
HELP_CAP = 400_000     # characters of a help page: help(torch.Tensor) is about 300 KB

# Requests a kernel understands.
OPS = (
    "execute",   # {source, step, filename?, first_line?, timeit?, shadows? (false: no %check formulas),
                 #  stop_after_error? (true: skip it if the step before failed)}
                 #                            -> {step payload}, or {skipped: true}
    "complete",  # {code, cursor}             -> {completions: [Completion fields]} or {error}
    "help",      # {expr, source: bool}       -> {display: {"kind": "help", "title", "text"}} or {error}
    "graph",     # {name}                     -> {graph: {...}, text: str}
    "tensors",   # {}                         -> {tensors: [row, ...]} full table
    "trace",     # {name}                     -> {trace: {...}} backward previewed node by node
    "trace_next",# {}                         -> {} the next execute's backward calls are traced
    "series",    # {name}                     -> {series: {length, values, every}} numbers to plot, or {error}
    "inspect",   # {expr}                     -> {value: {...}} description of a value
    "read_script",# {path}                    -> {source: text} or {error: {code, names}} the file %run names,
                 #                               read by the kernel under its sandbox (source_file.read_text)
    "task_state",# {targets: [[text, [[kind, arg], ...]], ...], start: bool, token?, everything?}
                 #                            -> {state: {entries, order, token, started, names?}} a task's
                 #                               state as data, read by kernel/inspect/task_state.py
    "check",     # {name}                     -> {check: {...}} symbolic live check
    "check_expr",# {expr, point}              -> {check: {...}} expression mode
    "equivalent",# {answer, key}              -> {result: {...}} a `derive` answer vs its key
    "reset",     # {}                         -> {} empty namespace, same process
    "ping",      # {}                         -> {pid}
    "shutdown",  # {}                         -> {} then exit
)


def encode(message: dict[str, Any]) -> bytes:
    """One message as one line of UTF-8 JSON."""
    return (json.dumps(message, separators=(",", ":"), default=str) + "\n").encode()


def decode(line: bytes | str) -> dict[str, Any]:
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("protocol message is not an object")
    if message.get("v") != PROTOCOL_VERSION:
        raise ValueError(f"protocol version {message.get('v')!r}, expected {PROTOCOL_VERSION}")
    return message


def request(op: str, msg_id: int, **fields: Any) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "id": msg_id, "op": op, **fields}


def reply(msg_id: int | None, ok: bool = True, **fields: Any) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "id": msg_id, "type": "reply", "ok": ok, **fields}


def output_sentinel(nonce: str, step: int) -> bytes:
    """Written on the stdout and stderr pipes after a step's output."""
    return f"\x1egradrepl:{nonce}:{step}\x1e\n".encode()


@dataclass
class Frame:
    """One traceback frame a learner may see; gradrepl's own frames are never among them.

    `filename` is what to show: a REPL step reads ``Cell In[3]`` (no quotes), a
    `gradrepl run` step the script's path; `origin` is "learner" or "library" (torch and others).
    """

    filename: str
    lineno: int
    name: str
    line: str
    origin: str
    # Where on `line` (0-based, as stripped) the failing expression is, when Python knows and
    # it is on this one line: what a caret goes under.
    col: int | None = None
    end_col: int | None = None


@dataclass
class ErrorInfo:
    type: str
    message: str
    explanation: str | None = None  # the frontend's words for `diagnosis`, or the kernel's (sandbox, memory)
    traceback: str = ""  # the learner's and libraries' frames, as text
    frames: list[dict[str, Any]] = field(default_factory=list)  # Frame fields, outermost first
    # SyntaxError only: where to draw the caret in `text` (1-based columns, as Python gives them).
    offset: int | None = None
    end_offset: int | None = None
    text: str | None = None
    # The exceptions that led to this one, oldest first: {"type", "message", "frames", "link"}, where
    # link is Python's sentence between that one and the next ("The above exception was the direct cause...").
    causes: list[dict[str, Any]] = field(default_factory=list)
    # What autograd's error was, as a code (kernel/inspect/diagnose.py); views/diagnosis.py words it.
    diagnosis: str | None = None
    diagnosis_names: dict[str, str | list[int]] | None = None  # the learner's names (and shapes) a cause's words need


@dataclass
class Completion:
    """One completion candidate from the kernel (jedi over the live namespace)."""

    text: str  # what replaces code[start:cursor]
    start: int  # offset in the code where the replaced word begins
    kind: str  # jedi's type: "function", "instance", "module", "keyword", "class", "param", ...
    signature: str | None = None  # e.g. "zeros(*size, out=None, dtype=None, ...)"


@dataclass
class StepResult:
    """What one step did, as every frontend sees it (also one `run --json` line)."""

    step: int
    source: str
    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    error: ErrorInfo | None = None
    notes: list[str] = field(default_factory=list)
    duration_ms: float = 0.0
    tensors: list[dict[str, Any]] = field(default_factory=list)  # rows changed in this step
    removed: list[str] = field(default_factory=list)
    # rows whose .grad the step set by hand (x.grad = None): no addition onto what it held before
    grads_set: list[str] = field(default_factory=list)
    # Set when the kernel had to be replaced: the words said to the learner.
    kernel_event: str | None = None
    # Shown instead of a result: text from a %magic (e.g. %graph), or a help page
    # {"kind": "help", "title": str, "text": str} from `obj?`, `obj??` or help(obj).
    display: str | dict[str, str] | None = None
    # `%trace STATEMENT`: the backward calls the step made, node by node (kernel/inspect/trace.py).
    trace: dict[str, Any] | None = None
    # `run`: the script called sys.exit(): the status `python FILE` would have ended with.
    exit_status: int | None = None

    def to_json(self) -> dict[str, Any]:
        # Shallow: rows are already plain JSON values, and deep-copying them (asdict) cost more
        # than the rest of a `run --json` step.
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["error"] = asdict(self.error) if self.error is not None else None
        data["type"] = "step"
        return data

    @property
    def ok(self) -> bool:
        return self.error is None and self.kernel_event is None

    @classmethod
    def from_payload(cls, step: int, source: str, payload: dict[str, Any]) -> "StepResult":
        error = payload.get("error")
        if isinstance(error, str):  # a request-level failure rather than the step's own error
            error = {"type": "KernelError", "message": error}
        return cls(
            step=step,
            source=source,
            result=payload.get("result"),
            error=ErrorInfo(**error) if error else None,
            notes=list(payload.get("notes", [])),
            duration_ms=float(payload.get("duration_ms", 0.0)),
            tensors=list(payload.get("tensors", [])),
            removed=list(payload.get("removed", [])),
            grads_set=list(payload.get("grads_set", [])),
            display=payload.get("display"),
            trace=payload.get("trace"),
            exit_status=payload.get("exit_status"),
        )
