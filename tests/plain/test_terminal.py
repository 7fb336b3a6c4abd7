"""`gradrepl --plain` on a real pseudo-terminal: when the terminal goes away, nothing is left behind."""

import os
import subprocess
import time
from functools import partial
from pathlib import Path

import pytest
from tests.support.paths import GRADREPL
from tests.support.process import outlives
from tests.support.pty import read_pty


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def read_file(path: Path, marker: bytes, timeout: float = 120) -> bytes:
    deadline = time.monotonic() + timeout
    while marker not in path.read_bytes():
        assert time.monotonic() < deadline, f"no {marker!r} in {path.read_bytes()[-400:]!r}"
        time.sleep(0.1)
    return path.read_bytes()


@pytest.mark.timeout(300)  # two kernel starts on a loaded machine
@pytest.mark.parametrize("controlling", [True, False], ids=["hangup-signal", "input-ends"])
def test_a_lost_terminal_ends_the_repl_and_cleans_up(controlling, tmp_path):
    """With the pty as controlling terminal the REPL gets SIGHUP; without (and with its output going
    to a file, so no write fails either) only the end of its input (EOF, or EIO) tells it."""
    import fcntl
    import termios

    master, slave = os.openpty()

    def take_terminal():
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    log = open(tmp_path / "out.txt", "wb")
    output = slave if controlling else log
    repl = subprocess.Popen([*GRADREPL, "--plain"], stdin=slave, stdout=output, stderr=output, close_fds=True,
                            start_new_session=True, preexec_fn=take_terminal if controlling else None)
    log.close()
    read_until = partial(read_pty, master) if controlling else partial(read_file, tmp_path / "out.txt")
    os.close(slave)
    try:
        seen = read_until(b"[1]:")
        kernel_pid = int(seen.split(b"(pid ", 1)[1].split(b")", 1)[0])
        scratch = Path(os.readlink(f"/proc/{kernel_pid}/cwd"))
        zygotes = [pid for pid in children(repl.pid) if pid != kernel_pid]
        assert scratch.is_dir() and zygotes
        os.write(master, b"x = torch.ones(2)\r")
        read_until(b"[2]:")
    finally:
        os.close(master)  # the window closes
    assert repl.wait(timeout=30) is not None
    for pid in [kernel_pid, *zygotes]:
        assert not outlives(pid, 10), f"process {pid} outlived its terminal"
    assert not scratch.exists()


def test_eio_on_input_closes_it_instead_of_spinning():
    """prompt_toolkit's own reader takes EIO for "no data yet", so a prompt on a gone terminal would spin."""
    from prompt_toolkit.input.posix_utils import PosixStdinReader

    from gradrepl.plain.terminal import TerminalReader

    for reader_class, closes in ((PosixStdinReader, False), (TerminalReader, True)):
        ours, theirs = os.openpty()
        os.close(theirs)  # reading this end now fails with EIO
        try:
            reader = reader_class(ours)
            assert reader.read() == ""
            assert reader.closed is closes, reader_class
        finally:
            os.close(ours)
