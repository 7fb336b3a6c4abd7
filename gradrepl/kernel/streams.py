"""The learner's stdout and stderr in a kernel: capped per step, and ended by the step's sentinel.

The pipes behind fds 1 and 2 reach the client (client/pipes.py's OutputPipe), which cuts them
into steps at the sentinels (protocol/messages.output_sentinel).
"""

from __future__ import annotations

import ctypes
import io
import os
import sys

from gradrepl.protocol import messages as protocol

_libc = ctypes.CDLL(None)


class CappedStream(io.TextIOBase):
    """sys.stdout/sys.stderr for learner code: passes text to the fd until the per-step cap."""

    def __init__(self, fd: int):
        self._fd = fd
        self.written = 0
        self.dropped = 0

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return "utf-8"

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        data = str(text).encode("utf-8", "replace")
        room = protocol.OUTPUT_CAP - self.written
        if room > 0:
            write_all(self._fd, data[:room])
        self.written += min(len(data), max(room, 0))
        self.dropped += max(len(data) - max(room, 0), 0)
        return len(text)

    def new_step(self) -> None:
        self.written = self.dropped = 0


class NoInput(io.TextIOBase):
    """input() has no terminal to read from in a kernel: say so instead of hanging."""

    def readable(self) -> bool:
        return True

    def readline(self, size: int = -1) -> str:
        raise RuntimeError("input() is not available in gradrepl: assign the value in code instead")

    read = readline


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def end_output(nonce: str, step: int, streams: tuple[CappedStream, CappedStream], notes: list) -> None:
    """Flush every layer of output, then mark the end of this step's output on both pipes; a stream
    that was cut says so in `notes` (a remark: views/remarks.py words it)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    _libc.fflush(None)  # C++ code printing through stdio
    for name, stream in zip(("stdout", "stderr"), streams):
        if stream.dropped:
            notes.append({"code": "stream_truncated", "names": {
                "stream": name, "dropped": stream.dropped, "limit_kib": protocol.OUTPUT_CAP // 1024}})
    sentinel = protocol.output_sentinel(nonce, step)
    for fd in (1, 2):
        try:
            write_all(fd, sentinel)
        except OSError:
            pass
