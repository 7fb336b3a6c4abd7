"""One line of kernel facts: state (with elapsed time while busy), sandbox layers, last step time."""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.widgets import Static

STATE_WORDS = {
    "starting": ("◌ warming up (importing torch)", "yellow"),
    "idle": ("● idle", "green"),
    "busy": ("◐ busy", "bold yellow"),
    "dead": ("✕ kernel stopped", "bold red"),
    "failed": ("✕ kernel failed to start", "bold red"),
}


class StatusBar(Static):
    """Rendered from plain fields, once a frame, so the app can update it cheaply on a timer."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.state = "starting"
        self.busy_since: float | None = None
        self.sandbox: dict[str, dict[str, Any]] = {}
        self.last_step_ms: float | None = None
        self.queued = 0
        self.fresh_kernel = False

    def on_mount(self) -> None:
        self.state = getattr(self.app, "kernel_state", self.state)  # a change that came before this bar
        self.refresh_text()

    def note_restart(self) -> None:
        """A fresh kernel: said beside the state until the next step runs."""
        self.fresh_kernel = True
        self.refresh_text()

    def set_state(self, state: str) -> None:
        """Show `state` (a KernelState, or "failed" when the kernel could not start)."""
        if state == "busy":
            self.fresh_kernel = False
        if state == "busy" and self.state != "busy":
            self.busy_since = time.monotonic()
        elif state != "busy":
            self.busy_since = None
        self.state = state
        self.refresh_text()

    def set_sandbox(self, sandbox: dict[str, dict[str, Any]]) -> None:
        self.sandbox = sandbox
        # Text, not a str: Textual would read a str tooltip as markup.
        self.tooltip = Text("\n".join(
            f"{'✓' if layer.get('active') else '✗'} {name}: {layer.get('detail', '')}" for name, layer in sandbox.items()
        )) if sandbox else None
        self.refresh_text()

    def refresh_text(self) -> None:
        # Drawn from the fields at the next frame: a step changes them five or six times before it, and
        # each update() would make the line's text again. One line high (app.tcss): no layout.
        self.refresh()

    def render(self) -> Text:
        return self.render_text()

    def render_text(self) -> Text:
        """The status line as Text (also used by tests)."""
        words, style = STATE_WORDS.get(self.state, (self.state, ""))
        text = Text(words, style=style)
        if self.fresh_kernel:
            text.append(" · restarted: fresh kernel", style="magenta")
        if self.busy_since is not None:
            text.append(f" {time.monotonic() - self.busy_since:.1f} s", style=style)
        if self.queued:
            text.append(f" · {self.queued} queued", style="yellow")
        if self.sandbox:
            active = sum(1 for layer in self.sandbox.values() if layer.get("active"))
            text.append(f"  │  sandbox {active}/{len(self.sandbox)} layers", style="dim" if active else "red")
        if self.last_step_ms is not None:
            text.append(f"  │  last step {self.last_step_ms:.1f} ms", style="dim")
        return text
