"""The completion menu over the input: narrows as you type, shows the highlighted item's kind or signature.

Candidates come from the kernel once per Tab; narrowing is done here, on the words the
learner keeps typing, so the menu follows every key without asking the kernel again.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Offset
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from gradrepl.protocol.messages import Completion

SHOWN_ROWS = 8  # as ptpython: enough to choose from, never the whole screen
MIN_WIDTH, MAX_WIDTH = 36, 60
KIND_MARKS = {"function": "ƒ", "class": "C", "module": "M", "instance": "·", "keyword": "k",
              "statement": "=", "param": "p", "property": "p", "path": "/"}


def narrowed(completions: list[Completion], word: str) -> list[Completion]:
    """The candidates that still fit `word`: those starting with it (exact case first), then the rest."""
    lowered = word.lower()
    fits = [c for c in completions if c.text.lower().startswith(lowered)]
    return sorted(fits, key=lambda c: not c.text.startswith(word))


class CompletionMenu(Vertical):
    """An overlay list under (or over) the cursor; the input keeps the focus and drives it."""

    DEFAULT_CSS = """
    CompletionMenu {
        overlay: screen;
        position: absolute;
        constrain: inside inside;
        display: none;
        width: 32;
        height: auto;
        background: $surface;
        border: round $accent;
        padding: 0;
    }
    CompletionMenu OptionList {
        height: auto;
        max-height: 8;
        border: none;
        padding: 0;
        background: $surface;
        scrollbar-size-vertical: 1;
    }
    CompletionMenu #completion-detail {
        height: 3;  /* the rule and two lines of signature */
        color: $text-muted;
        border-top: solid $panel;
        padding: 0 1;
    }
    """

    def __init__(self) -> None:
        super().__init__(id="completion-menu")
        self.completions: list[Completion] = []  # everything the kernel offered for this Tab
        self.shown: list[Completion] = []  # what still fits the typed word
        self.start = 0  # where the replaced word begins in the input's text

    def compose(self) -> ComposeResult:
        options = OptionList(id="completion-options")
        options.can_focus = False
        yield options
        yield Static(id="completion-detail", markup=False)

    @property
    def is_open(self) -> bool:
        return self.display

    def open(self, completions: list[Completion], start: int, word: str, cursor: Offset) -> None:
        """Show `completions` narrowed to `word`, placed by the cursor's screen `cursor` offset."""
        self.completions, self.start = completions, start
        self.narrow(word)
        if not self.shown:
            return
        self.display = True
        self._place(cursor)

    def narrow(self, word: str) -> None:
        """Keep the candidates fitting `word`; the menu closes when none are left."""
        self.shown = narrowed(self.completions, word)
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(_label(c, len(word))) for c in self.shown])
        if not self.shown:
            self.close()
            return
        options.highlighted = 0
        self._describe()

    def move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if self.shown:
            options.highlighted = ((options.highlighted or 0) + step) % len(self.shown)
            self._describe()

    def chosen(self) -> Completion | None:
        highlighted = self.query_one(OptionList).highlighted
        return self.shown[highlighted] if self.shown and highlighted is not None else None

    def close(self) -> None:
        self.display = False
        self.completions, self.shown = [], []

    def _describe(self) -> None:
        chosen = self.chosen()
        detail = self.query_one("#completion-detail", Static)
        if chosen is None:
            detail.update("")
            return
        detail.update(Text.assemble((chosen.kind, "italic"), "  ", chosen.signature or ""))

    def _place(self, cursor: Offset) -> None:
        # Below the cursor when it fits, else above it (the input sits low in the console).
        # As wide as the longest name (the signature wraps inside), never wider than the screen.
        longest = max(len(c.text) for c in self.shown)
        self.styles.width = max(MIN_WIDTH, min(longest + 6, MAX_WIDTH, self.screen.size.width))
        height = min(len(self.shown), SHOWN_ROWS) + 5  # rows, two detail lines, their rule, the border
        screen_height = self.screen.size.height
        below = cursor.y + 1
        y = below if below + height <= screen_height else max(0, cursor.y - height)
        self.styles.offset = (max(0, cursor.x - 2), y)


def _label(completion: Completion, typed: int) -> Text:
    mark = KIND_MARKS.get(completion.kind, "?")
    return Text.assemble((f"{mark} ", "dim"), (completion.text[:typed], "bold"), completion.text[typed:])
