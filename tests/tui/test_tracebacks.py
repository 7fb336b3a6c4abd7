"""Tracebacks in the console: the learner's frames compactly, torch's folded behind F9 or a click, carets."""

from __future__ import annotations

from tests.support.tui import Recorder, until

from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.messages import StepFinished
from tests.support.tui import run_steps, shown_actions


def log_lines(app: GradReplApp) -> list[str]:
    return [line.text for line in app.query_one(ConsoleLog).lines]


NESTED = ("def g(x):\nreturn x.sum().backward()\n", "def f(x):\nreturn g(x) + 1\n", "f(torch.ones(2))")


async def test_nested_error_shows_learner_frames_and_folds_torch_frames(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(130, 50), message_hook=recorder) as pilot:
        await until(pilot, lambda: app.kernel_state == "idle", "the kernel")
        assert "toggle_library_frames" not in shown_actions(app)
        await run_steps(pilot, recorder, *NESTED)
        assert recorder.of(StepFinished)[-1].result.error.type == "RuntimeError"
        lines = log_lines(app)
        start = lines.index("Traceback (most recent call last)")
        assert [line.strip() for line in lines[start + 1:start + 8]] == [
            "Cell In[3], line 1", "----> 1 f(torch.ones(2))",
            "Cell In[2], line 2, in f", "----> 2 return g(x) + 1", "^^^^",
            "Cell In[1], line 2, in g", "----> 2 return x.sum().backward()"]
        caret = lines[start + 5]
        assert caret.index("^") == lines[start + 4].index("g(x)")  # under the call that failed
        assert lines[start + 8].strip() == "^" * len("x.sum().backward()")
        assert "torch frames folded" in lines[start + 9]
        assert lines[start + 10].startswith("RuntimeError: element 0 of tensors does not require grad")
        assert not any("gradrepl/" in line or "_tensor.py" in line for line in lines)
        assert "toggle_library_frames" in shown_actions(app)
        await pilot.press("f9")
        lines = log_lines(app)
        assert any(line.strip().startswith("torch/_tensor.py, line ") for line in lines)
        assert not any("folded" in line for line in lines)
        assert not any("gradrepl/" in line for line in lines)
        await pilot.press("f9")
        assert any("torch frames folded" in line for line in log_lines(app))


async def test_a_click_on_the_folded_line_opens_the_torch_frames(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(130, 50), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, *NESTED)
        log = app.query_one(ConsoleLog)
        row = next(i for i, line in enumerate(log_lines(app)) if "folded" in line)
        await pilot.click(ConsoleLog, offset=(6, row - round(log.scroll_y)))
        assert log.show_library_frames
        assert any(line.strip().startswith("torch/autograd/") for line in log_lines(app))


async def test_syntax_error_draws_its_caret(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(130, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "x = (1 +\n2 +)")
        error = recorder.of(StepFinished)[-1].result.error
        assert error.type == "SyntaxError"
        lines = log_lines(app)
        code_row = next(i for i, line in enumerate(lines) if line.strip() == "2 +)")
        assert lines[code_row - 1].strip() == "Cell In[1], line 2"
        caret = lines[code_row + 1]
        assert caret.strip() == "^" and caret.index("^") == lines[code_row].index(")")
        assert lines[code_row + 2].startswith("SyntaxError: invalid syntax")
        assert "Traceback" not in "\n".join(lines)


async def test_a_chained_error_shows_its_cause_first(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(130, 50), message_hook=recorder) as pilot:
        await until(pilot, lambda: app.kernel_state == "idle", "the kernel")
        # Typed as a learner types it: auto-indent after each ':' and out again after a return.
        for keys in ("def load(x):", "ctrl+j", "try:", "ctrl+j", "return x.item()", "ctrl+j",
                     "except RuntimeError as exc:", "ctrl+j", "raise ValueError('could not read x') from exc",
                     "ctrl+j", "enter"):
            await pilot.press(*([keys] if keys in ("ctrl+j", "enter") else keys))
        await until(pilot, lambda: len(recorder.of(StepFinished)) == 1, "the def")
        first = recorder.of(StepFinished)[0].result
        assert first.error is None, (first.source, first.error)
        await run_steps(pilot, recorder, "load(torch.ones(3))")
        assert recorder.of(StepFinished)[-1].result.error.type == "ValueError"
        shown = " ".join(" ".join(line.split()) for line in log_lines(app))  # as read, however it wraps
        cause = shown.index("RuntimeError: a Tensor with 3 elements")
        link = shown.index("The above exception was the direct cause of the following exception:")
        assert cause < link < shown.index("ValueError: could not read x")
        assert "----> 3 return x.item()" in shown[:cause]
