"""The console's output log: each step as the learner typed it, then what it printed and returned."""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.widgets import RichLog

from gradrepl.kernel.protocol import StepResult

PROMPT = ">>> "
CONTINUATION = "... "


class ConsoleLog(RichLog):
    """Append-only log of steps; learner text is always plain Text, never markup."""

    def __init__(self, **kwargs) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, auto_scroll=True, **kwargs)

    def write_source(self, source: str, pending: bool = False) -> None:
        """Echo a step's source with Python highlighting (dimmed while it waits its turn)."""
        lines = source.splitlines() or [""]
        prompts = Text("\n".join([PROMPT] + [CONTINUATION] * (len(lines) - 1)), style="bold green")
        code = Syntax(source, "python", theme="ansi_dark", background_color="default", word_wrap=True)
        table = _side_by_side(prompts, code)
        self.write(table)
        if pending:
            self.write(Text("  (queued: runs when the kernel is ready)", style="dim italic"))

    def write_result(self, result: StepResult) -> None:
        """Everything a step produced except its source, in reading order."""
        if result.stdout:
            self.write(Text(result.stdout.rstrip("\n")))
        if result.stderr:
            self.write(Text(result.stderr.rstrip("\n"), style="yellow"))
        if result.display:
            self.write(Text(result.display.rstrip("\n")))
        if result.result is not None:
            self.write(Text(result.result))
        if result.error is not None:
            self.write(error_text(result.error.type, result.error.message, result.error.explanation))
        for note in result.notes:
            self.write(Text.assemble(("note: ", "bold yellow"), (note, "yellow")))
        if result.kernel_event:
            self.write(Text(result.kernel_event, style="bold magenta"))

    def write_notice(self, text: str, style: str = "dim") -> None:
        """A line from gradrepl itself (kernel restarted, reset, ...)."""
        self.write(Text(text, style=style))


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
