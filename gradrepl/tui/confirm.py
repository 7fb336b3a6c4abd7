"""A yes/no question over the screen, for actions that lose the learner's work."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class Confirm(ModalScreen[bool]):
    """Dismisses with True for "yes" (y, the Yes button, or a key of `also_yes`: the key that asked,
    pressed again), False for anything that says no."""

    DEFAULT_CSS = """
    Confirm { align: center middle; }
    #confirm { width: auto; max-width: 70; height: auto; border: thick $error; background: $surface; padding: 1 2; }
    #confirm-buttons { height: auto; margin-top: 1; }
    #confirm-buttons Button { margin-right: 2; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n,escape", "answer(False)", "No", show=False),
    ]

    def __init__(self, question: str, yes: str, also_yes: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.question = question
        self.yes = yes
        self.also_yes = also_yes

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm"):
            # Plain text: the question may carry learner names, never markup.
            yield Static(self.question, id="confirm-question", markup=False)
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes} (y)", variant="error", id="confirm-yes")
                yield Button("Cancel (n)", id="confirm-no")

    def on_mount(self) -> None:
        self.query_one("#confirm-no", Button).focus()

    def on_key(self, event: events.Key) -> None:
        if event.key in self.also_yes:
            event.stop()
            self.dismiss(True)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
