"""The console's keys as an IPython user's fingers expect them, pressed through Pilot."""

from __future__ import annotations

from tests.support.tui import Recorder, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.confirm import Confirm
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.console.history_search import HistorySearch
from gradrepl.tui.messages import StepFinished
from gradrepl.tui.tensors.tensor_table import TensorTable
from tests.support.tui import run_steps, shown_actions, type_and_run


def offline_app(history: History) -> GradReplApp:
    """The TUI without a kernel: for keys that never reach one."""
    return GradReplApp(history=history, start_kernel=False)


async def test_ctrl_k_deletes_to_end_of_line_even_while_a_step_runs(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "kept = torch.ones(1)")
        await type_and_run(pilot, "import time; time.sleep(60)")
        await until(pilot, lambda: app.kernel_state == "busy", "the sleep")
        await pilot.press(*"print(kept) # note")
        await pilot.press(*["left"] * len(" # note"), "ctrl+k")
        assert app.query_one(CodeInput).text == "print(kept)"
        await pilot.pause(0.3)
        assert app.kernel_state == "busy" and app.session.tensors  # the kernel and its variables live on
        await pilot.press("ctrl+c")
        await until(pilot, lambda: len(recorder.of(StepFinished)) == 2, "the interrupt")
        assert recorder.of(StepFinished)[1].result.error.type == "KeyboardInterrupt"
        assert app.query_one(TensorTable).names == ["kept"]


async def test_kill_has_its_own_key_and_asks_before_losing_variables(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(140, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "kept = torch.ones(1)")
        assert "kill" in shown_actions(app)
        await pilot.press("f8")
        await until(pilot, lambda: isinstance(app.screen, Confirm), "the question")
        assert "kept" in str(app.screen.query_one("#confirm-question").render())
        await pilot.press("n")
        await until(pilot, lambda: not isinstance(app.screen, Confirm), "the question to close")
        assert app.query_one(TensorTable).names == ["kept"]
        await type_and_run(pilot, "import time; time.sleep(60)")
        await until(pilot, lambda: app.kernel_state == "busy", "the sleep")
        await pilot.press("f8")
        await until(pilot, lambda: isinstance(app.screen, Confirm), "the question")
        await pilot.press("y")
        await until(pilot, lambda: len(recorder.of(StepFinished)) == 2, "the kill")
        assert recorder.of(StepFinished)[1].result.kernel_event
        assert app.query_one(TensorTable).names == []
        assert app.query_one(CodeInput).has_focus
        await run_steps(pilot, recorder, "1 + 1")
        assert recorder.of(StepFinished)[-1].result.result == "2"


async def test_escape_never_sends_typing_somewhere_unseen(history):
    app = offline_app(history)
    async with app.run_test(size=(140, 40)) as pilot:
        code_input = app.query_one(CodeInput)
        await pilot.press(*"ab", "escape", *"cd")
        assert code_input.has_focus and code_input.text == "abcd"
        await pilot.press("f2")
        assert app.query_one(TensorTable).has_focus
        await pilot.press("escape", *"ef")
        assert code_input.has_focus and code_input.text == "abcdef"
        await app.show_details("x")
        await pilot.pause()
        await pilot.press("escape", *"g")
        assert app.details_name is None and code_input.text == "abcdefg"


async def test_ctrl_c_clears_the_input_and_ctrl_d_quits_when_it_is_empty(history):
    app = offline_app(history)
    async with app.run_test(size=(140, 40)) as pilot:
        code_input = app.query_one(CodeInput)
        await pilot.press(*"x = 1", "home", "ctrl+d")
        assert code_input.text == " = 1"  # with text, Ctrl-D deletes forward
        await pilot.press("ctrl+c")
        assert code_input.text == ""
        assert app.is_running
        await pilot.press("ctrl+d")
        await pilot.pause()
        assert not app.is_running


async def test_up_with_a_prefix_walks_only_matching_history(history):
    for entry in ["x = torch.ones(2)", "y = x * 2", "x.grad", "print(y)"]:
        history.add(entry)
    app = offline_app(history)
    async with app.run_test(size=(140, 40)) as pilot:
        code_input = app.query_one(CodeInput)
        await pilot.press("x", "up")
        assert code_input.text == "x.grad"
        await pilot.press("up")
        assert code_input.text == "x = torch.ones(2)"
        await pilot.press("down", "down")
        assert code_input.text == "x"
        await pilot.press("ctrl+c", "up")
        assert code_input.text == "print(y)"  # an empty input walks everything


async def test_ctrl_r_searches_history(history):
    for entry in ["w = torch.zeros(3, requires_grad=True)", "loss = (w * 2).sum()", "loss.backward()"]:
        history.add(entry)
    app = offline_app(history)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("ctrl+r")
        assert isinstance(app.screen, HistorySearch)
        await pilot.press(*"zeros")
        assert app.screen.found == ["w = torch.zeros(3, requires_grad=True)"]
        await pilot.press("enter")
        assert not isinstance(app.screen, HistorySearch)
        code_input = app.query_one(CodeInput)
        assert code_input.text == "w = torch.zeros(3, requires_grad=True)" and code_input.has_focus
        await pilot.press("ctrl+c", "ctrl+r", *"loss", "ctrl+r", "enter")
        assert code_input.text == "loss = (w * 2).sum()"  # Ctrl-R again: the next older match
        await pilot.press("ctrl+c", "ctrl+r", *"loss", "escape")
        assert code_input.text == "" and code_input.has_focus


async def test_page_keys_scroll_the_console(history):
    app = offline_app(history)
    async with app.run_test(size=(100, 30)) as pilot:
        log = app.query_one(ConsoleLog)
        for i in range(200):
            log.write_notice(f"line {i}")
        await pilot.pause()
        bottom = log.scroll_y
        assert bottom > 0
        await pilot.press("pageup")
        await pilot.pause()
        assert log.scroll_y < bottom
        await pilot.press("pagedown")
        await pilot.pause()
        assert log.scroll_y == bottom
        assert app.query_one(CodeInput).has_focus


async def test_backspace_in_leading_whitespace_removes_one_indent_level(history):
    app = offline_app(history)
    async with app.run_test(size=(140, 40)) as pilot:
        code_input = app.query_one(CodeInput)
        await pilot.press(*"if True:", "enter", *"if True:", "enter")
        assert code_input.text.splitlines()[-1] == "        "
        await pilot.press("backspace")
        assert code_input.text.split("\n")[-1] == "    "
        await pilot.press("space", "backspace", "backspace")
        assert code_input.text.split("\n")[-1] == ""
        await pilot.press(*"x  ", "backspace")
        assert code_input.text.split("\n")[-1] == "x "  # after code, Backspace is one character
