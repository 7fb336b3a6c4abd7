"""gradrepl in a real terminal: tmux types the first gradient, the screen must show it."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GRADREPL = ROOT / ".venv" / "bin" / "gradrepl"

pytestmark = [
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
        subprocess.run([*self.tmux, "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                        f"env {exports} {command}"], check=True)

    def send(self, *keys: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        self.send("-l", text)

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


def panel_row(screen: str, name: str) -> str | None:
    """The panel line for tensor `name`, whether the panel sits beside the console or below it."""
    for line in screen.splitlines():
        panel = line.split("││")[-1]
        if re.match(rf"^│?\s*●?\s*{re.escape(name)}\s", panel):
            return panel
    return None


def test_first_gradient_on_a_real_screen(tmp_path):
    term = Tmux(str(GRADREPL), {"GRADREPL_HOME": str(tmp_path), "TERM": "xterm-256color"})
    try:
        term.wait_for(lambda s: "console" in s and "tensors" in s, "the first frame", timeout=20)
        term.type("x = torch.tensor(2.0, requires_grad=True)")
        term.send("Enter")
        term.wait_for(lambda s: panel_row(s, "x") is not None, "x in the panel")
        term.type("y = x ** 2 + 3 * x")
        term.send("Enter")
        term.wait_for(lambda s: panel_row(s, "y") is not None, "y in the panel")
        term.type("y.backward()")
        term.send("Enter")
        screen = term.wait_for(lambda s: re.search(r"\b7\b", panel_row(s, "x") or "") is not None,
                               "x's grad to read 7")
        x_row = panel_row(screen, "x").split()
        y_row = panel_row(screen, "y")
        # name, req, leaf, grad_fn, .grad, value: x is a leaf that requires grad, its .grad is 7 and it is 2.
        assert x_row[x_row.index("x") + 1:x_row.index("x") + 6] == ["yes", "yes", "—", "7", "2"]
        assert "AddBackward0" in y_row
        assert "idle" in screen
    finally:
        term.close()
