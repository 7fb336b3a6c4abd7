"""`%trace` (backward node by node) and `%at` (a past step), for session/magics.py.

`%trace NAME` previews backward from a live tensor; anything else after
`%trace` is a statement, run as this step with its backward recorded.
`%at N` rebuilds the table after step N from the session's timeline.
"""

from __future__ import annotations

import re

from gradrepl.errors import UsageError
from gradrepl.kernel.protocol import ErrorInfo, StepResult
from gradrepl.session.timeline import parse_step
from gradrepl.textviews import fit
from gradrepl.trace_views import at_text, step_traces_text, trace_text

# What a row name looks like (x, model[0].weight, d['k']): no call, no assignment.
_ROW_NAME = re.compile(r"[A-Za-z_][\w.]*(\[[^\]()=]*\][\w.]*)*")
# What a statement's step reports, copied onto the %trace step.
_RAN = ("stdout", "stderr", "result", "error", "notes", "duration_ms", "tensors", "removed", "kernel_event", "trace")


async def trace(session, result: StepResult, arg: str) -> None:
    """Fill `result` (the %trace step) in place."""
    if arg in session.tensors or _ROW_NAME.fullmatch(arg):
        reply = await session.trace(arg)
        if reply.lost:
            result.error, result.kernel_event = ErrorInfo("KernelLost", reply.error), reply.error
        elif reply.error:
            result.error = ErrorInfo("TraceError", reply.error)
        else:
            result.trace = {"traces": [reply.data["trace"]], "note": None, "preview": True}
            result.display = fit(trace_text(reply.data["trace"]), session.width)
        return
    ran = await session.trace_statement(result.step, arg)
    for field in _RAN:
        setattr(result, field, getattr(ran, field))
    if ran.trace is not None:
        result.display = fit(step_traces_text(ran.trace), session.width)


def at(session, result: StepResult, arg: str) -> None:
    """Fill `result` (the %at step) with the table after the step it names."""
    try:
        past = session.timeline.state_at(parse_step(arg, result.step))
    except UsageError as exc:
        result.error = ErrorInfo("UsageError", str(exc))
        return
    result.display = at_text(past.step, past.source, past.rows, past.changed, past.removed, result.step - 1,
                             session.width)
