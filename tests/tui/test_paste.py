"""A block pasted without bracketed paste (ssh, `tmux paste-buffer`) arrives as keys; it runs as blocks."""

from __future__ import annotations

from textual import events
from tests.support.tui import Recorder, until

from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.messages import StepFinished

PASTED = """def f(x):
    for i in range(2):
        if i:
            x = x * 2
    return x

y = f(torch.ones(2))
y.sum()
"""


async def paste_as_keys(pilot, text: str) -> None:
    """What the terminal driver does with one read: every key posted at once, newlines as Enter."""
    driver = pilot.app._driver
    for char in text:
        key = events.Key("enter", "\r") if char == "\n" else events.Key("space" if char == " " else char, char)
        key.set_sender(pilot.app)
        driver.send_message(key)
    await pilot.pause()


async def test_a_pasted_block_runs_as_its_top_level_blocks(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await until(pilot, lambda: app.kernel_state == "idle", "the kernel")
        await paste_as_keys(pilot, PASTED)
        await until(pilot, lambda: len(recorder.of(StepFinished)) == 3, "the three blocks")
        results = [m.result for m in recorder.of(StepFinished)]
        assert [r.error for r in results] == [None, None, None]
        assert results[0].source.startswith("def f(x):") and results[0].source.endswith("return x")
        assert results[2].result == "tensor(4.)"
        assert app.query_one(CodeInput).text == ""
        assert history.entries[-1] == "y.sum()"


async def test_a_paste_without_its_last_newline_waits_in_the_input(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await until(pilot, lambda: app.kernel_state == "idle", "the kernel")
        await paste_as_keys(pilot, "for i in range(2):\n    print(i)")
        await pilot.pause(0.3)
        code_input = app.query_one(CodeInput)
        assert code_input.text == "for i in range(2):\n    print(i)"  # pasted indentation kept, nothing added
        assert not recorder.of(StepFinished)
        await pilot.press("enter")
        assert code_input.text.endswith("\n    ")  # typed Enter: auto-indent as usual
        await pilot.press("enter")
        await until(pilot, lambda: recorder.of(StepFinished), "the loop")
        assert recorder.of(StepFinished)[0].result.stdout == "0\n1\n"
