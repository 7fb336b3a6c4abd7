"""Ctrl-R: search the input history as you type, newest first; Enter takes the highlighted entry."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from gradrepl.history import History

SHOWN = 200  # matches listed at once; the newest are the ones wanted


class HistorySearch(ModalScreen[str | None]):
    """A search box over the history; dismisses with the chosen entry, or None on Escape."""

    DEFAULT_CSS = """
    HistorySearch { align: center bottom; }
    #history-search { width: 100%; max-width: 100; height: auto; max-height: 80%; border: round $accent;
                      background: $surface; }
    #history-search-help { color: $text-muted; padding: 0 1; }
    #history-search-matches { height: auto; max-height: 16; border: none; }
    """
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("ctrl+r,down", "older", "Older match", show=False),
        Binding("up", "newer", "Newer match", show=False),
    ]

    def __init__(self, history: History, query: str = "") -> None:
        super().__init__()
        self.history = history
        self.query_text = query
        self.found: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="history-search"):
            yield Static("history search · type to narrow · ↑↓ or Ctrl-R to move · Enter takes it · Esc cancels",
                         id="history-search-help")
            yield OptionList(id="history-search-matches")
            yield Input(self.query_text, placeholder="search history", id="history-search-query")

    def on_mount(self) -> None:
        self._refill(self.query_text)
        self.query_one(Input).focus()

    @on(Input.Changed)
    def _query_changed(self, event: Input.Changed) -> None:
        self._refill(event.value)

    def _refill(self, query: str) -> None:
        self.found = self.history.search(query)[:SHOWN]
        matches = self.query_one(OptionList)
        matches.clear_options()
        # One line per entry: a block shows its first line and how many more follow.
        matches.add_options([Option(_one_line(entry)) for entry in self.found])
        if self.found:
            matches.highlighted = 0

    def action_older(self) -> None:
        self._move(1)

    def action_newer(self) -> None:
        self._move(-1)

    def _move(self, step: int) -> None:
        matches = self.query_one(OptionList)
        if self.found:
            current = matches.highlighted or 0
            matches.highlighted = max(0, min(len(self.found) - 1, current + step))

    @on(Input.Submitted)
    def _take(self) -> None:
        highlighted = self.query_one(OptionList).highlighted
        self.dismiss(self.found[highlighted] if self.found and highlighted is not None else None)

    @on(OptionList.OptionSelected)
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.found[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)


def _one_line(entry: str) -> Text:
    lines = entry.splitlines() or [""]
    text = Text(lines[0])
    if len(lines) > 1:
        text.append(f"  (+{len(lines) - 1} lines)", style="dim")
    return text
