"""Leaving the TUI as in IPython: exit/quit leave; Ctrl-D, Ctrl-Q, %reset, %restart and F8 ask first,
naming every name that would be lost (not only tensors)."""

from __future__ import annotations

import pytest
from tests.support.tui import Recorder, run_steps, type_and_run, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.confirm import Confirm
from gradrepl.tui.messages import StepFinished

MODEL = ("model = nn.Linear(2, 1)", "opt = torch.optim.SGD(model.parameters(), lr=0.1)", "losses = [0.5, 0.25]")


async def asked(pilot) -> str:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, Confirm), "the question")
    return str(app.screen.query_one("#confirm-question").render())


async def no_question(pilot) -> None:
    await pilot.pause(0.3)
    assert not isinstance(pilot.app.screen, Confirm)


async def answer(pilot, key: str) -> None:
    await pilot.press(key)
    await until(pilot, lambda: not isinstance(pilot.app.screen, Confirm), "the question to close")


@pytest.mark.parametrize("word", ["exit", "exit()", "quit", "quit()"])
async def test_exit_and_quit_leave_as_in_ipython(tmp_path, word):
    app = GradReplApp(history=History(tmp_path / "h.jsonl"), start_kernel=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await type_and_run(pilot, word)
        await until(pilot, lambda: not app.is_running, f"{word} to leave", timeout=10)


async def test_exit_leaves_even_with_variables_and_is_not_refused(tmp_path):
    """exit() used to reach the kernel, which refused it ("sys.exit() ends a script")."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(100, 30), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "x = torch.ones(2)")
        await type_and_run(pilot, "exit()")
        await until(pilot, lambda: not app.is_running, "exit() to leave", timeout=30)
    assert not [m for m in recorder.of(StepFinished) if m.result.source == "exit()"]


@pytest.mark.timeout(300)
async def test_losing_the_namespace_asks_first_and_names_what_goes(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await until(pilot, lambda: app.kernel_state == "idle", "the kernel")
        await run_steps(pilot, recorder, "1 + 1")  # nothing of the learner's in the namespace: no question
        await type_and_run(pilot, "%reset")
        await until(pilot, lambda: recorder.of(StepFinished)[-1].result.source == "%reset", "%reset")
        for source in MODEL:
            await run_steps(pilot, recorder, source)

        await pilot.press("ctrl+d")  # on the empty input
        question = await asked(pilot)
        assert "Leave gradrepl?" in question and "model, opt, losses" in question, question
        await answer(pilot, "n")
        assert app.is_running

        await pilot.press("f8")
        question = await asked(pilot)
        assert "model, opt, losses" in question, question  # not only the tensors
        await answer(pilot, "n")

        for magic in ("%reset", "%restart"):
            await type_and_run(pilot, magic)
            question = await asked(pilot)
            assert "model, opt, losses" in question, question
            await answer(pilot, "n")
        await run_steps(pilot, recorder, "print(len(losses), type(opt).__name__)")
        assert recorder.of(StepFinished)[-1].result.stdout == "2 SGD\n"  # "no" kept everything

        await type_and_run(pilot, "%reset")
        await asked(pilot)
        await answer(pilot, "y")
        await until(pilot, lambda: recorder.of(StepFinished)[-1].result.source == "%reset", "the reset")
        await run_steps(pilot, recorder, "'losses' in dir()")
        assert recorder.of(StepFinished)[-1].result.result == "False"

        await run_steps(pilot, recorder, "w = torch.ones(1)")
        await run_steps(pilot, recorder, "%reset -f")  # forced, as in IPython: no question
        await no_question(pilot)

        await run_steps(pilot, recorder, "losses = [1.0]")
        await pilot.press("ctrl+d")
        await asked(pilot)
        await pilot.press("ctrl+d")  # Ctrl-D twice skips the question
        await until(pilot, lambda: not app.is_running, "Ctrl-D twice to leave", timeout=30)


async def test_ctrl_q_asks_and_yes_quits(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(100, 30), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "losses = []")
        await pilot.press("ctrl+q")
        assert "losses" in await asked(pilot)
        await answer(pilot, "n")
        assert app.is_running
        await pilot.press("ctrl+q")
        await asked(pilot)
        await pilot.press("y")
        await until(pilot, lambda: not app.is_running, "yes to leave", timeout=30)


async def test_restart_asks_and_yes_restarts(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(100, 30), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "opt = 1")
        pid = app.session.kernel_info["pid"]
        await type_and_run(pilot, "%restart")
        assert "opt" in await asked(pilot)
        await answer(pilot, "y")
        await until(pilot, lambda: recorder.of(StepFinished)[-1].result.source == "%restart", "the restart")
        assert app.session.kernel_info["pid"] != pid
        await run_steps(pilot, recorder, "'opt' in dir()")
        assert recorder.of(StepFinished)[-1].result.result == "False"
