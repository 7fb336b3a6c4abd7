"""The floor of any Textual TUI with gradrepl's chrome: a header, a log, an input and the footer, nothing else.

bench_tui times gradrepl against it side by side: from the command to its first frame, and from Enter to
the line echoed in the log (what gradrepl's Enter -> the panel's row is compared with).

Run: .venv/bin/python -m benchmarks.bare_textual
"""

from textual.app import App
from textual.widgets import Footer, Header, Input, RichLog

GREETING = "bare textual"  # on the first frame, in the log
ECHO = "echo: "  # the log's line for a submitted one


class Bare(App):
    TITLE = "bare"
    BINDINGS = [("ctrl+q", "quit", "Quit"), ("f2", "bell", "Bell")]

    def compose(self):
        yield Header()
        yield RichLog(id="log")
        yield Input(id="input")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(RichLog).write(GREETING)
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(RichLog).write(ECHO + event.value)
        event.input.clear()


if __name__ == "__main__":
    Bare().run()
