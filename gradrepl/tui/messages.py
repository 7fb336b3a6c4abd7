"""Every message the TUI posts, in one place. Workers post them; handlers in app.py render them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from gradrepl.kernel.protocol import StepResult


@dataclass
class KernelStateChanged(Message):
    """The kernel went starting / idle / busy / dead / restarted."""

    state: str

    def can_replace(self, message: Message) -> bool:
        # Textual asks the older message whether the newer one may supersede it:
        # only the latest state matters before a paint, but a restart must be told.
        return isinstance(message, KernelStateChanged) and self.state != "restarted"


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


@dataclass
class StepStarted(Message):
    source: str


@dataclass
class StepFinished(Message):
    """A step came back from the kernel, errors included."""

    result: StepResult


@dataclass
class StepFailed(Message):
    """The session itself failed to run a step (no kernel); not a learner error."""

    source: str
    reason: str


@dataclass
class PanelUpdated(Message):
    """The tensor panel shows a step's rows: which names changed and which went away."""

    changed: list[str]
    removed: list[str]


@dataclass
class DetailsLoaded(Message):
    """Everything the details view shows about one tensor, fetched from the kernel."""

    name: str
    row: dict[str, Any] | None
    graph: dict[str, Any] | None = None
    check: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)
