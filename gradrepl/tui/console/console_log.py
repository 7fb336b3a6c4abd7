"""The console's output log: each step as the learner typed it, then what it printed and returned."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual.widgets import RichLog

from gradrepl.kernel.protocol import ErrorInfo, StepResult
from gradrepl.terminal_text import visible
from gradrepl.textviews import display_text
from gradrepl.tui.console.help_view import is_help
from gradrepl.tui.console.traceback_view import error_view

if TYPE_CHECKING:
    from rich.syntax import Syntax

PROMPT = ">>> "
CONTINUATION = "... "


class ConsoleLog(RichLog):
    """Append-only log of steps; learner text is always plain Text, never markup."""

    KEEP = 2000  # renderables kept for re-wrapping after a resize

    def __init__(self, **kwargs) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, auto_scroll=True, min_width=20, **kwargs)
        self._written: list = []
        self._wrapped_at = 0
        self.show_library_frames = False  # F9: torch's frames in every traceback, or folded
        self.has_library_frames = False  # some traceback in the log has frames F9 would open

    def _emit(self, content) -> None:
        self._written.append(content)
        del self._written[: -self.KEEP]
        self.write(self._renderable(content))

    def _renderable(self, content):
        # Errors are kept as ErrorInfo so F9 can draw them again with library frames open or folded.
        return error_view(content, self.show_library_frames) if isinstance(content, ErrorInfo) else content

    def on_resize(self) -> None:
        # RichLog wraps once, at write time: re-wrap everything when the width changes.
        width = self.scrollable_content_region.width
        if width != self._wrapped_at and self._written:
            self._wrapped_at = width
            self._write_again()
        self._wrapped_at = width

    def _write_again(self) -> None:
        self.clear()
        for content in self._written:
            self.write(self._renderable(content))

    def toggle_library_frames(self) -> None:
        """Open (or fold again) the library frames of every traceback in the log."""
        self.show_library_frames = not self.show_library_frames
        self._write_again()

    def write_source(self, source: str) -> None:
        """Echo a step's source with Python highlighting, prompts in the margin."""
        from rich.syntax import Syntax  # pygments, at the first step rather than before the first frame

        source = visible(source)  # typed (or pasted) by the learner
        lines = source.splitlines() or [""]
        prompts = Text("\n".join([PROMPT] + [CONTINUATION] * (len(lines) - 1)), style="bold green")
        code = Syntax(source, "python", theme="ansi_dark", background_color="default", word_wrap=True)
        table = _side_by_side(prompts, code)
        self._emit(table)

    def write_result(self, result: StepResult) -> None:
        """Everything a step produced except its source, in reading order (its text visible already:
        kernel text is made so where the client decodes it)."""
        if result.stdout:
            self._emit(Text(result.stdout.rstrip("\n")))
        if result.stderr:
            self._emit(Text(result.stderr.rstrip("\n"), style="yellow"))
        if is_help(result.display):  # the page itself opens in the help view
            self._emit(Text(f"help: {result.display.get('title', '')} (opened in the help view)", style="dim"))
        elif result.display:
            self._emit(Text(display_text(result.display).rstrip("\n")))
        if result.result is not None:
            self._emit(Text(result.result))
        if result.error is not None:
            self.has_library_frames |= any(frame["origin"] == "library" for frame in result.error.frames)
            self._emit(result.error)
        for note in result.notes:
            self._emit(Text.assemble(("note: ", "bold yellow"), (note, "yellow")))
        if result.kernel_event:
            self._emit(Text(result.kernel_event, style="bold magenta"))

    def write_notice(self, text: str, style: str = "dim") -> None:
        """A line from gradrepl itself (kernel restarted, reset, ...); it may quote the kernel or a lesson."""
        self._emit(Text(visible(text), style=style))


def _side_by_side(prompts: Text, code: Syntax) -> Table:
    grid = Table.grid(padding=0)
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(prompts, code)
    return grid
