"""`obj?`, `obj??` and `help(obj)`: the kernel's help page in a scrollable view over the console."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static



def is_help(display: object) -> bool:
    """True for a StepResult.display that is a help page, not a magic's text."""
    return isinstance(display, dict) and display.get("kind") == "help"


class HelpView(ModalScreen[None]):
    """The page under its title; arrows and PageUp/PageDown scroll, Escape or q closes."""

    DEFAULT_CSS = """
    HelpView { align: center middle; }
    #help { width: 95%; height: 90%; border: round $accent; background: $surface; }
    #help-title { height: 1; padding: 0 1; text-style: bold; background: $boost; }
    #help-page { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    #help-keys { height: 1; padding: 0 1; color: $text-muted; }
    """
    AUTO_FOCUS = "#help-page"  # focused once the page is composed: keys scroll it at once
    BINDINGS = [
        Binding("escape,q", "close", "Close", show=False),
        Binding("up", "scroll(-1)", show=False),
        Binding("down", "scroll(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown,space", "page(1)", show=False),
        Binding("home", "edge(False)", show=False),
        Binding("end", "edge(True)", show=False),
    ]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.page_title = title
        self.page_text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="help"):
            # The page is kernel text, made visible where the client decoded it; Text, never markup.
            yield Static(Text(self.page_title), id="help-title")
            with VerticalScroll(id="help-page"):
                yield Static(Text(self.page_text.rstrip("\n")), id="help-text")
            yield Static("↑↓ PgUp PgDn Home End scroll · Esc or q closes", id="help-keys")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_scroll(self, lines: int) -> None:
        self.query_one("#help-page", VerticalScroll).scroll_relative(y=lines, animate=False)

    def action_page(self, pages: int) -> None:
        page = self.query_one("#help-page", VerticalScroll)
        page.scroll_relative(y=pages * max(1, page.size.height - 1), animate=False)

    def action_edge(self, end: bool) -> None:
        page = self.query_one("#help-page", VerticalScroll)
        page.scroll_end(animate=False) if end else page.scroll_home(animate=False)
