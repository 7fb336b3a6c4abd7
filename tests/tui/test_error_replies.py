"""Nothing the learner types ends the session: every magic and view, given each error reply a real
kernel sends, says so in the console, and the app, the kernel and the learner's variables live on.

One app per table (a kernel start each); each row runs its command, then a step that reads a
variable made before the table began.
"""

from __future__ import annotations

import os
import re
import signal
from dataclasses import dataclass

import pytest
from tests.support.tui import Recorder, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from textual.widgets import Static

from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.console.help_view import HelpView
from gradrepl.tui.messages import DetailsLoaded, StepFailed, StepFinished
from gradrepl.tui.tensors.details import TensorDetails
from gradrepl.tui.tensors.tensor_table import TensorTable
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


def details_text(app) -> str:
    return " ".join(str(part.render()) for part in app.query_one(TensorDetails).query(Static))


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
    if any(view.display for view in app.query(TraceView)):  # composed once a trace first opened
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
    Row("%plot of an unknown name", "%plot nosuch", "no variable named 'nosuch'"),
    Row("%plot of a dict", "%plot d", "d is a dict, not a list of numbers", setup=("d = {'a': 1}",)),
    Row("%plot of an empty list", "%plot es", "es is empty: nothing to plot yet", setup=("es = []",)),
    Row("%plot of a list holding words", "%plot ws", "ws holds a str", setup=("ws = [1.0, 'x']",)),
    Row("%plot with nothing", "%plot", "%plot needs a name"),
    Row("%tensors", "%tensors", "grad_fn"),  # fitted to the console: "req", not "requires_grad"
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
    body = squeezed(app.query_one("#trace-docked").render().plain + " " + app.query_one("#trace-body").render().plain)
    assert squeezed(row.view) in body, f"{row.what}: the trace view said {body!r}"
    for key in ("right", "right", "right", "end", "left", "home", "space"):
        await pilot.press(key)
        assert app.is_running, f"{row.what}: {key} in the trace view ended the app ({app._exception!r})"
    await pilot.pause(0.2)
    assert "could not show" not in squeezed(console_text(app)), f"{row.what}: a view failed"


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
            assert "could not show" not in said, f"{row.what}: a view failed on a reply the kernel sends: {said!r}"
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


def select_row(pilot, name: str):
    """Enter on `name`'s row of the panel, reached with the keys."""
    table = pilot.app.query_one(TensorTable)
    table.focus()
    return pilot.press("home", *["down"] * table.names.index(name), "enter")


@pytest.mark.timeout(600)
async def test_views_given_error_states_keep_the_session(tmp_path):
    """The details view (freed graph, no graph, a row removed while shown), the timeline walked end to
    end over failed steps, and the help view on a name that does not exist."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        for source in ("kept = 'still here'", "a = torch.tensor([1.0, 2.0], requires_grad=True)",
                       "b = (a * a).sum()", "b.backward()", "b.backward()", "c = a * 2", "c.backward()",
                       "k = torch.ones(2)", "%trace b.backward()", "1 / 0"):
            await step(pilot, recorder, source)
        for name, words in (("k", "k"), ("a", "a"), ("c", "c"), ("b", "backward() freed the saved tensors")):
            loaded = len(recorder.of(DetailsLoaded))
            await select_row(pilot, name)
            await until(pilot, lambda: not app.is_running or len(recorder.of(DetailsLoaded)) > loaded,
                        f"{name}'s details")
            await pilot.pause()
            assert app.is_running, f"details of {name}: the app exited ({app._exception!r})"
            shown = squeezed(details_text(app))
            assert squeezed(words) in shown, f"details of {name} said {shown!r} {[m.result.source for m in recorder.of(StepFinished)]} {app.session.tensors.keys()}"
        await step(pilot, recorder, "del b")  # the row shown goes away
        assert app.is_running and app.details_name is None
        await pilot.press("escape")
        for key in ["f3"] * 14 + ["f4"] * 14:
            await pilot.press(key)
            assert app.is_running, f"{key} in the timeline ended the app ({app._exception!r})"
        await pilot.press("escape")
        await step(pilot, recorder, "nosuch?")
        assert "NameError" in squeezed(console_text(app))
        await step(pilot, recorder, "torch.ones?")
        await until(pilot, lambda: isinstance(app.screen, HelpView), "the help view")
        await pilot.press("escape")
        await still_lives(pilot, recorder, "the views", "")


# Learner code can rewrite the kernel's own handlers (issue 20), so a reply of the right id can carry
# anything. `once(op, forge)` forges the next reply of `op` only.
FORGER = """
import sys
worker = sys.modules.get("gradrepl.kernel.worker") or sys.modules["__main__"]  # forked, or spawned
def once(op, forge):
    real = getattr(worker.Kernel, op)
    def forged(self, message):
        setattr(worker.Kernel, op, real)
        return forge(real(self, message))
    setattr(worker.Kernel, op, forged)
