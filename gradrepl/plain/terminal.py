"""The plain REPL notices when its terminal goes away (a closed window, a dropped ssh, a killed tmux)."""

from __future__ import annotations

import errno
import os
import select
import sys

from prompt_toolkit.input import create_input
from prompt_toolkit.input.posix_utils import PosixStdinReader


class TerminalReader(PosixStdinReader):
    """prompt_toolkit's stdin reader, except that EIO (the terminal is gone) closes the input.

    prompt_toolkit treats any OSError as "no data yet", so on a hung-up terminal the
    fd stays readable and the prompt spins at full CPU forever instead of ending.
    """

    def read(self, count: int = 1024) -> str:
        if self.closed:
            return ""
        try:
            if not select.select([self.stdin_fd], [], [], 0)[0]:
                return ""
            data = os.read(self.stdin_fd, count)
        except InterruptedError:
            return ""
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                return ""
            data = b""  # EIO, EBADF: nothing will ever come
        if not data:
            self.closed = True
            return ""
        return self._stdin_decoder.decode(data)


def terminal_input():
    """The prompt's input: stdin, with a reader that ends the prompt when the terminal goes away."""
    stdin_input = create_input()
    reader = getattr(stdin_input, "stdin_reader", None)
    if isinstance(reader, PosixStdinReader):
        stdin_input.stdin_reader = TerminalReader(reader.stdin_fd, errors=reader.errors,
                                                  encoding=getattr(sys.stdin, "encoding", None) or "utf-8")
    return stdin_input
