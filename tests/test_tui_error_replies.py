"""Nothing the learner types ends the session: every magic and view, given each error reply a real
kernel sends, says so in the console, and the app, the kernel and the learner's variables live on.

One app per table (a kernel start each); each row runs its command, then a step that reads a
variable made before the table began.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from tui_support import Recorder, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.messages import StepFailed, StepFinished
from gradrepl.tui.tensors.trace_view import TraceView

SIZES = [(80, 24), (120, 40)]
STEP_WAIT = 60.0  # a safety net only: the rows never depend on the machine's speed


@dataclass
class Row:
    """`command` typed after `setup`; the console must then show `words` (whitespace-insensitive)."""

    what: str
    command: str
    words: str
    setup: tuple[str, ...] = ()
    interrupt: bool = False  # Ctrl-C once the command is running
    view: str | None = None  # words the trace view must show (it opens on the trace, keys walk it)


def console_text(app) -> str:
    return " ".join(line.text for line in app.query_one(ConsoleLog).lines)


def squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def results(recorder) -> int:
    return len(recorder.of(StepFinished)) + len(recorder.of(StepFailed))


async def step(pilot, recorder, source: str, interrupt: bool = False) -> None:
    app = pilot.app
    done = results(recorder)
    app.submit(source)
    if interrupt:
        await until(pilot, lambda: not app.is_running or app.kernel_state == "busy", f"{source!r} to run")
        await pilot.pause(0.3)
        await pilot.press("ctrl+c")
    await until(pilot, lambda: not app.is_running or results(recorder) > done, f"step {source!r}", STEP_WAIT)
    await pilot.pause()


async def still_lives(pilot, recorder, what: str, before: str) -> None:
    """The app runs, the console grew, and a later step still sees a variable from the start."""
    app = pilot.app
    assert app.is_running, f"{what}: the app exited ({app._exception!r})"
    await step(pilot, recorder, "print(kept)")
    assert app.is_running, f"{what}: the app exited on the next step ({app._exception!r})"
    last = recorder.of(StepFinished)[-1].result
    assert last.stdout == "still here\n", f"{what}: the next step saw {last.stdout!r} {last.error!r}"
    if app.query_one(TraceView).display:
        await pilot.press("escape")
        await pilot.pause()


TRACE_ROWS = [
    Row("%trace of an unknown name", "%trace nosuch", "no live tensor named 'nosuch'"),
    Row("%trace of a number", "%trace n", "no live tensor named 'n'", setup=("n = 3",)),
    Row("%trace of a leaf", "%trace a", "a is a leaf",
        setup=("a = torch.tensor([1.0, 2.0], requires_grad=True)",)),
    Row("%trace of a non-scalar", "%trace c", "not one number", setup=("c = a * 2",)),
    Row("%trace of a tensor with no graph", "%trace k", "k", setup=("k = torch.ones(2)",)),
    Row("%trace STATEMENT whose backward raises (graph freed)", "%trace b.backward()",
        "Trying to backward through the graph a second time", setup=("b = (a * a).sum()", "b.backward()"),
        view="backward stopped after 2 of 3 node(s): RuntimeError"),
    Row("%trace of a tensor whose graph was freed", "%trace b", "b"),
    Row("%trace STATEMENT with a non-scalar backward", "%trace c.backward()",
        "grad can be implicitly created only for scalar outputs", view="no node ran"),
    Row("%trace STATEMENT through autograd.grad on a freed graph", "%trace torch.autograd.grad(b, a)",
        "backward through the graph a second time"),
    Row("%trace STATEMENT that runs no backward", "%trace 1 / 0", "ZeroDivisionError"),
    Row("%trace STATEMENT that does not parse", "%trace b.backward(", "SyntaxError"),
    Row("%trace STATEMENT naming nothing", "%trace nosuch.backward()", "NameError"),
    Row("%trace with nothing after it", "%trace", "%trace needs a tensor name"),
    Row("%trace STATEMENT interrupted", "%trace import time; time.sleep(60)", "KeyboardInterrupt",
        interrupt=True),
]

MAGIC_ROWS = [
    Row("%at with a word", "%at x", "%at needs a step number"),
    Row("%at past the timeline", "%at 999", "step 999 is not in the timeline"),
    Row("%at with nothing", "%at", "%at needs a step number"),
    Row("%graph of an unknown name", "%graph nosuch", "no live tensor named 'nosuch'"),
    Row("%graph of a number", "%graph n", "no live tensor named 'n'", setup=("n = 3",)),
    Row("%graph of a leaf", "%graph a", "a", setup=("a = torch.tensor([1.0, 2.0], requires_grad=True)",)),
    Row("%graph of a freed graph", "%graph b", "SumBackward0", setup=("b = (a * a).sum()", "b.backward()")),
    Row("%graph with nothing", "%graph", "%graph needs a tensor name"),
    Row("%check of an unknown name", "%check nosuch", "nosuch: no tensor"),
    Row("%check of a number", "%check n", "n: no tensor"),
    Row("%check of a freed graph", "%check b", "b"),
    Row("%check of a tensor with no formula", "%check k", "k", setup=("k = torch.ones(2)",)),
    Row("%check with nothing", "%check", "%check needs a tensor name"),
    Row("%tensors", "%tensors", "requires_grad"),
    Row("%help with a word after it", "%help trace", "%trace NAME|STMT"),
    Row("an unknown magic", "%nosuch", "unknown command %nosuch"),
    Row("%timeit of a statement that raises", "%timeit 1 / 0", "ZeroDivisionError"),
    Row("%timeit with nothing", "%timeit", "%timeit needs a statement"),
    Row("%timeit interrupted", "%timeit import time; time.sleep(60)", "KeyboardInterrupt", interrupt=True),
    Row("%history", "%history", "print(kept)"),
    Row("help of an unknown name", "nosuch?", "NameError"),
    Row("help() of an unknown name", "help(nosuch)", "NameError"),
]


async def walk_trace_view(pilot, row: Row) -> None:
    """The trace view opened on what the backward reached, and every key of it keeps the app."""
    app = pilot.app
    view = app.query_one(TraceView)
    assert view.display and view.has_focus, f"{row.what}: the trace view did not open"
    body = squeezed(app.query_one("#trace-body").render().plain)
    assert squeezed(row.view) in body, f"{row.what}: the trace view said {body!r}"
    for key in ("right", "right", "right", "end", "left", "home", "space"):
        await pilot.press(key)
        assert app.is_running, f"{row.what}: {key} in the trace view ended the app ({app._exception!r})"
    await pilot.pause(0.2)
    assert "bug" not in squeezed(console_text(app)), f"{row.what}: a view failed"


async def run_table(tmp_path, size, rows: list[Row]) -> None:
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await step(pilot, recorder, "kept = 'still here'")
        for row in rows:
            for source in row.setup:
                await step(pilot, recorder, source)
                assert app.is_running, f"{row.what}: setup {source!r} ended the app"
            before = console_text(app)
            await step(pilot, recorder, row.command, row.interrupt)
            assert app.is_running, f"{row.what}: the app exited ({app._exception!r})"
            said = squeezed(console_text(app)[len(before):])
            assert squeezed(row.words) in said, f"{row.what}: the console said {said[-600:]!r}"
            if row.view is not None:
                await walk_trace_view(pilot, row)
            await still_lives(pilot, recorder, row.what, before)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
async def test_trace_error_replies_keep_the_session(tmp_path, size):
    await run_table(tmp_path, size, TRACE_ROWS)


@pytest.mark.timeout(600)
async def test_magic_error_replies_keep_the_session(tmp_path):
    await run_table(tmp_path, (120, 40), MAGIC_ROWS)
