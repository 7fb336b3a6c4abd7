"""The TUI driven like a learner drives it: keys in, a real kernel behind, the panel and messages checked."""

from __future__ import annotations


from tests.support.tui import (Recorder, cell_text, gate_kernel_start, lit_names, run_steps, screen_text, shown_actions,
                               type_and_run, until)

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.tensors.graph_tree import GraphTree
from gradrepl.tui.messages import (
    DetailsLoaded,
    KernelReady,
    StepFinished,
    StepQueued,
)
from gradrepl.tui.status_bar import StatusBar
from gradrepl.tui.tensors.tensor_table import TensorTable


def cell(app: GradReplApp, name: str, column: str) -> str:
    return cell_text(app.query_one(TensorTable), name, column)


async def test_first_gradient_fills_the_panel(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder,
                        "x = torch.tensor(2.0, requires_grad=True)",
                        "y = x ** 2 + 3 * x",
                        "y.backward()")
        table = app.query_one(TensorTable)
        assert table.names == ["x", "y"]
        assert cell(app, "x", "grad") == "7"
        assert cell(app, "y", "grad_fn") == "graph freed"  # its AddBackward0 is in the details
        assert cell(app, "y", "is_leaf") == "no"
        # The backward step filled x.grad and freed what y's graph saved: both are lit.
        assert lit_names(table) == ["x", "y"]
        assert app.session.tensors["y"]["saved_bytes"] == 0
        assert recorder.of(KernelReady) and "idle" in app.query_one(StatusBar).render_text().plain


async def test_the_status_line_drawn_says_each_change_of_a_step(history):
    """The status line is drawn from its fields once a frame: the screen says the state and the last
    step's time as they are after each step, not as they were when the line was last made."""
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        for source in ("a = torch.ones(2)", "b = a * 2"):
            await run_steps(pilot, recorder, source)
            await pilot.pause()
            status_line = screen_text(app).splitlines()[-2]
            took = recorder.of(StepFinished)[-1].result.duration_ms
            assert "● idle" in status_line and f"last step {took:.1f} ms" in status_line, status_line


async def test_errors_show_their_explanation_and_keep_the_session(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "a = torch.ones(2)", "a.sum().backward()", "a.shape")
        failed = recorder.of(StepFinished)[1].result
        assert failed.error is not None and failed.error.type == "RuntimeError"
        log_text = "\n".join(line.text for line in app.query_one(ConsoleLog).lines)
        assert "RuntimeError" in log_text
        if failed.error.explanation:
            assert failed.error.explanation.split()[0] in log_text
        assert recorder.of(StepFinished)[2].result.result == "torch.Size([2])"


async def test_input_typed_while_warming_up_runs_when_ready(history, monkeypatch):
    # Hold the real kernel's start until the typing is done: a warm machine imports torch
    # faster than Pilot types forty keys.
    gate = gate_kernel_start(monkeypatch)
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        assert app.kernel_state == "starting"  # the first frame is up before torch is
        await type_and_run(pilot, "w = torch.zeros(3, requires_grad=True)")
        await pilot.pause()  # let the app handle the submitted input
        assert [m.source for m in recorder.of(StepQueued)] == ["w = torch.zeros(3, requires_grad=True)"]
        gate.set()
        await until(pilot, lambda: recorder.of(StepFinished), "the queued step")
        assert app.query_one(TensorTable).names == ["w"]


async def test_multiline_block_auto_indents_and_runs_on_blank_line(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await until(pilot, lambda: app.kernel_state == "idle", "the kernel")
        await pilot.press(*"s = 0")
        await pilot.press("enter")
        await until(pilot, lambda: recorder.of(StepFinished), "s = 0")
        await pilot.press(*"for i in range(3):")
        await pilot.press("enter")
        code_input = app.query_one(CodeInput)
        assert code_input.text == "for i in range(3):\n    "
        await pilot.press(*"s = s + i")
        await pilot.press("enter")
        assert not recorder.of(StepFinished)[1:]  # the block is still open
        await pilot.press("enter")
        await until(pilot, lambda: len(recorder.of(StepFinished)) == 2, "the loop")
        await run_steps(pilot, recorder, "s")
        assert recorder.of(StepFinished)[-1].result.result == "3"


async def test_select_row_shows_graph_and_why_grad_is_none(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(140, 45), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x")
        await pilot.press("f2")  # focus the panel
        await pilot.press("down", "enter")  # the second row is y
        await until(pilot, lambda: any(m.graph for m in recorder.of(DetailsLoaded)), "y's graph")
        tree = app.query_one(GraphTree)
        top = tree.root.children[0]
        assert str(top.label).startswith("AddBackward0")
        labels = []
        stack = [tree.root]
        while stack:
            node = stack.pop()
            labels.append(str(node.label))
            stack.extend(node.children)
        assert any("AccumulateGrad" in label and "x" in label for label in labels)
        why = app.query_one("#details-why").render()
        assert "not a leaf" in str(why) and "retain_grad" in str(why)


async def test_tab_completes_from_the_kernel(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "weights = torch.ones(2)")
        await pilot.press(*"weig")
        await pilot.press("tab")
        code_input = app.query_one(CodeInput)
        await until(pilot, lambda: code_input.text != "weig", "a completion")
        assert code_input.text == "weights"


async def test_history_recalls_with_up_and_survives_a_restart(history, tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "h = 1", "h + 1")
        await pilot.press("up")
        assert app.query_one(CodeInput).text == "h + 1"
        await pilot.press("up")
        assert app.query_one(CodeInput).text == "h = 1"
        await pilot.press("down", "down")
        assert app.query_one(CodeInput).text == ""
    assert History(tmp_path / "history.jsonl").entries == ["h = 1", "h + 1"]


async def test_ctrl_c_interrupts_while_busy_and_copies_when_idle(history, monkeypatch):
    # A Python loop stops at once; on a loaded machine its reply (traceback, panel) may still take longer
    # than the 2 s after which a step that ignores Ctrl-C is killed: that kill is tested on its own.
    monkeypatch.setattr("gradrepl.session.session.INTERRUPT_GRACE", 120.0)
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await until(pilot, lambda: app.kernel_state == "idle", "the kernel")
        assert "interrupt" not in shown_actions(app) and "kill" in shown_actions(app)
        await type_and_run(pilot, "import time\nwhile True:\ntime.sleep(0.01)\n")
        await until(pilot, lambda: app.kernel_state == "busy", "the loop to start")
        await pilot.pause(0.2)
        assert {"interrupt", "kill"} <= shown_actions(app)
        await pilot.press("ctrl+c")
        await until(pilot, lambda: recorder.of(StepFinished), "the interrupt")
        assert recorder.of(StepFinished)[0].result.error.type == "KeyboardInterrupt"
        await until(pilot, lambda: app.kernel_state == "idle", "idle again")
        code_input = app.query_one(CodeInput)
        code_input.load_text("grad of x")
        code_input.select_all()
        await pilot.press("ctrl+c")
        assert app.clipboard == "grad of x"


