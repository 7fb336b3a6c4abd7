"""The pictures in the TUI over a real kernel, at 80x24 and 120x40: %plot and %graph drawn to the console's
width (never re-wrapped), the details' sparkline and boxes, %trace's bars and heat strips."""

from __future__ import annotations

import pytest
from tests.support.tui import Recorder, screen_text, submit_steps, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.messages import DetailsLoaded, StepFinished
from gradrepl.tui.tensors.trace_view import TraceView
from gradrepl.views.plot import PLOT_HEIGHT

TRAINING = ("torch.manual_seed(0); w = torch.randn(2, 3, requires_grad=True); x = torch.randn(3)",
            *["loss = (w @ x).pow(2).sum(); w.grad = None; loss.backward()\nwith torch.no_grad():\n    w -= 0.1 * w.grad\n"] * 4)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_plot_and_graph_are_drawn_to_the_consoles_width(tmp_path, size):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await submit_steps(pilot, recorder, *TRAINING, "%plot loss")
        width = app.query_one(ConsoleLog).scrollable_content_region.width
        plot = recorder.of(StepFinished)[-1].result.display
        assert plot.splitlines()[0].startswith("loss by step (steps 2 to 5, last"), plot
        assert all(len(line) <= width for line in plot.splitlines()), (width, plot)
        def axis_rows() -> list[str]:
            return [line for line in screen_text(app).splitlines() if "┤" in line]

        # The console scrolls to its end a frame after the step's reply: wait for it, as an eye would.
        await until(pilot, lambda: len(axis_rows()) == PLOT_HEIGHT, "the plot's rows on screen")
        screen = screen_text(app)
        axis = axis_rows()
        assert len(axis) == PLOT_HEIGHT and "█" in axis[0], screen  # every row of columns, the tallest first
        assert "loss by step" in screen, screen
        await submit_steps(pilot, recorder, "%graph loss")
        graph = recorder.of(StepFinished)[-1].result.display
        assert all(len(line) <= width for line in graph.splitlines()), (width, graph)
        assert "│ PowBackward0" in graph and "▼" in graph and "leaf w" in graph, graph
        assert graph.index("PowBackward0") < graph.index("AccumulateGrad"), graph  # the leaf at the bottom


async def test_details_show_the_losss_history_as_a_sparkline_and_its_graph_as_boxes(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await submit_steps(pilot, recorder, *TRAINING)
        await app.show_details("loss")
        await until(pilot, lambda: any(m.graph for m in recorder.of(DetailsLoaded)), "loss's details")
        await pilot.pause()
        loaded = recorder.of(DetailsLoaded)[-1]
        values = [value for _, value in loaded.history]
        assert len(values) == 4 and values == sorted(values, reverse=True)
        shown = app.query_one("#details-values").render().plain
        assert "history  █" in shown and "(%plot loss)" in shown, shown
        picture = app.query_one("#details-graph-picture")
        assert picture.display and "┌" in picture.render().plain and not app.query_one("#details-graph").display


async def test_trace_shows_a_bar_at_each_node_that_ran_and_the_weights_heat_strips(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await submit_steps(pilot, recorder, TRAINING[0], "loss = (w @ x).pow(2).sum()", "%trace loss")
        view = app.query_one(TraceView)
        await until(pilot, lambda: view.display and view.has_focus, "the trace view")
        body = app.query_one("#trace-body")
        assert "█" not in body.render().plain  # nothing ran yet: no bars
        await pilot.press("right")
        await pilot.pause()
        first = next(line for line in body.render().plain.splitlines() if "▶ 1." in line)
        assert "█" in first, first  # the root receives the largest gradient: a full bar
        await pilot.press("end")
        await pilot.pause()
        heat = app.query_one("#trace-heat")
        assert heat.display and "w  value ▕" in heat.render().plain and "grad ▕" in heat.render().plain
        await pilot.press("escape")  # on a leaf the console shows the step that made it; closed, its end again
        await pilot.pause()
        console = [line for line in screen_text(app).splitlines() if "▕" in line]
        assert console and "grad ▕" in console[0], console  # at 80x24 the console's %trace shows them too
