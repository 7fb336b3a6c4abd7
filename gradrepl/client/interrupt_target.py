"""Which step a SIGINT is meant for: one shared word between the client and its kernel.

A frontend that sends steps ahead (`gradrepl run`) may interrupt step N just as N
ends and N+1 starts; a bare SIGINT would then stop the wrong step. So the client
writes the step it aims at into a page both processes map (a memfd passed to the
kernel with its pipes) before it signals, and the kernel's SIGINT handler stops
its running step only if that is the one aimed at. 0 means whichever step runs.

The kernel runs learner code, so the page is made harmless to the client before it
is passed: sealed at one page (a shrunk page would kill the client with SIGBUS at
its next write, a grown one would hold memory no limit counts), sealed against
writes but through the client's own mapping where Linux can (5.1+), and passed as
a read-only descriptor that the kernel maps and closes at once.

This is the client's side; the kernel's is kernel/aimed_word.py, the word's layout
protocol/interrupt_word.py.
"""

from __future__ import annotations

import fcntl
import mmap
import os

from gradrepl.protocol.interrupt_word import PAGE, WORD

# No write() and no new writable mapping, for anyone; the client's mapping, made before, still writes.
F_SEAL_FUTURE_WRITE = getattr(fcntl, "F_SEAL_FUTURE_WRITE", 0x0010)
_SIZE_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW


class InterruptTarget:
    """The client's side of the shared word (`create`); `layer` says how it is protected, for doctor."""

    def __init__(self, page: mmap.mmap):
        self.page = page

    @classmethod
    def create(cls) -> tuple["InterruptTarget | None", int, dict]:
        """The client's side, the fd to pass to the kernel (close it once passed), and the
        `interrupt_page` layer ({"active", "detail"}). When the page cannot be made safe: no target,
        and /dev/null to pass, so the kernel takes every SIGINT as meant for it."""
        try:
            fd = os.memfd_create("gradrepl-interrupt", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        except (AttributeError, OSError) as exc:
            return None, _null(), _missing(f"no sealable memfd on this machine ({_why(exc)})")
        page = None
        try:
            os.ftruncate(fd, PAGE)
            page = mmap.mmap(fd, PAGE)  # before the seals: they forbid any writable mapping made later
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SIZE_SEALS)
            try:
                fcntl.fcntl(fd, fcntl.F_ADD_SEALS, F_SEAL_FUTURE_WRITE)
                writes = "no writes but the client's"
            except OSError:  # Linux before 5.1: the kernel maps it read-only and keeps no descriptor
                writes = "writable through a reopened descriptor (no F_SEAL_FUTURE_WRITE before Linux 5.1)"
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL)
            theirs = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            if page is not None:
                page.close()
            return None, _null(), _missing(f"the page could not be sealed or reopened read-only ({_why(exc)})")
        finally:
            os.close(fd)
        return cls(page), theirs, {"active": True, "detail": (
            f"sealed at one page (no shrink, no grow; {writes}); the kernel maps it read-only and "
            "keeps no descriptor of it")}

    def aim(self, step: int) -> None:
        WORD.pack_into(self.page, 0, step)

    def close(self) -> None:
        self.page.close()


def _null() -> int:
    return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)


def _missing(reason: str) -> dict:
    return {"active": False, "detail": f"missing: {reason}; every SIGINT stops whichever step runs"}


def _why(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or type(exc).__name__
