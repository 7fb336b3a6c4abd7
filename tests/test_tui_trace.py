"""The TUI's trace view and timeline, driven by keys over a real kernel."""

from __future__ import annotations

from tui_support import Recorder, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.messages import StepFinished
from gradrepl.tui.tensors.tensor_table import TensorTable
from gradrepl.tui.tensors.timeline import PastPanel, target_step
from gradrepl.tui.tensors.trace_view import TraceView


async def run(pilot, recorder, *sources):
    for source in sources:
        done = len(recorder.of(StepFinished))
        pilot.app.submit(source)
        await until(pilot, lambda: len(recorder.of(StepFinished)) > done, f"step {source!r}")


def body(app) -> str:
    return app.query_one("#trace-body").render().plain


async def test_trace_view_steps_through_backward_and_fills_the_leaf_grad(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(150, 45), message_hook=recorder) as pilot:
        await run(pilot, recorder, "x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x", "%trace y")
        view = app.query_one(TraceView)
        await until(pilot, lambda: view.display and view.has_focus, "the trace view")
        assert "node 0 of 4" in body(app) and "x.grad  None" in body(app)
        await pilot.press("right")
        await pilot.pause()
        assert "▶ 1. AddBackward0" in body(app)
        assert "arriving (grad_outputs): 1" in body(app)
        await pilot.press("right", "right", "right")
        await pilot.pause()
        assert "▶ 4. AccumulateGrad → x" in body(app)
        assert "x.grad  None → 7" in body(app)  # a preview: the live .grad is what it held before
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
        await run(pilot, recorder, "x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x",
                  "y.backward()")
        first = app.session.step - 2
        past = app.query_one(PastPanel)
        await pilot.press("f3")
        await pilot.pause()
        assert past.display and not app.query_one(TensorTable).display
        assert past.step == first + 1
        assert app.query_one("#inspector").border_title.startswith(f"PAST · after step {first + 1} of {first + 2}")
        assert past.get_cell("y", "name").plain == "● y"  # made at that step
        assert past.get_cell("x", "grad").plain == "None"  # backward had not run yet
        assert past.get_cell("y", "saved_bytes").plain == "12 B"
        await pilot.press("f3")
        await pilot.pause()
        assert past.step == first and past.row_count == 1
        await pilot.press("f4", "f4")
        await pilot.pause()
        assert past.step == first + 2 and past.get_cell("x", "grad").plain == "7"
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
    assert "graph holds 800.0 KB" in values_text(row).plain
    assert "graph holds" not in values_text({**row, "saved_bytes": 0}).plain
    assert node_label({"op": "MulBackward0", "saved_bytes": 4000}).plain == "MulBackward0  holds 3.9 KB"


def test_leaf_lines_add_into_what_the_grad_held():
    from gradrepl.tui.tensors.trace_view import leaf_line

    node = {"leaf": "w", "order": 2, "grad_outputs": [{"shape": [2], "values": [1.0, 2.0]}]}
    held = {"name": "w", "grad": {"shape": [2], "values": [10.0, 20.0]}}
    assert leaf_line(node, 1, held).plain == "  w.grad  [10, 20]"
    assert leaf_line(node, 2, held).plain == "  w.grad  [10, 20] → [11, 22]"
    assert leaf_line(node, 2, None).plain == "  w.grad  += [1, 2]"  # a statement's trace: no earlier row
    big = {"name": "w", "grad": {"shape": [100], "min": 0.0, "max": 1.0, "mean": 0.5, "norm": 5.0}}
    assert leaf_line(node, 2, big).plain.startswith("  w.grad  += ")
