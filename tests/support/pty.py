"""`gradrepl --plain` on a real pseudo-terminal that is its controlling terminal, as in a terminal window:
Ctrl-C written to the pty is the terminal's SIGINT to its foreground process group."""

from __future__ import annotations

import fcntl
import os
import re
import select
import subprocess
import sys
import struct
import termios
import time
from pathlib import Path

# The installed command, as a learner starts it: `python -m gradrepl` finds gradrepl itself through the
# start folder before __main__ can take that folder off sys.path.
GRADREPL_COMMAND = str(Path(sys.executable).with_name("gradrepl"))


ESCAPES = re.compile(rb"\x1b(\[[0-9;?]*[ -/]*[@-~]|[@-Z\\-_])")


def screen_lines(data: bytes) -> list[str]:
    """What was written, as lines without escape sequences or carriage returns."""
    return ESCAPES.sub(b"", data).replace(b"\r", b"").decode(errors="replace").split("\n")


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


class PlainOnPty:
    """One `gradrepl --plain` (or, with ``plain=False``, `gradrepl ARGS`) with a pty as stdin/stdout/stderr
    and controlling terminal."""

    def __init__(self, *args: str, cwd: str | os.PathLike | None = None, env: dict[str, str] | None = None,
                 plain: bool = True):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))

        def take_terminal():
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.process = subprocess.Popen([GRADREPL_COMMAND, *(["--plain"] if plain else []), *args], stdin=slave, stdout=slave,
                                        stderr=slave, close_fds=True, start_new_session=True,
                                        preexec_fn=take_terminal, cwd=cwd, env=env)
        os.close(slave)
        self.seen = b""

    def read_until(self, marker: bytes, timeout: float = 180) -> bytes:
        """Everything read up to and including `marker` (a safety-net timeout, not a measurement)."""
        deadline = time.monotonic() + timeout
        while marker not in self.seen:
            assert time.monotonic() < deadline, f"no {marker!r} in {self.seen[-600:]!r}"
            if select.select([self.master], [], [], 0.2)[0]:
                try:
                    data = os.read(self.master, 65536)
                except OSError:
                    data = b""
                assert data, f"the terminal closed before {marker!r}: {self.seen[-600:]!r}"
                self.seen += data
        head, _, tail = self.seen.partition(marker)
        self.seen = tail
        return head + marker

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def prompt(self, step: int) -> bytes:
        """Everything up to the prompt of step `step` (the prompt is painted with escape codes after it)."""
        return self.read_until(f"[{step}]:".encode())

    def kernel_pid(self, banner: bytes) -> int:
        return int(banner.split(b"(pid ", 1)[1].split(b")", 1)[0])

    def zygote_pids(self, kernel_pid: int) -> list[int]:
        return [pid for pid in children(self.process.pid) if pid != kernel_pid]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=60)
        os.close(self.master)


def zygote_has_warmed(zygote_pid: int) -> bool:
    """Whether the idle zygote has imported worker.WARM_LATER up to torch._dynamo: dynamo loads
    numpy.random's mtrand extension, which nothing imported before it maps (checked for torch 2.13)."""
    try:
        return "mtrand" in Path(f"/proc/{zygote_pid}/maps").read_text()
    except OSError:
        return False


def wait_until(condition, what: str, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.2)


class PtyReader:
    """What a pty prints, read marker by marker: what came after a marker in the same read is kept for the
    next call (a prompt printed with the note before it would otherwise be lost to the next wait)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.rest = fd, b""

    def until(self, marker: bytes, timeout: float = 120) -> bytes:
        seen = self.rest + read_pty(self.fd, marker, timeout, already=self.rest)
        end = seen.index(marker) + len(marker)
        self.rest = seen[end:]
        return seen[:end]


def read_pty(fd: int, marker: bytes, timeout: float = 120, already: bytes = b"") -> bytes:
    """Read until `marker` is in what was read (after `already`, read before); what was read."""
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in already + seen:
        assert time.monotonic() < deadline, f"no {marker!r} in {(already + seen)[-400:]!r}"
        if select.select([fd], [], [], 0.2)[0]:
            seen += os.read(fd, 65536)
    return seen
