"""The scratch janitor: a process outside the kernels' namespaces that removes scratch (and the
kernels' pids cgroups) once the zygote that started it is gone, however it died (host/scratch.py)."""

from __future__ import annotations

import os
import shutil
import signal

from gradrepl.host import cgroups


def start(folder: str) -> int:
    """Start the janitor for ``folder``; returns the fd whose closing (by any death) sets it off.

    The janitor is a grandchild (no one's child to reap), ignores the terminal's signals,
    and holds nothing but the read end of that pipe.
    """
    read_fd, write_fd = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            if os.fork() == 0:
                _janitor(folder, read_fd)
        finally:
            os._exit(0)
    os.close(read_fd)
    os.waitpid(child, 0)
    return write_fd


def _janitor(folder: str, read_fd: int) -> None:
    os.setsid()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, read_fd)
    os.closerange(read_fd + 1, 1 << 16)
    while True:
        try:
            if not os.read(read_fd, 64):
                break
        except InterruptedError:
            continue
    shutil.rmtree(folder, ignore_errors=True)
    cgroups.sweep_after_exit()  # the pids cgroups of its kernels, which die with it
    os._exit(0)
