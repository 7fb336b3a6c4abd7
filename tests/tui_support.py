"""What the TUI tests share: a recorder of every message the app posts, and a wait for a condition."""

from __future__ import annotations

import asyncio
import time

import pytest
from textual.message import Message

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
