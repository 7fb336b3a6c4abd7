"""`%trace` (backward node by node) and `%at` (a past step), for session/magics.py.

`%trace NAME` previews backward from a live tensor; anything else after
`%trace` is a statement, run as this step with its backward recorded.
`%at N` rebuilds the table after step N from the session's timeline.
"""

from __future__ import annotations

import re

from gradrepl.errors import UsageError
from gradrepl.protocol.messages import ErrorInfo, StepResult
from gradrepl.session.timeline import parse_step
from gradrepl.views.tables import fit
from gradrepl.views.trace import at_text, step_traces_text, trace_text
from gradrepl.views.trace_pictures import with_pictures

# What a row name looks like (x, model[0].weight, d['k']): no call, no assignment.
_ROW_NAME = re.compile(r"[A-Za-z_][\w.]*(\[[^\]()=]*\][\w.]*)*")
# What a statement's step reports, copied onto the %trace step.
_RAN = ("stdout", "stderr", "result", "error", "notes", "duration_ms", "tensors", "removed", "kernel_event", "trace")


async def trace(session, result: StepResult, arg: str) -> None:
    """Fill `result` (the %trace step) in place."""
    if is_row_name(session, arg):
        reply = await session.trace(arg)
        if reply.lost:
            result.error, result.kernel_event = ErrorInfo("KernelLost", reply.error), reply.error
        elif reply.error:
            result.error = ErrorInfo("TraceError", reply.error)
        else:
            result.trace = {"traces": [reply.data["trace"]], "note": None}  # the trace says it is a preview
            result.display = fit(with_pictures(trace_text(reply.data["trace"], row_width(session)),
                                               [reply.data["trace"]], session.tensors), session.width)
        return
    ran = await session.trace_statement(result.step, arg)
    for field in _RAN:
        setattr(result, field, getattr(ran, field))
    if ran.trace is not None:
        result.display = fit(with_pictures(step_traces_text(ran.trace, row_width(session)),
                                           ran.trace.get("traces") or [], session.tensors), session.width)


def row_width(session) -> int | None:
    """The width a table's rows are cut to: the console's where a wrapped row would read as two."""
    return session.width if session.one_line_rows else None


FRESH_KERNEL = "(a fresh kernel began before this step: a restart or a kill numbers steps from 1 again)"


def is_row_name(session, arg: str) -> bool:
    """`%trace loss` previews from a tensor; anything else after %trace is a statement to run."""
    return arg in session.tensors or bool(_ROW_NAME.fullmatch(arg))


def at(session, result: StepResult, arg: str) -> None:
    """Fill `result` (the %at input, which takes no number) with the table after the step it names."""
    try:
        past = session.timeline.state_at(parse_step(arg, session.step))
    except UsageError as exc:
        result.error = ErrorInfo("UsageError", str(exc))
        return
    result.display = at_text(past.step, past.source, past.rows, past.changed, past.removed, session.step,
                             session.width, session.one_line_rows)
    if past.fresh_kernel:
        result.display += "\n" + fit(FRESH_KERNEL, session.width)
