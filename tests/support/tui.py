"""What the TUI tests share: a recorder of every message the app posts, and a wait for a condition."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from textual.message import Message

from gradrepl.tui.messages import StepFinished

# A first kernel start (and a first import of torch) can take this long on a slow machine.
KERNEL_WAIT = 60.0


class Recorder:
    """Every message the app's widgets post, for assertions."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def __call__(self, message: Message) -> None:
        self.messages.append(message)

    def of(self, kind: type) -> list:
        return [m for m in self.messages if isinstance(m, kind)]


async def until(pilot, condition, what: str, timeout: float = KERNEL_WAIT) -> None:
    """Let the app run until `condition()` holds; fail the test naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        await pilot.pause(0.05)


def screen_text(app) -> str:
    """The characters on the app's screen now, one line per row (what a terminal would show)."""
    return "\n".join("".join(segment.text for segment in strip) for strip in app.screen._compositor.render_strips())


def panel_lines(screen: str) -> list[str]:
    """The tensor panel's lines, whether it sits beside the console (after '││') or below it."""
    lines = []
    inside = False
    for line in screen.splitlines():
        if "tensors" in line and "╭" in line.split("││")[-1]:
            inside = True
            continue
        if inside:
            part = line.split("││")[-1]
            if part.startswith("╰"):
                break
            lines.append(part.strip("│"))
    return lines


def gate_kernel_start(monkeypatch) -> asyncio.Event:
    """Hold every Session's real kernel start until the returned event is set."""
    from gradrepl.session import Session

    gate = asyncio.Event()
    real_start = Session.start

    async def gated_start(self):
        await gate.wait()
        await real_start(self)

    monkeypatch.setattr(Session, "start", gated_start)
    return gate


async def type_and_run(pilot, source: str) -> None:
    """Type `source` key by key (Enter between lines, auto-indent handles the rest) and run it."""
    for i, line in enumerate(source.split("\n")):
        if i:
            await pilot.press("ctrl+j")
        await pilot.press(*line.lstrip())
    await pilot.press("enter")


async def run_steps(pilot, recorder: Recorder, *sources: str) -> None:
    """Type each of `sources` and wait for its step to finish."""
    for source in sources:
        done = len(recorder.of(StepFinished))
        await type_and_run(pilot, source)
        await until(pilot, lambda: len(recorder.of(StepFinished)) > done, f"step {source!r}")


async def submit_steps(pilot, recorder: Recorder, *sources: str, timeout: float = KERNEL_WAIT) -> None:
    """Submit each of `sources` as Enter does, without typing it, and wait for its step to finish."""
    for source in sources:
        done = len(recorder.of(StepFinished))
        pilot.app.submit(source)
        await until(pilot, lambda: len(recorder.of(StepFinished)) > done, f"step {source!r}", timeout)
    await pilot.pause()  # the step's reply drawn


def shown_actions(app) -> set[str]:
    return {active.binding.action for active in app.screen.active_bindings.values() if active.enabled}


# The tensor panel's state, read from outside the widget (TensorTable keeps no API for tests).
def cell_text(table, name: str, column: str) -> str:
    """The text of one panel cell, before it is cropped to its column."""
    return table._cells[name][column].plain


def lit_names(table) -> list[str]:
    """The names the last step lit as changed, in the order it lit them."""
    return list(table._lit)


def feedback_text(card) -> str:
    """What a question card says, in plain text: the verdict (its words as written) and the note under it."""
    return "\n".join(part for part in (card._verdict, card._note.plain) if part)


# The two screens the TUI tests are read at: an 80x24 terminal (the panel under the console) and 120x40.
SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])


@asynccontextmanager
async def running_app(tmp_path, size: tuple[int, int]) -> AsyncIterator[tuple]:
    """A GradReplApp with a real kernel at `size`, its history in `tmp_path`: (app, pilot, recorder)."""
    from gradrepl.history import History
    from gradrepl.tui.app import GradReplApp

    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        yield app, pilot, recorder
