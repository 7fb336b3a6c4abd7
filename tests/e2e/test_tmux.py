"""gradrepl in a real terminal: tmux types the first gradient, the screen must show it."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from tests.support.paths import ROOT
from tests.support.tmux import E2E, GRADREPL, Tmux, panel_row, tutor

pytestmark = E2E


def test_first_gradient_on_a_real_screen(tmp_path):
    term = tutor(tmp_path)
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
        assert "graph freed" in y_row  # its AddBackward0 is in the details: backward freed what it saved
        assert "idle" in screen
    finally:
        term.close()


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children first found through /proc)."""
    found, queue = [], [pid]
    while queue:
        parent = queue.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                continue
            found.extend(children)
            queue.extend(children)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def lines_with(screen: str, *words: str) -> list[str]:
    return [line for line in screen.splitlines() if any(word in line for word in words)]


PLACEHOLDER = "type torch code"
PASTED = """def g(x):
    return x.sum().backward()

def f(x):
    return g(x) + 1

f(torch.ones(2))
"""


@pytest.mark.parametrize("size", [(80, 24), (150, 45)])
def test_tab_a_pasted_block_and_a_nested_error_on_a_real_screen(tmp_path, size):
    term = tutor(tmp_path, *size)
    try:
        term.wait_for(lambda s: "idle" in s, "the kernel", timeout=60)
        term.type_then_pause("weights = torch.ones(2, requires_grad=True)")
        term.send("Enter")
        term.wait_for(lambda s: panel_row(s, "weights") is not None, "weights in the panel")
        term.type_then_pause("weights.requires_gr")
        term.send("Tab")
        # The menu and the input are painted apart: wait for the screen to hold both, then read it.
        screen = term.wait_for(lambda s: "requires_grad_" in s and lines_with(s, "weights.requires_grad "),
                               "the completion menu and the shared part typed in")
        print(f"\n--- {size} Tab on weights.requires_gr:\n" + screen)
        assert lines_with(screen, "weights.requires_grad ")  # the shared part went in at once
        assert lines_with(screen, "ƒ requires_grad_") and lines_with(screen, "· requires_grad ")
        term.send("Escape")
        term.wait_for(lambda s: "requires_grad_" not in s, "the menu to close")
        term.send("C-c")
        term.wait_for(lambda s: PLACEHOLDER in s, "Ctrl-C to clear the input")
        term.type_then_pause("torch.zeros_l")
        term.wait_for(lambda s: "torch.zeros_l" in s, "the typing")
        term.send("Tab")
        screen = term.wait_for(lambda s: "torch.zeros_like" in s, "the single match inline")
        assert not lines_with(screen, "ƒ zeros_like")  # one match: no menu
        term.send("C-c")
        term.wait_for(lambda s: PLACEHOLDER in s, "Ctrl-C to clear the input")
        term.paste(PASTED)
        screen = term.wait_for(lambda s: "RuntimeError" in s, "the error of the pasted call")
        print(f"--- {size} pasted block, nested error:\n" + screen)
        assert "IndentationError" not in screen
        both = screen
        for _ in range(2):  # the console scrolls from the keyboard; 80x24 shows a few lines a page
            before = term.screen()
            term.send("PageUp")
            # Read the page once it is painted, however slow the machine (at the top, it never changes).
            deadline = time.monotonic() + 30
            while (scrolled := term.screen()) == before and time.monotonic() < deadline:
                time.sleep(0.1)
            print(f"--- {size} after PageUp:\n" + scrolled)
            both += scrolled
        assert lines_with(both, "Cell In[3], line 2, in f") and lines_with(both, "Cell In[2], line 2, in g")
        assert lines_with(both, "----> 2 return x.sum().backward()")
        assert lines_with(both, "torch frames folded")
        # echoed as IPython does: the step's number, then its continuation lines under the code
        assert lines_with(both, "In [2]: def g(x):") and lines_with(both, "...     return g(x) + 1")
        assert "gradrepl/" not in both
    finally:
        term.close()


def test_the_first_frame_at_80x24_is_already_stacked(tmp_path):
    """Every frame from launch on has the panel under the console: the layout never flips."""
    term = tutor(tmp_path, 80, 24)
    try:
        frames: list[str] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (frames and "idle" in frames[-1]):
            screen = term.screen()
            if "console" in screen and (not frames or frames[-1] != screen):
                frames.append(screen)
        assert frames and "idle" in frames[-1]
        side_by_side = [frame for frame in frames if lines_with(frame, "console") == lines_with(frame, "tensors")]
        assert not side_by_side, side_by_side[0]
    finally:
        term.close()


@pytest.mark.parametrize("launch, ending", [
    ("make run", "kill-session"), ("setsid make run", "kill-session"),
    ("gradrepl", "kill-server"), ("setsid gradrepl", "kill-server")])
def test_a_killed_tmux_session_takes_tui_zygote_kernel_and_scratch_along(tmp_path, launch, ending):
    """Started in tmux, then the session or the whole server killed: nothing of gradrepl may stay.

    Under setsid there is no controlling terminal, so no SIGHUP: only the lost terminal tells.
    A killed server used to leave the TUI hanging in Textual's shutdown (its writer thread dead of EIO).
    """
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    start = f"make -C {ROOT} run" if launch.endswith("make run") else str(GRADREPL)
    command = f"setsid -w {start}" if launch.startswith("setsid") else start
    term = Tmux(command, {"GRADREPL_HOME": str(tmp_path / "home"), "TMPDIR": str(scratch),
                          "TERM": "xterm-256color"}, 80, 24)
    try:
        term.wait_for(lambda s: "idle" in s, "the kernel", timeout=90)
        term.type_then_pause("x = torch.ones(2)")
        term.send("Enter")
        term.wait_for(lambda s: panel_row(s, "x") is not None, "a step to run")
        processes = [term.pane_pid(), *descendants(term.pane_pid())]
        commands = [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode() for pid in processes]
        assert any("gradrepl.kernel.zygote" in command for command in commands), commands
        assert sum("gradrepl.kernel.zygote" in command for command in commands) >= 2  # zygote and its kernel
        assert any(path.name.startswith("gradrepl-scratch-") for path in scratch.iterdir())
        subprocess.run([*term.tmux, ending] + (["-t", term.name] if ending == "kill-session" else []), check=True)
        deadline = time.monotonic() + 15
        while any(alive(pid) for pid in processes) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = [pid for pid in processes if alive(pid)]
        for pid in left:
            os.kill(pid, 9)  # never leave them to the next test
        assert not left, f"still running after the terminal went: {left}"
        assert not [path for path in scratch.iterdir() if path.name.startswith("gradrepl-scratch-")]
    finally:
        term.close()
