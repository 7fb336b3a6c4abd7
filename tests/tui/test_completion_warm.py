"""The first Tab of a session is as quick as the later ones: the completion machinery (jedi, in the kernel)
is warmed once the kernel is ready; and a completion that is slow says "completing…" on the input."""

from __future__ import annotations

import asyncio

import pytest
from tests.support.tui import Recorder, until

from gradrepl.history import History
from gradrepl.session import Session
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.messages import KernelReady, StepFinished


async def test_jedi_is_imported_in_the_kernel_before_the_first_tab(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await until(pilot, lambda: recorder.of(KernelReady), "the kernel")
        app.submit("import sys; 'jedi' in sys.modules")  # the learner's first step, before any Tab
        await until(pilot, lambda: recorder.of(StepFinished), "the step")
        assert recorder.of(StepFinished)[0].result.result == "True"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_a_slow_completion_says_it_is_completing(size, tmp_path, monkeypatch):
    gate = asyncio.Event()
    real_complete = Session.complete

    async def held_complete(self, code, cursor=None):  # the real completion, held back until the gate opens
        await gate.wait()
        return await real_complete(self, code, cursor)

    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await until(pilot, lambda: recorder.of(KernelReady), "the kernel")
        await until(pilot, lambda: app.session.completion_warmed, "the warm-up")
        monkeypatch.setattr(Session, "complete", held_complete)
        code_input = app.query_one(CodeInput)
        await pilot.press(*"torch.zer", "tab")
        await until(pilot, lambda: code_input.border_subtitle == "completing…", "the completing… mark", timeout=10)
        gate.set()
        await until(pilot, lambda: code_input.border_subtitle is None and code_input.text == "torch.zero",
                    "the completion (what zeros, zeros_like and zero_ share goes in)")
        await pilot.pause()  # the insert's Changed is handled before the app closes
