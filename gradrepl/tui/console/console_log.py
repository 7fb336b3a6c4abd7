"""The console's output log: each step as the learner typed it, then what it printed and returned."""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.widgets import RichLog

from gradrepl.kernel.protocol import StepResult
from gradrepl.textviews import display_text

PROMPT = ">>> "
CONTINUATION = "... "


class ConsoleLog(RichLog):
    """Append-only log of steps; learner text is always plain Text, never markup."""

    KEEP = 2000  # renderables kept for re-wrapping after a resize

    def __init__(self, **kwargs) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, auto_scroll=True, min_width=20, **kwargs)
        self._written: list = []
        self._wrapped_at = 0

    def _emit(self, content) -> None:
        self._written.append(content)
        del self._written[: -self.KEEP]
        self.write(content)

    def on_resize(self) -> None:
        # RichLog wraps once, at write time: re-wrap everything when the width changes.
        width = self.scrollable_content_region.width
        if width != self._wrapped_at and self._written:
            self._wrapped_at = width
            self.clear()
            for content in self._written:
                self.write(content)
        self._wrapped_at = width

    def write_source(self, source: str) -> None:
        """Echo a step's source with Python highlighting, prompts in the margin."""
        lines = source.splitlines() or [""]
        prompts = Text("\n".join([PROMPT] + [CONTINUATION] * (len(lines) - 1)), style="bold green")
        code = Syntax(source, "python", theme="ansi_dark", background_color="default", word_wrap=True)
        table = _side_by_side(prompts, code)
        self._emit(table)

    def write_result(self, result: StepResult) -> None:
        """Everything a step produced except its source, in reading order."""
        if result.stdout:
            self._emit(Text(result.stdout.rstrip("\n")))
        if result.stderr:
            self._emit(Text(result.stderr.rstrip("\n"), style="yellow"))
        if result.display:
            self._emit(Text(display_text(result.display).rstrip("\n")))
        if result.result is not None:
            self._emit(Text(result.result))
        if result.error is not None:
            self._emit(error_text(result.error.type, result.error.message, result.error.explanation))
        for note in result.notes:
            self._emit(Text.assemble(("note: ", "bold yellow"), (note, "yellow")))
        if result.kernel_event:
            self._emit(Text(result.kernel_event, style="bold magenta"))

    def write_notice(self, text: str, style: str = "dim") -> None:
        """A line from gradrepl itself (kernel restarted, reset, ...)."""
        self._emit(Text(text, style=style))


def error_text(kind: str, message: str, explanation: str | None) -> Group:
    """The error as Python names it, then the explanation in plain words."""
    parts = [Text.assemble((f"{kind}: ", "bold red"), (message, "red"))]
    if explanation:
        parts.append(Text.assemble(("why: ", "bold cyan"), (explanation, "cyan")))
    return Group(*parts)


def _side_by_side(prompts: Text, code: Syntax) -> Table:
    grid = Table.grid(padding=0)
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(prompts, code)
    return grid
