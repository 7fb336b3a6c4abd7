"""The TUI's prompt is IPython's, at 80x24 and 120x40: the input is titled In [N], the number the next step
takes; a step is echoed as In [N]: and a magic that only looks takes no number; %restart numbers from 1."""

from __future__ import annotations

import pytest
from tests.support.tui import Recorder, screen_text, submit_steps, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.messages import KernelReady


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_input_is_titled_with_the_next_step_number(size, tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await until(pilot, lambda: recorder.of(KernelReady), "the kernel")
        code_input = app.query_one(CodeInput)
        assert code_input.border_title == "In [1]"
        await submit_steps(pilot, recorder, "x = torch.ones(2)")
        assert code_input.border_title == "In [2]" and "In [2]" in screen_text(app)
        assert "In [1]: x = torch.ones(2)" in screen_text(app)
        await submit_steps(pilot, recorder, "%tensors")
        assert code_input.border_title == "In [2]"  # looking took no number
        await submit_steps(pilot, recorder, "x * 2")
        assert code_input.border_title == "In [3]" and "In [2]: x * 2" in screen_text(app)
        await submit_steps(pilot, recorder, "%restart -f")
        await until(pilot, lambda: code_input.border_title == "In [1]", "numbering from 1 after the restart")
