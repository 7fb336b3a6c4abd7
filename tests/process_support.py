"""What the kernel-process tests share: whether a process still runs, and a bounded wait for it to go."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def outlives(pid: int, seconds: float = 10) -> bool:
    """Whether `pid` still runs after `seconds`; a survivor is SIGKILLed so no test leaves it behind."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and running(pid):
        time.sleep(0.02)
    still = running(pid)
    if still:
        os.kill(pid, signal.SIGKILL)
    return still
