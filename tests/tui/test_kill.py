"""After any kill or restart (F8 while idle or during a step, %restart) the panel shows only the new kernel's
tensors, the console says once, in one line, that the kernel was replaced and the names lost, and the
numbering starts again at In [1], where the timeline says a fresh kernel began (issue 23 §1, §4)."""

from __future__ import annotations

from tests.support.tui import SIZES, Recorder, run_steps, running_app, until

from gradrepl.tui.confirm import Confirm
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.messages import KernelReady, KernelRestarted, StepFinished, StepStarted
from gradrepl.tui.tensors.tensor_table import TensorTable

LOOP = "import time\nwhile True:\n    time.sleep(0.01)"  # stopped only by a kill


def console_words(app) -> str:
    """Everything the console wrote, its wrapped lines joined again into words."""
    return " ".join(" ".join(strip.text for strip in app.query_one(ConsoleLog).lines).split())


async def kill_with_f8(pilot, recorder: Recorder) -> None:
    restarts = len(recorder.of(KernelRestarted))
    await pilot.press("f8")
    await until(pilot, lambda: isinstance(pilot.app.screen, Confirm), "the F8 question")
    await pilot.press("y")
    await until(pilot, lambda: len(recorder.of(KernelRestarted)) > restarts, "the fresh kernel")
    await pilot.pause()


@SIZES
async def test_f8_while_idle_leaves_only_the_new_kernels_tensors(size, tmp_path):
    async with running_app(tmp_path, size) as (app, pilot, recorder):
        await until(pilot, lambda: recorder.of(KernelReady), "the kernel")
        await run_steps(pilot, recorder, "a = torch.ones(2)")
        await kill_with_f8(pilot, recorder)
        table = app.query_one("#tensors", TensorTable)
        assert table.names == []  # the dead kernel's `a` went with it
        words = console_words(app)
        assert words.count("Kernel restarted") == 1 and "every name you defined is gone" in words
        await until(pilot, lambda: app.query_one(CodeInput).border_title == "In [1]", "numbering from 1")
        await run_steps(pilot, recorder, "b = torch.ones(1)")
        assert table.names == ["b"]
        assert "In [1]: b = torch.ones(1)" in console_words(app)
        # the ghost does not come back either with a %restart after it
        await run_steps(pilot, recorder, "%restart -f")
        assert table.names == []
        await run_steps(pilot, recorder, "c = torch.zeros(3)")
        assert table.names == ["c"]
        assert app.session.timeline.state_at(1).fresh_kernel


@SIZES
async def test_f8_during_a_step_says_it_once_and_numbers_from_one(size, tmp_path):
    async with running_app(tmp_path, size) as (app, pilot, recorder):
        await until(pilot, lambda: recorder.of(KernelReady), "the kernel")
        await run_steps(pilot, recorder, "a = torch.ones(2)", "b = a * 2")
        done = len(recorder.of(StepFinished))
        app.submit(LOOP)
        await until(pilot, lambda: any(started.number == 3 for started in recorder.of(StepStarted)), "the loop")
        await until(pilot, lambda: app.kernel_state == "busy", "the loop to run")
        await kill_with_f8(pilot, recorder)
        await until(pilot, lambda: len(recorder.of(StepFinished)) > done, "the killed step's result")
        await pilot.pause()
        table = app.query_one("#tensors", TensorTable)
        assert table.names == []
        words = console_words(app)
        assert words.lower().count("you stopped the kernel with kill") == 1, words  # the note, once
        assert words.count("the variables you defined before are lost") == 1, words
        await until(pilot, lambda: app.query_one(CodeInput).border_title == "In [1]", "numbering from 1")
        await run_steps(pilot, recorder, "c = torch.zeros(1)")
        assert table.names == ["c"]
        assert "In [1]: c = torch.zeros(1)" in console_words(app)
        timeline = app.session.timeline
        assert [step for step, _ in timeline.steps] == [1] and timeline.state_at(1).fresh_kernel
        assert [row["name"] for row in timeline.state_at(1).rows] == ["c"]