"""

FORGED = [
    ("a graph of the wrong shape, for the details view",
     "once('op_graph', lambda out: {'graph': {'nodes': 7, 'edges': 7, 'freed': 'yes'}, 'text': 7})",
     lambda pilot: select_row(pilot, "y"), "could not show|reply protocol"),
    ("rows of the wrong shape, for the panel and the timeline",
     "once('op_execute', lambda out: {**out, 'tensors': [{'name': 'bad', 'shape': 'lots', 'grad': 7, "
     "'value': 7, 'saved_bytes': 'lots', 'version': 'x'}]})",
     lambda pilot: step(pilot, pilot.recorder, "1 + 1"), "could not show|reply protocol|kernel"),
    ("a trace of the wrong shape, for the trace view",  # the console's listing reads it; the view cannot
     "once('op_trace', lambda out: {'trace': {'root': 5, 'nodes': [{'id': 'n0', 'order': 'first', "
     "'name': 'X', 'next': []}]}})",
     lambda pilot: step(pilot, pilot.recorder, "%trace y"), "could not show|reply protocol|kernel"),
    ("a help page of the wrong shape, for the help view",
     "once('op_help', lambda out: {'display': {'kind': 'help', 'title': 5, 'text': ['x']}})",
     lambda pilot: step(pilot, pilot.recorder, "torch.ones?"), "help: 5|could not|kernel"),
]


@pytest.mark.timeout(600)
async def test_replies_a_view_cannot_render_are_said_in_words(tmp_path):
    """The guard at the root: whatever a reply holds, the view says it could not show it; the app lives."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        pilot.recorder = recorder
        await step(pilot, recorder, "x = torch.tensor(2.0, requires_grad=True)")
        await step(pilot, recorder, "y = x ** 2")
        for what, forge, provoke, words in FORGED:
            await step(pilot, recorder, FORGER + forge)
            assert recorder.of(StepFinished)[-1].result.error is None, what
            before = console_text(app)
            await provoke(pilot)
            await pilot.pause(0.3)
            assert app.is_running, f"{what}: the app exited ({app._exception!r})"
            for key in ("f3", "f3", "f4", "f4", "f4", "escape", "escape"):  # back two, then to the present
                await pilot.press(key)
                assert app.is_running, f"{what}: {key} ended the app ({app._exception!r})"
            if isinstance(app.screen, HelpView):
                await pilot.press("escape")
            # The words come with the reply: waited for, however slowly the machine answers.
            def said() -> str:
                return console_text(app)[len(before):] + " " + details_text(app)
            await until(pilot, lambda: re.search(words, said()) is not None,
                        f"{what}: {words!r} in the console or the details")
            await step(pilot, recorder, "2 + 2")
            assert recorder.of(StepFinished)[-1].result.result == "4", what


# The kernel's next graph reply waits for SIGUSR1 (blocked first, so an early one waits too): a
# reply that is surely still on its way when the learner moves on, on any machine.
SLOW_GRAPH = FORGER + """
import signal
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
def held(out):
    signal.sigwait({signal.SIGUSR1})
    return out
once('op_graph', held)
"""


@pytest.mark.timeout(300)
async def test_choosing_another_row_while_details_load_keeps_the_kernel(tmp_path):
    """One row's details are on their way when another row is chosen: the first request is given up
    on, and its reply, when it comes, must not be taken for a broken kernel (which is then killed)."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        for source in ("kept = 'still here'", "a = torch.ones(2, requires_grad=True)", "k = (a * 3).sum()",
                       SLOW_GRAPH):
            await step(pilot, recorder, source)
        pid = app.session.kernel_info["pid"]
        await select_row(pilot, "a")  # its graph reply is held in the kernel
        await until(pilot, lambda: app.session.client.in_flight, "a's graph request")
        await select_row(pilot, "k")  # a's request is given up on
        await pilot.pause(0.2)
        os.kill(pid, signal.SIGUSR1)
        await until(pilot, lambda: any(m.name == "k" and (m.check is not None or m.errors) for m in recorder.of(DetailsLoaded)),
                    "k's details")
        assert app.session.kernel_info["pid"] == pid, "the kernel was replaced"
        assert list(app.session.tensors) == ["a", "k"]
        await still_lives(pilot, recorder, "details", "")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("magic", ["%trace", "%timeit"])
async def test_a_kernel_that_dies_inside_a_magic_is_replaced_and_said(tmp_path, magic):
    """The statement a magic runs ends the kernel: the step says so, a fresh kernel takes the next one."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await step(pilot, recorder, "kept = 'still here'")
        before = console_text(app)
        await step(pilot, recorder, f"{magic} import os; os._exit(3)")
        assert app.is_running, f"{magic}: the app exited ({app._exception!r})"
        said = squeezed(console_text(app)[len(before):])
        assert "A fresh kernel was started" in said, said
        await step(pilot, recorder, "kept = 'again'; 6 * 7")
        assert recorder.of(StepFinished)[-1].result.result == "42"
