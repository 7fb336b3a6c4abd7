"""The TUI's trace view and timeline, driven by keys over a real kernel."""

from __future__ import annotations

import contextlib

import pytest

from tests.support.tui import Recorder, cell_text, lit_names, screen_text, submit_steps, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.tensors.tensor_table import TensorTable
from gradrepl.tui.tensors.past_panel import PastPanel, target_step
from gradrepl.tui.tensors.trace_view import TraceView


def body(app) -> str:
    """The trace view's words: the tree, then the current node and the leaves docked above it."""
    return app.query_one("#trace-body").render().plain + "\n" + app.query_one("#trace-docked").render().plain + "\n"


async def test_trace_view_steps_through_backward_and_fills_the_leaf_grad(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(150, 45), message_hook=recorder) as pilot:
        await submit_steps(pilot, recorder, "x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x", "%trace y")
        view = app.query_one(TraceView)
        await until(pilot, lambda: view.display and view.has_focus, "the trace view")
        assert "node 0 of 4" in body(app) and "x.grad  None" in body(app)
        assert "\nleaves  (a preview: no .grad is changed, the graph is kept)\n" in body(app)
        await pilot.press("right")
        await pilot.pause()
        assert "▶ 1. AddBackward0" in body(app)
        assert "1. AddBackward0  y = x ** 2 + 3 * x  (step 2, line 1)" in body(app)
        assert "grad_y = 1\n" in body(app)
        assert "d y/d (x ** 2) = 1, so (x ** 2) receives grad_y = 1" in body(app)
        assert app.query_one(TensorTable).traced == "y"  # the panel lights the tensor the node made
        await pilot.press("right", "right", "right")
        await pilot.pause()
        assert "▶ 4. AccumulateGrad → x" in body(app)
        assert "x.grad  None (would be 7)" in body(app)  # a preview: the live .grad is what it held before
        assert "x.grad would get += 4 (from x ** 2) + 3 (from x * 3) = 7" in body(app)
        assert "→ 7" not in body(app) and "x.grad +=" not in body(app)
        await pilot.press("left")
        await pilot.pause()
        assert "x.grad  None\n" in body(app) and "✓ 1. AddBackward0" in body(app)
        await pilot.press("space")  # play to the end
        await until(pilot, lambda: view.position == 4, "playing to the last node", timeout=10)
        await pilot.press("escape")
        await pilot.pause()
        assert not view.display


async def test_timeline_shows_past_steps_marked_and_typing_returns(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(150, 45), message_hook=recorder) as pilot:
        await submit_steps(pilot, recorder, "x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x",
                  "y.backward()")
        first = app.session.step - 2
        await pilot.press("f3")
        await pilot.pause()
        past = app.query_one(PastPanel)  # composed on the first F3
        assert past.display and not app.query_one(TensorTable).display
        assert past.step == first + 1
        assert app.query_one("#inspector").border_title.startswith(f"PAST · after step {first + 1} of {first + 2}")
        assert lit_names(past) == ["y"]  # made at that step
        assert cell_text(past, "x", "grad") == "None"  # backward had not run yet
        assert cell_text(past, "y", "saved_bytes") == "12 B"
        await pilot.press("f3")
        await pilot.pause()
        assert past.step == first and past.names == ["x"]
        await pilot.press("f4", "f4")
        await pilot.pause()
        assert past.step == first + 2 and cell_text(past, "x", "grad") == "7"
        await pilot.press("f3")
        await pilot.pause()
        assert past.step == first + 1
        await pilot.press("a")  # typing returns to the present
        await pilot.pause()
        assert not past.display and app.query_one(TensorTable).display and past.step is None
        assert app.query_one("#inspector").border_title == "tensors"


def test_target_step_walks_the_kept_steps():
    steps = [4, 5, 6]
    assert target_step(steps, None, -1) == 5
    assert target_step(steps, 5, -1) == 4 and target_step(steps, 4, -1) == 4
    assert target_step(steps, 5, 1) == 6 and target_step(steps, 6, 1) is None
    assert target_step([], None, -1) is None and target_step(steps, None, 1) is None


