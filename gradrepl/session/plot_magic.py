"""`%plot NAME`, for session/magics.py: a number's history from the timeline, else the numbers a list
or tensor holds, asked of the kernel by name (op `series`)."""

from __future__ import annotations

from gradrepl.protocol.messages import ErrorInfo, StepResult
from gradrepl.views.plot import history_plot_text, series_plot_text
from gradrepl.views.tables import fit

NOTHING = ("%plot draws a number's history across steps (a scalar tensor such as loss) or the numbers a list "
           "or tensor holds (losses)")


async def plot(session, result: StepResult, arg: str) -> None:
    """Fill `result` (the %plot input, which takes no number) with the picture, or say why there is none."""
    points = session.timeline.scalar_history(arg)
    if points:
        result.display = fit(history_plot_text(arg, points, session.width), session.width)
        return
    reply = await session.series(arg)
    if reply.lost:
        result.error, result.kernel_event = ErrorInfo("KernelLost", reply.error), reply.error
    elif reply.error:
        result.error = ErrorInfo("PlotError", f"{reply.error}; {NOTHING}")
    else:
        result.display = fit(series_plot_text(arg, reply.data["series"], session.width), session.width)
