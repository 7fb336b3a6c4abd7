"""Has the terminal gone away (closed window, dropped ssh, killed tmux)? Asked without reading input."""

from __future__ import annotations

import os
import select

_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL


def terminal_fds() -> list[int]:
    """The standard fds that are terminals now: the ones whose hang-up means the learner is gone."""
    fds = []
    for fd in (0, 1, 2):
        try:
            if os.isatty(fd):
                fds.append(fd)
        except OSError:
            continue
    return fds


def terminal_gone(fds: list[int]) -> bool:
    """True once any of `fds` has hung up (EOF/EIO to come). A poll, never a read: typing is not stolen."""
    if not fds:
        return False
    poller = select.poll()
    for fd in fds:
        poller.register(fd, 0)  # hang-up and errors are reported whatever the mask
    return any(revents & _GONE for _, revents in poller.poll(0))
