"""Leaving `gradrepl --plain` on a real pseudo-terminal, as in IPython: exit and quit leave; Ctrl-D,
%reset and %restart ask y/N first, naming every name that would be lost."""

from __future__ import annotations

import os
import subprocess

import pytest
from conftest import GRADREPL
from test_plain_terminal import read_pty


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

    def until(self, marker: str) -> str:
        return read_pty(self.master, marker.encode()).decode(errors="replace")

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
    assert "Kernel restarted" in terminal.run("y", "[5]:")
    assert "NameError" in terminal.run("losses", "[6]:")
    terminal.run("w = torch.ones(1)", "[7]:")
    assert "Namespace emptied" in terminal.run("%reset -f", "[8]:")  # forced, as in IPython: no question
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
    said = terminal.run("%restart -f", "[2]:")
    assert "could not" in said and "kernel failed to start" in said, said
    scratch.mkdir()
    assert "A fresh kernel was started" in terminal.run("6 * 7", "[3]:")  # that step found no kernel
    assert "42" in terminal.run("6 * 7", "[4]:")
    terminal.type("exit\r")
    assert terminal.ended() == 0
