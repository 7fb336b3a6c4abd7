"""Leaving `gradrepl --plain` on a real pseudo-terminal, as in IPython: exit and quit leave; Ctrl-D,
%reset and %restart ask y/N first, naming every name that would be lost."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from tests.support.paths import GRADREPL
from tests.support.pty import PtyReader


class Terminal:
    """`gradrepl --plain` on a pty that is its controlling terminal; what it printed is kept."""

    def __init__(self):
        import fcntl
        import termios

        self.master, slave = os.openpty()

        def take_terminal():
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.process = subprocess.Popen([*GRADREPL, "--plain"], stdin=slave, stdout=slave, stderr=slave,
                                        close_fds=True, start_new_session=True, preexec_fn=take_terminal)
        os.close(slave)
        self.reader = PtyReader(self.master)

    def until(self, marker: str) -> str:
        return self.reader.until(marker.encode()).decode(errors="replace")

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def run(self, line: str, prompt: str) -> str:
        self.type(line + "\r")
        return self.until(prompt)

    def ended(self) -> int:
        status = self.process.wait(timeout=60)
        os.close(self.master)
        return status

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        try:
            os.close(self.master)
        except OSError:
            pass


@pytest.fixture
def terminal():
    term = Terminal()
    yield term
    term.close()


@pytest.mark.timeout(300)
def test_ctrl_d_reset_and_restart_ask_and_no_keeps_everything(terminal):
    terminal.until("[1]:")
    terminal.run("model = nn.Linear(2, 1)", "[2]:")
    terminal.run("losses = [0.5]", "[3]:")
    terminal.type("\x04")  # Ctrl-D on the empty line
    asked = terminal.until("Quit? [y/N]")
    assert "Leave gradrepl?" in asked and "model, losses" in asked, asked
    terminal.run("n", "[3]:")
    for magic, yes in (("%reset", "Reset? [y/N]"), ("%restart", "Restart? [y/N]")):
        terminal.type(magic + "\r")
        assert "model, losses" in terminal.until(yes)
        assert "Nothing was changed." in terminal.run("n", "[3]:")
    assert "[0.5]" in terminal.run("print(losses)", "[4]:")
    terminal.type("%restart\r")
    terminal.until("Restart? [y/N]")
    assert "Kernel restarted" in terminal.run("y", "In [1]:")  # a fresh kernel numbers from 1, as Jupyter's
    assert "NameError" in terminal.run("losses", "In [2]:")
    terminal.run("w = torch.ones(1)", "In [3]:")
    terminal.type("%reset -f\r")  # forced, as in IPython: no question; a point in the timeline, so numbered
    terminal.until("Namespace emptied")
    terminal.until("In [4]:")
    terminal.type("exit()\r")
    assert terminal.ended() == 0


@pytest.mark.timeout(300)
@pytest.mark.parametrize("leave", ["quit\r", "exit\r", "\x04\x04"], ids=["quit", "exit", "ctrl-d-twice"])
def test_exit_quit_and_ctrl_d_twice_leave(terminal, leave):
    terminal.until("[1]:")
    terminal.run("x = torch.ones(2)", "[2]:")
    if leave == "\x04\x04":
        terminal.type("\x04")
        terminal.until("Quit? [y/N]")
        terminal.type("\x04")
    else:
        terminal.type(leave)
    assert terminal.ended() == 0


@pytest.mark.timeout(300)
def test_a_restart_that_fails_is_said_and_the_repl_goes_on(terminal):
    """The scratch folder is removed from under the tutor (a tmp cleaner), so %restart's fresh kernel
    cannot start: the REPL says so and stays; once the folder is back, the next step starts a kernel."""
    import shutil
    from pathlib import Path

    seen = terminal.until("[1]:")
    kernel_pid = int(seen.split("(pid ", 1)[1].split(")", 1)[0])
    scratch = Path(os.readlink(f"/proc/{kernel_pid}/cwd"))
    shutil.rmtree(scratch)
    terminal.type("%restart -f\r")  # takes no step number
    said = terminal.until("kernel failed to start")
    assert "could not" in said, said
    terminal.until("In [1]:")
    scratch.mkdir()
    said = terminal.run("6 * 7", "Steps count from In [1] again.")  # that step found no kernel
    assert "A fresh kernel was started" in said, said
    terminal.until("In [1]:")
    assert "42" in terminal.run("6 * 7", "In [2]:")
    terminal.type("exit\r")
    assert terminal.ended() == 0


@pytest.mark.timeout(300)
def test_ctrl_c_that_kills_the_kernel_says_it_once_and_numbers_from_one(terminal):
    """A step that ignores Ctrl-C is killed after the grace: the loss said once, the fresh kernel's steps
    from In [1], and neither %tensors nor %at shows the old kernel's tensors (issue 23 §1)."""
    import time

    terminal.until("[1]:")
    terminal.run("a = torch.ones(2)", "[2]:")
    terminal.type("import ctypes, signal; signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT]); "
                  "ctypes.CDLL(None).sleep(600)\r")
    terminal.until("running In [2]")  # the busy line: the step runs
    time.sleep(0.5)
    terminal.type("\x03")  # the terminal's Ctrl-C: SIGINT to gradrepl's process group, never the kernel's
    said = " ".join(terminal.until("removed: a").split())  # the note's lines wrapped to 80 columns
    assert said.count("did not stop within") == 1 and "Steps count from In [1] again." in said, said
    terminal.until("In [1]:")
    terminal.run("b = torch.ones(1)", "In [2]:")
    terminal.type("%tensors\r%at 1\r")
    shown = terminal.run("print('both' + ' shown')", "both shown")  # the prompt is redrawn before output
    rows = re.findall(r"^[* ] (\w+) ", shown, re.M)  # the tables' rows, by name
    assert [row for row in rows if row != "name"] == ["b", "b"] and "after step 1 of 1" in shown, shown
    terminal.type("exit\r")
    assert terminal.ended() == 0
