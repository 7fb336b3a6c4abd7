"""The scratch folder's life: made with its owner's pid, removed when that owner is gone.

A frontend killed by any signal cannot clean up after itself, so two things do it:
a janitor process (started by the zygote, outside its namespaces, in a session of
its own) that waits for the zygote to end and then removes scratch, and every start,
which removes scratch folders whose owner pid no longer runs.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile

PREFIX = "gradrepl-scratch-"
_NAME = re.compile(re.escape(PREFIX) + r"(\d+)-\w+")


def make() -> str:
    """A new scratch folder named after this process, after removing folders of dead owners."""
    clean_stale()
    return tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")


def clean_stale(folder: str | None = None) -> list[str]:
    """Remove our scratch folders whose owner pid is gone; returns what was removed."""
    folder = folder or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        match = _NAME.fullmatch(name)
        path = os.path.join(folder, name)
        try:
            ours = os.lstat(path).st_uid == os.getuid()
        except OSError:
            continue
        if match and ours and not _alive(int(match.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_janitor(folder: str) -> int:
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
    from gradrepl.kernel.sandbox import threads  # loaded already: the janitor is forked from the zygote

    threads.sweep_after_exit()  # the pids cgroups of its kernels, which die with it
    os._exit(0)
