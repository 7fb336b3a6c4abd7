"""gradrepl in a real terminal: a private tmux server of a fixed size, and the panel's row for a name on its screen."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import uuid

import pytest

from tests.support.paths import ROOT

GRADREPL = ROOT / ".venv" / "bin" / "gradrepl"


E2E = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not GRADREPL.exists(), reason="the gradrepl script is not installed in .venv"),
]


class Tmux:
    """One detached tmux session of a fixed size, on a private server no other test can touch."""

    def __init__(self, command: str, env: dict[str, str], width: int = 150, height: int = 45) -> None:
        self.name = f"gradrepl-e2e-{uuid.uuid4().hex[:8]}"
        self.tmux = ["tmux", "-L", self.name]
        exports = " ".join(f"{key}={value}" for key, value in env.items())
        # COLUMNS/LINES inherited from the test process would override the pane's real size.
        subprocess.run([*self.tmux, "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                        f"env -u COLUMNS -u LINES {exports} {command}"], check=True)

    def send(self, *keys: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        self.send("-l", text)

    def type_then_pause(self, text: str) -> None:
        """Type `text` and wait, so the next key reads as a keypress: keys sent together look like a paste."""
        self.type(text)
        time.sleep(0.3)

    def paste(self, text: str) -> None:
        """Paste as a terminal without bracketed paste does (no -p): the text arrives as keys, Enter for newline."""
        subprocess.run([*self.tmux, "load-buffer", "-b", "pasted", "-"], input=text, text=True, check=True)
        subprocess.run([*self.tmux, "paste-buffer", "-b", "pasted", "-t", self.name], check=True)

    def pane_pid(self) -> int:
        return int(subprocess.run([*self.tmux, "display-message", "-p", "-t", self.name, "#{pane_pid}"],
                                  check=True, capture_output=True, text=True).stdout)


    def screen(self) -> str:
        return subprocess.run([*self.tmux, "capture-pane", "-p", "-t", self.name],
                              check=True, capture_output=True, text=True).stdout

    def wait_for(self, predicate, what: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if predicate(screen):
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}; screen was:\n{screen}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], check=False, capture_output=True)


def tutor(home, width: int = 150, height: int = 45) -> Tmux:
    """gradrepl's TUI in a pane of that size, with `home` (a test's own folder) as its GRADREPL_HOME."""
    return Tmux(str(GRADREPL), {"GRADREPL_HOME": str(home), "TERM": "xterm-256color"}, width, height)


def panel_row(screen: str, name: str) -> str | None:
    """The panel line for tensor `name`, whether the panel sits beside the console or below it."""
    for line in screen.splitlines():
        panel = line.split("││")[-1]
        if re.match(rf"^│?\s*●?\s*{re.escape(name)}\s", panel):
            return panel
    return None
