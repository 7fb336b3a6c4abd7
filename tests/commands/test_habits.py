"""The command line as a learner meets it: check without a point, check where nothing can be compared,
trace's unknown names, run's Ctrl-C, exit codes in every --help, and quick answers that never import torch."""

from __future__ import annotations

import fcntl
import os
import re
import signal
import struct
import subprocess
import sys
import termios

import pytest
from tests.support.paths import GRADREPL, ROOT
from tests.support.pty import screen_lines
from tests.support.pty import read_pty

COMMANDS = ("run", "trace", "check", "lessons", "play", "lint", "learn", "quiz", "stats", "doctor")


def gradrepl(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*GRADREPL, *args], capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL, **kwargs)


@pytest.mark.parametrize("expr", ["1/x", "sqrt(x)"])
def test_check_exits_1_when_no_derivative_can_be_compared(expr):
    done = gradrepl("check", expr, "--at", "x=0")
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "nothing could be compared" in done.stderr


def test_check_without_a_point_prints_the_derivatives_and_says_which_point_to_give():
    done = gradrepl("check", "x**2 + 3*x")
    assert "d/dx = 2*x + 3" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 2 and "--at x=1" in done.stderr and "no value for x" not in done.stderr


def test_check_without_a_point_on_a_terminal_asks_for_one():
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen([*GRADREPL, "check", "x*y"], stdin=slave, stdout=slave, stderr=slave,
                               close_fds=True, start_new_session=True)
    os.close(slave)
    try:
        seen = read_pty(master, b"Enter to stop): ")
        assert b"d/dx = y" in seen and b"d/dy = x" in seen, seen
        os.write(master, b"x=2,y=3\r")
        table = read_pty(master, b"agree = within")
        assert process.wait(timeout=60) == 0
        assert any(line.startswith("d/dx") and "3" in line for line in screen_lines(table)), table
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(master)


def test_trace_of_an_unknown_name_lists_the_names_the_script_has(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("w = torch.ones(2, requires_grad=True)\nloss = (w * 2).sum()\n")
    done = gradrepl("trace", str(script), "nosuch")
    assert done.returncode == 2 and "w, loss" in done.stderr, done.stderr
    assert "%tensors" not in done.stderr


def test_run_stopped_by_ctrl_c_says_at_which_step(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text("import time\nx = 1\nfor i in range(600):\n    time.sleep(0.1)\ny = 2\n")
    marker = "── step 2 "
    process = subprocess.Popen([*GRADREPL, "run", str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        seen = ""
        while marker not in seen:
            line = process.stdout.readline()
            assert line, seen
            seen += line
        process.stdout.readline()  # `>>> x = 1`: step 3, the loop, is running from now on (or about to)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130
    assert "stopped by Ctrl-C at step 3 of 4" in err and "line 3" in err and "2 steps had finished" in err, err


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_help_gives_its_exit_codes(command):
    done = gradrepl(*([command] if command else []), "--help")
    assert done.returncode == 0
    words = " ".join(done.stdout.split())
    assert re.search(r"Exit status.*: 0 .*[;,] 2 ", words), words[-400:]  # every status in words, 0 and 2 at least


WRAPPER = """
import sys
from gradrepl import cli
from gradrepl.client import launch
real = launch.start_zygote_early
def recorded():
    open(sys.argv[1], "w").close()
    real()
launch.start_zygote_early = recorded
try:
    code = cli.main(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
print("imported:", sorted(name for name in ("torch", "sympy") if name in sys.modules), "exit:", code)
print("asyncio:", "asyncio" in sys.modules)
"""


@pytest.mark.parametrize("argv", [["--version"], ["check"], ["check", "x**2", "--at", "x=two"],
                                  ["check", "x**2", "--at", "x"], ["check", "x**2", "--at", "x=inf"],
                                  ["check", "x**2", "--at", "x=1,x=2"], ["lessons"]],
                         ids=["version", "check-no-expr", "check-bad-value", "check-bad-pair", "check-not-finite",
                              "check-given-twice", "lessons"])
def test_quick_answers_never_import_torch(argv, tmp_path):
    """No torch in this process, and no zygote launched (it would import torch in another)."""
    marker = tmp_path / "zygote-launched"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", WRAPPER, str(marker), *argv], capture_output=True, text=True,
                          env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert "imported: [] exit:" in done.stdout, (done.stdout, done.stderr)
    assert not marker.exists(), f"{argv} launched a zygote (torch imported): {done.stderr}"
    if argv in (["--version"], ["lessons"]):  # nothing to await: the event loop's import (~60 ms) is skipped too
        assert "asyncio: False" in done.stdout, done.stdout
