"""A Textual worker that raises never vanishes: the console says what failed, and the app is usable."""

from __future__ import annotations

import os
import re
import shutil

import pytest
from tests.support.tui import Recorder, submit_steps, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.confirm import Confirm
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.messages import StepFinished
from gradrepl.tui.status_bar import StatusBar
from gradrepl.tui.tensors.tensor_table import TensorTable

WAIT = 120.0  # a safety net: a kernel start on a loaded machine


def console_text(app) -> str:
    return re.sub(r"\s+", " ", " ".join(line.text for line in app.query_one(ConsoleLog).lines))


def status(app) -> str:
    return app.query_one(StatusBar).render_text().plain


@pytest.mark.timeout(300)
async def test_a_restart_that_fails_after_f8_says_so_and_f8_tries_again(tmp_path):
    """The scratch folder is removed from under the tutor (a tmp cleaner): the fresh kernel cannot
    start. The kill worker's failure is said in words, the status leaves "warming up", the lost rows
    go, and once the folder is back F8 starts a kernel that runs steps."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await submit_steps(pilot, recorder, "kept = torch.ones(1)", timeout=WAIT)
        scratch = app.session.client.scratch_dir
        shutil.rmtree(scratch)
        await pilot.press("f8")
        await until(pilot, lambda: isinstance(app.screen, Confirm), "the kill question")
        await pilot.press("y")
        await until(pilot, lambda: "could not be restarted" in console_text(app), "words for the failed restart",
                    WAIT)
        assert app.is_running
        assert "warming up" not in status(app) and "✕" in status(app), status(app)
        assert app.query_one(TensorTable).names == []  # the old kernel and its variables are gone
        assert "kernel failed to start" in console_text(app)  # the reason, from the kernel client
        os.makedirs(scratch)
        await pilot.press("f8")  # nothing left to lose: no question
        await until(pilot, lambda: app.kernel_state == "idle", "a fresh kernel", WAIT)
        await submit_steps(pilot, recorder, "1 + 1", timeout=WAIT)
        assert recorder.of(StepFinished)[-1].result.result == "2"


@pytest.mark.timeout(300)
async def test_a_first_start_that_fails_says_so_and_f8_tries_again(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    app.make_session()  # the app makes it after the first frame: here before, so its folder can go first
    scratch = app.session.client.scratch_dir
    shutil.rmtree(scratch)  # the kernel cannot start without its folder
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await until(pilot, lambda: "could not start" in console_text(app), "words for the failed start", WAIT)
        assert "warming up" not in status(app) and "✕" in status(app), status(app)
        os.makedirs(scratch)
        await pilot.press("f8")
        await until(pilot, lambda: app.kernel_state == "idle", "a kernel at last", WAIT)
        await submit_steps(pilot, recorder, "1 + 1", timeout=WAIT)
        assert recorder.of(StepFinished)[-1].result.result == "2"
