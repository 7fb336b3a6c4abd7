"""Every message the TUI posts, in one place. Workers post them; handlers in app.py render them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from gradrepl.protocol.messages import StepResult
from gradrepl.session import KernelState


@dataclass
class KernelStateChanged(Message):
    """The kernel went starting / idle / busy / dead."""

    state: KernelState

    def can_replace(self, message: Message) -> bool:
        # Textual asks the older message whether the newer one may supersede it:
        # only the latest state matters before a paint.
        return isinstance(message, KernelStateChanged)


class KernelRestarted(Message):
    """A fresh kernel replaced the old one: every variable is gone."""


@dataclass
class KernelReady(Message):
    """The kernel has imported torch and takes work; `sandbox` lists its hardening layers."""

    sandbox: dict[str, dict[str, Any]]


@dataclass
class KernelFailed(Message):
    """The kernel could not start at all; `reason` is shown to the learner."""

    reason: str


@dataclass
class InputSubmitted(Message):
    """The learner pressed Enter on a complete statement."""

    source: str


@dataclass
class CompletionRequested(Message):
    """Tab in the input: ask the kernel what may follow `code[:cursor]`.

    `typing` is set when the open menu ran out of candidates as the word grew (the
    kernel sends a capped list): the answer refreshes the menu but inserts nothing.
    """

    code: str
    cursor: int
    typing: bool = False


@dataclass
class QuitRequested(Message):
    """Ctrl-D on an empty input: leave, as Ctrl-Q does."""


@dataclass
class ConsolePageRequested(Message):
    """PageUp/PageDown in the input: scroll the console log by `pages` pages."""

    pages: int


@dataclass
class StepQueued(Message):
    """A step waits for the kernel (typed while it warms up or runs another step)."""

    source: str
    kernel_ready: bool = True


@dataclass
class StepStarted(Message):
    source: str
    number: int | None = None  # In [N] (None: the input takes no step number)


@dataclass
class StepFinished(Message):
    """A step came back from the kernel, errors included: typed, or lesson code through the lesson's door.
    ``shown`` False: only its rows count (a lesson's replay, a question's setup)."""

    result: StepResult
    shown: bool = True


@dataclass
class StepFailed(Message):
    """The session itself failed to run a step (no kernel); not a learner error."""

    source: str
    reason: str


@dataclass
class ConsoleNotice(Message):
    """Words a widget wants said in the console's log (a lesson notice, a lesson problem)."""

    text: str
    style: str = "dim"


@dataclass
class FocusConsole(Message):
    """A widget hands the keyboard to the console's input (a task's code is typed there).

    ``text``: code to put into an empty input first (a coding exercise's starter code).
    """

    text: str = ""


@dataclass
class DetailsLoaded(Message):
    """Everything the details view shows about one tensor, fetched from the kernel."""

    name: str
    row: dict[str, Any] | None
    graph: dict[str, Any] | None = None
    check: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)
    why: str | None = None  # why its .grad is None, from the session's timeline (session/grad_why.py)
    history: list[tuple[int, float]] = field(default_factory=list)  # (step, value) of a number (timeline)
