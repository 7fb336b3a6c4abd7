"""What the kernel-process tests share: whether a process still runs, the CPU time it used, and a bounded wait
for it to go."""

from __future__ import annotations

import json
import os
import signal
import traceback
import time
from pathlib import Path


def _stat(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the name (which may hold spaces and parentheses): state first."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped does not count)."""
    try:
        state = _stat(pid)[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def cpu_seconds(pid: int) -> float:
    """The CPU time `pid` has used so far, user and system, all its threads."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def outlives(pid: int, seconds: float = 10) -> bool:
    """Whether `pid` still runs after `seconds`; a survivor is SIGKILLed so no test leaves it behind."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and running(pid):
        time.sleep(0.02)
    still = running(pid)
    if still:
        os.kill(pid, signal.SIGKILL)
    return still


def run_in_fork(action):
    """Run ``action`` in a forked child (a sandbox applied there stays there) and return its JSON-ready
    value; the child's traceback, or its death without a word, fails the test."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            payload = {"value": action()}
        except BaseException:  # noqa: BLE001 - the parent shows the child's traceback
            payload = {"crash": traceback.format_exc()}
        with os.fdopen(write_fd, "w") as pipe:
            json.dump(payload, pipe)
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        text = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert text, f"forked child died without a word (status {status})"
    payload = json.loads(text)
    assert "crash" not in payload, payload["crash"]
    return payload["value"]