def test_details_and_graph_tree_show_what_the_graph_holds():
    from gradrepl.tui.tensors.details import values_text
    from gradrepl.tui.tensors.graph_tree import node_label

    row = {"name": "loss", "value": {"shape": [], "values": 1.0}, "grad": None, "grad_fn": "MeanBackward0",
           "version": 0, "saved_bytes": 819_200}
    assert "graph holds 800.0 KiB" in values_text(row).plain
    assert "graph holds" not in values_text({**row, "saved_bytes": 0}).plain
    assert node_label({"grad_fn": "MulBackward0", "saved_bytes": 4000}).plain == "MulBackward0  holds 3.9 KiB"


def test_leaf_lines_add_into_what_the_grad_held():
    from gradrepl.tui.tensors.trace_view import leaf_line

    node = {"leaf": "w", "order": 2, "grad_outputs": [{"shape": [2], "values": [1.0, 2.0]}]}
    held = {"name": "w", "grad": {"shape": [2], "values": [10.0, 20.0]}}
    assert leaf_line(node, 1, held).plain == "  w.grad  [10, 20]"
    assert leaf_line(node, 2, held).plain == "  w.grad  [10, 20] → [11, 22]"
    assert leaf_line(node, 2, None).plain == "  w.grad  += [1, 2]"  # a statement's trace: no earlier row
    big = {"name": "w", "grad": {"shape": [100], "min": 0.0, "max": 1.0, "mean": 0.5, "norm": 5.0}}
    assert leaf_line(node, 2, big).plain.startswith("  w.grad  += ")
    # a preview wrote nothing: the .grad it held stays, and the line says what backward would make it
    assert leaf_line(node, 1, held, preview=True).plain == "  w.grad  [10, 20]"
    assert leaf_line(node, 2, held, preview=True).plain == "  w.grad  [10, 20] (would be [11, 22])"
    assert leaf_line(node, 2, big, preview=True).plain.startswith("  w.grad  would get += ")


async def test_a_long_trace_follows_the_current_node_and_keeps_the_leaves_in_view(tmp_path):
    from tests.support.tui import screen_text

    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(150, 45), message_hook=recorder) as pilot:
        # 18 operations in a chain: the tree is longer than the view is high.
        await submit_steps(pilot, recorder, "w = torch.tensor(2.0, requires_grad=True)",
                  "y = w\nfor _ in range(9):\n    y = y * 1.5 + 1", "%trace y")
        view = app.query_one(TraceView)
        await until(pilot, lambda: view.display and view.has_focus, "the trace view")
        await pilot.press("end")
        await pilot.pause()
        screen = screen_text(app)
        last = len(view.ran)
        assert f"▶ {last}. AccumulateGrad → w" in screen  # the current node is on screen ...
        assert "w.grad  None (would be" in screen  # ... and so is the leaf it would fill
        await pilot.press("home", "right")
        await pilot.pause()
        screen = screen_text(app)
        assert "▶ 1. AddBackward0" in screen and "w.grad  None" in screen


def docked(app) -> str:
    """The current node's story as one line of words (the terminal wraps it at any width)."""
    return " ".join(app.query_one("#trace-docked").render().plain.split())


THREE_USES = ["x = torch.tensor([1.0, 2.0], requires_grad=True)", "w = torch.tensor([0.5, -1.0], requires_grad=True)",
              "a = x * w", "b = a + 1", "c = a.sin()", "d = a.exp()", "loss = (b + c + d).sum() + (w ** 2).sum()",
              "%trace loss"]


