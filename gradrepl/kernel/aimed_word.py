"""The kernel's side of the interrupt word (client/interrupt_target.py says why it exists): the
page the client passed, mapped read-only, read by the SIGINT handler to know whether the step it
interrupts is the one aimed at."""

from __future__ import annotations

import mmap
import os

from gradrepl.protocol.interrupt_word import ANY_STEP, PAGE


class AimedWord:
    """The kernel's side: the word mapped read-only, with no descriptor left open."""

    def __init__(self, address: int):
        import ctypes

        self.word = ctypes.c_int64.from_address(address)  # interrupt_word.WORD

    @classmethod
    def attach(cls, fd: int) -> "AimedWord | None":
        """Map the page read-only and close `fd` (nothing of it stays to shrink, grow or reopen); None
        if it is no page (/dev/null). Learner code could still not aim elsewhere but by a write the seal
        refuses; where Linux has no such seal, that only makes Ctrl-C wait for the kill after the grace."""
        try:
            address = _map_read_only(fd)
            return cls(address) if address is not None else None
        finally:
            os.close(fd)

    def aimed_at(self, step: int | None) -> bool:
        target = self.word.value
        return target == ANY_STEP or target == step


def _map_read_only(fd: int) -> int | None:
    """A shared read-only mapping of one page of `fd` that outlives the fd (Python's mmap keeps a dup)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
    address = libc.mmap(None, PAGE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if address is None or address == ctypes.c_void_p(-1).value:
        return None
    return address
