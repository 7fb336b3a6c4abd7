import fcntl
import struct
import termios

import pytest
from tests.support.pty import PlainOnPty


@pytest.fixture
def repl():
    """`gradrepl --plain` on a real pty of 80 columns and 24 rows."""
    plain = PlainOnPty()
    fcntl.ioctl(plain.master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    yield plain
    plain.close()
