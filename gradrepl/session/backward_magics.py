"""`%trace` (backward node by node) and `%at` (a past step), on top of a Session.

`%trace NAME` previews backward from a live tensor; anything else after
`%trace` is a statement, run as a step of its own with its backward recorded.
`%at N` rebuilds the table after step N from the session's timeline.
"""

from __future__ import annotations

import re

from gradrepl.errors import UsageError
from gradrepl.kernel.protocol import ErrorInfo, StepResult
from gradrepl.session.timeline import parse_step
from gradrepl.trace_views import at_text, step_traces_text, trace_text

NAMES = ("%trace", "%at")
# What a row name looks like (x, model[0].weight, d['k']): no call, no assignment.
_ROW_NAME = re.compile(r"[A-Za-z_][\w.]*(\[[^\]()=]*\][\w.]*)*")


async def run(session, name: str, arg: str, result: StepResult) -> None:
    """Fill `result` (the magic's step) in place."""
    if not arg:
        result.error = ErrorInfo("UsageError", f"{name} needs an argument: " + (
            "a tensor name (%trace loss) or a statement (%trace loss.backward())" if name == "%trace"
            else "a step number, e.g. %at 3"))
    elif name == "%at":
        _at(session, arg, result)
    elif arg in session.tensors or _ROW_NAME.fullmatch(arg):
        reply = await session.trace(arg)
        if reply.get("error"):
            result.error = ErrorInfo("TraceError", reply["error"])
        else:
            result.trace = {"traces": [reply["trace"]], "note": None, "preview": True}
            result.display = trace_text(reply["trace"])
    else:
        ran = await session.trace_statement(result.step, arg)
        for field in ("stdout", "stderr", "result", "error", "notes", "duration_ms", "tensors", "removed",
                      "kernel_event", "trace"):
            setattr(result, field, getattr(ran, field))
        if ran.trace is not None:
            result.display = step_traces_text(ran.trace)


def _at(session, arg: str, result: StepResult) -> None:
    try:
        past = session.timeline.state_at(parse_step(arg, result.step))
    except UsageError as exc:
        result.error = ErrorInfo("UsageError", str(exc))
        return
    result.display = at_text(past.step, past.source, past.rows, past.changed, past.removed, result.step - 1)

