"""A script's or lesson's text read from a file, with the limits every such read has: a regular file
only (opened non-blocking, so a FIFO, device or socket is refused at once instead of waiting for
ever), at most MAX_SOURCE_BYTES, UTF-8. Both sides read through it: the frontend for a file named on
its own command line (scripts.read_source), the kernel for one named by `%run` in a session
(kernel/requests.py op_read_script), under its sandbox. Stdlib only; why a read failed is data (a
code and the names its words need: views/remarks.FILE_ERRORS)."""

from __future__ import annotations

import errno
import os
import stat

MAX_SOURCE_BYTES = 16 << 20   # a script, lesson or export bigger than this is refused, never read whole
# What a path is when it is no regular file: the code that says so.
_KINDS = ((stat.S_ISDIR, "is_folder"), (stat.S_ISFIFO, "is_fifo"), (stat.S_ISCHR, "is_device"),
          (stat.S_ISBLK, "is_device"), (stat.S_ISSOCK, "is_socket"))


class Unreadable(Exception):
    """Why `path` could not be read as text: a code of views/remarks.FILE_ERRORS and its names."""

    def __init__(self, code: str, **names):
        super().__init__(code)
        self.code, self.names = code, names
        self.oserror: OSError | None = None  # the OSError behind a "cannot_read", for the sandbox to explain


def read_text(path: str, limit: int = MAX_SOURCE_BYTES) -> str:
    """The text of the regular file at `path`, of at most `limit` bytes; raises Unreadable."""
    try:
        _regular(path, os.stat(path).st_mode)
        # O_NONBLOCK: a FIFO swapped in after the stat opens at once (no waiting for a writer), and is
        # refused by the fstat below; O_NOCTTY: a terminal never becomes the process's own.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise _unreadable(path, exc) from None
    with os.fdopen(fd, "rb") as handle:
        try:
            _regular(path, os.fstat(fd).st_mode)
            data = handle.read(limit + 1)
        except OSError as exc:
            raise _unreadable(path, exc) from None
    if len(data) > limit:
        raise Unreadable("too_large", path=path, limit_mib=limit >> 20)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable("not_utf8", path=path, at=exc.start, byte=f"{data[exc.start]:#04x}") from None


def _regular(path: str, mode: int) -> None:
    for test, code in _KINDS:
        if test(mode):
            raise Unreadable(code, path=path)
    if not stat.S_ISREG(mode):
        raise Unreadable("not_a_file", path=path)


def _unreadable(path: str, exc: OSError) -> Unreadable:
    if exc.errno == errno.ENOENT:
        return Unreadable("no_such_file", path=path)
    if exc.errno == errno.EISDIR:
        return Unreadable("is_folder", path=path)
    unreadable = Unreadable("cannot_read", path=path, why=exc.strerror or str(exc))
    unreadable.oserror = exc
    return unreadable
