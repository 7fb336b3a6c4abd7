"""The pictures as the learner sees them, cell for cell, at 80x24 and 120x40, with fixed content (no kernel
timing in the frame): the details' sparkline and boxes, %plot in the console, %trace's bars and heat strips.

The app's own handlers render the views' words, fed as the messages a kernel worker posts."""

from __future__ import annotations

import pytest

from gradrepl.protocol.messages import StepResult
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.messages import DetailsLoaded, StepFinished, StepStarted
from gradrepl.views.plot import history_plot_text
from gradrepl.views.trace_pictures import with_pictures
from gradrepl.views.tables import fit
from gradrepl.views.trace import trace_text
from tests.tui.test_snapshots import GRAPH, STEPS, fixed_app, play_steps
from tests.views.test_pictures import TRACE

SIZES = [(80, 24), (120, 40)]
HISTORY = [(2, 10.0), (6, 6.5), (7, 3.0), (8, 1.25), (9, 0.5)]
W = {"name": "w", "aliases": [], "shape": [2, 2], "dtype": "torch.float32", "device": "cpu", "requires_grad": True,
     "is_leaf": True, "grad_fn": None, "retains_grad": False, "version": 0, "changed": True, "saved_bytes": 0,
     "grad": None, "value": {"shape": [2, 2], "values": [[1.0, -1.0], [0.5, 0.0]], "norm": 1.5}}


@pytest.mark.parametrize("size", SIZES)
def test_details_show_a_sparkline_and_the_graph_as_boxes(snap_compare, size):
    async def open_details(pilot):
        await play_steps(pilot)
        app = pilot.app
        await app.show_details("y")
        app.post_message(DetailsLoaded("y", STEPS[1].tensors[0], GRAPH, None, [], None, HISTORY))
        await pilot.pause()
        details = app.query_one("#details")
        # 80x24's pane has 5 rows: scrolled to the boxes; 120x40's shows the sparkline above them
        shown = "#details-graph-picture" if size == (80, 24) else "#details-values"
        # scrolled again once its content is laid out: on a loaded machine the first scroll can run before the
        # boxes below took their height, and the frame came out one line short
        for _ in range(2):
            details.scroll_to_widget(app.query_one(shown), animate=False, top=True)
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()

    assert snap_compare(fixed_app(), terminal_size=size, run_before=open_details)


async def show_magic(pilot, source: str, words) -> None:
    """After the fixed steps, the magic `source` as the console shows it: `words(width)` drawn to its width."""
    await play_steps(pilot)
    width = pilot.app.query_one(ConsoleLog).scrollable_content_region.width
    step = StepResult(6, source, display=fit(words(width), width))
    pilot.app.post_message(StepStarted(step.source))
    pilot.app.post_message(StepFinished(step))
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
def test_plot_in_the_console(snap_compare, size):
    async def plot(pilot):
        await show_magic(pilot, "%plot y", lambda width: history_plot_text("y", HISTORY, width))

    assert snap_compare(fixed_app(), terminal_size=size, run_before=plot)


@pytest.mark.parametrize("size", SIZES)
def test_trace_bars_and_heat_strips(snap_compare, size):
    async def trace(pilot):
        await show_magic(pilot, "%trace loss", lambda width: with_pictures(trace_text(TRACE), [TRACE], {"w": W}))
        app = pilot.app
        await app.show_trace({"traces": [TRACE], "note": None}, {"w": W})
        await pilot.pause()
        await pilot.press("right", "right", "right")
        await pilot.pause()

    assert snap_compare(fixed_app(), terminal_size=size, run_before=trace)
