"""Which step a SIGINT is meant for: one shared word between the client and its kernel.

A frontend that sends steps ahead (`gradrepl run`) may interrupt step N just as N
ends and N+1 starts; a bare SIGINT would then stop the wrong step. So the client
writes the step it aims at into a page both processes map (a memfd passed to the
kernel with its pipes) before it signals, and the kernel's SIGINT handler stops
its running step only if that is the one aimed at. 0 means whichever step runs.

Both sides use this module; it imports nothing heavy.
"""

from __future__ import annotations

import mmap
import os
import struct

ANY_STEP = 0
_WORD = struct.Struct("<q")


class InterruptTarget:
    """The shared word, as the client (`create`) or the kernel (`attach`) maps it."""

    def __init__(self, page: mmap.mmap):
        self.page = page

    @classmethod
    def create(cls) -> tuple["InterruptTarget | None", int]:
        """The client's side, and the fd to pass to the kernel (close it once passed). Without
        memfd: no target, and /dev/null to pass, so the kernel takes every SIGINT as meant for it."""
        try:
            fd = os.memfd_create("gradrepl-interrupt", os.MFD_CLOEXEC)
            os.ftruncate(fd, mmap.PAGESIZE)
            return cls(mmap.mmap(fd, mmap.PAGESIZE)), fd
        except (AttributeError, OSError):
            return None, os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)

    @classmethod
    def attach(cls, fd: int) -> "InterruptTarget | None":
        """The kernel's side (closes `fd`); None if it is no page to map (/dev/null). Learner code
        could remap it and aim elsewhere: that only makes Ctrl-C wait for the kill after the grace."""
        try:
            return cls(mmap.mmap(fd, mmap.PAGESIZE, prot=mmap.PROT_READ))
        except (OSError, ValueError):
            return None
        finally:
            os.close(fd)

    def aim(self, step: int) -> None:
        _WORD.pack_into(self.page, 0, step)

    def aimed_at(self, step: int | None) -> bool:
        target = _WORD.unpack_from(self.page, 0)[0]
        return target == ANY_STEP or target == step

    def close(self) -> None:
        self.page.close()