@contextlib.asynccontextmanager
async def three_uses_traced(tmp_path, size):
    """The app at `size` with THREE_USES run, its trace view open on the first node: (app, pilot, view)."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await submit_steps(pilot, recorder, *THREE_USES)
        view = app.query_one(TraceView)
        await until(pilot, lambda: view.display and view.has_focus, "the trace view")
        yield app, pilot, view


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_trace_view_tells_where_gradients_meet_and_lights_the_tensor(tmp_path, size):
    async with three_uses_traced(tmp_path, size) as (app, pilot, view):
        while (view.current or {}).get("name") != "MulBackward0":
            await pilot.press("right")
        await pilot.pause()
        screen = screen_text(app)
        assert "MulBackward0  a = x * w  (step 3, line 1)" in screen, screen
        said = docked(app)  # the story, docked above the tree, in view without scrolling
        assert "a receives 3 gradients: [1.649, 0.1353] (from d) + [1, 1] (from b) + [0.8776, -0.4161] (from c) " \
               "= [3.526, 0.7192]" in said, said
        assert "d a/d x = w, so x receives grad_a * w = [1.763, -0.7192]" in said, said
        story = app.query_one("#trace-docked")
        assert story.region.y + 2 <= app.query_one(TraceView).region.bottom  # its first lines are on screen
        assert any(line.split("│")[-2].startswith("▶ a ") for line in screen.splitlines()
                   if line.count("│") >= 2), screen  # a's row in the panel is lit
        await pilot.press("right", "right")
        await pilot.pause()
        assert "w.grad would get += [1, -2] (from w ** 2) + [3.526, 1.438] (from a) = [4.526, -0.5616]" \
            in docked(app)  # %trace loss is a preview: no .grad was written
        assert app.query_one(TensorTable).traced == "w"
        await pilot.press("escape")
        await pilot.pause()
        assert app.query_one(TensorTable).traced is None


def lit_echoes(app) -> list[str]:
    """The console's lines on screen drawn lit (the background of the echo the trace view points at)."""
    from gradrepl.tui.console.console_log import LIT_ECHO, ConsoleLog

    log = app.query_one(ConsoleLog)
    lines = []
    for y in range(log.scrollable_content_region.height):
        strip = log.render_line(y)
        if any(segment.style and segment.style.bgcolor == LIT_ECHO.bgcolor for segment in strip):
            lines.append(strip.text.rstrip())
    return lines


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_console_lights_the_echo_of_the_step_that_made_the_current_node(tmp_path, size):
    from gradrepl.tui.console.console_log import ConsoleLog

    async with three_uses_traced(tmp_path, size) as (app, pilot, view):
        log = app.query_one(ConsoleLog)
        assert lit_echoes(app) == [] and log.lit_step is None  # before the first node: nothing lit
        seen = {}
        while view.position < len(view.ran):
            await pilot.press("right")
            await pilot.pause()
            node = view.current
            if node["name"] in ("SinBackward0", "MulBackward0", "AccumulateGrad"):
                seen[node.get("leaf") or node["name"]] = (log.lit_step, lit_echoes(app), app.query_one(TensorTable).traced)
        # c = a.sin() ran as In [5], a = x * w as In [3]: each node lights its own step's echo, scrolled into
        # view (at 80x24 In [3] has scrolled out of the console by then), and its tensor's row in the panel
        step, lines, row = seen["SinBackward0"]
        assert step == 5 and row == "c"
        assert lines and lines[0].startswith("In [5]: c = a.sin()") and "◀ made node" in lines[0], lines
        step, lines, row = seen["MulBackward0"]
        assert step == 3 and row == "a"
        assert len(lines) == 1 and lines[0].startswith("In [3]: a = x * w"), lines
        assert "MulBackward0" in lines[0]
        step, lines, row = seen["x"]  # a leaf's AccumulateGrad: the step that made the leaf
        assert step == 1 and row == "x" and lines[0].startswith("In [1]: x = torch.tensor([1.0, 2.0]"), lines
        await pilot.press("escape")
        await pilot.pause()
        assert log.lit_step is None and lit_echoes(app) == []
        assert app.query_one(TensorTable).traced is None
