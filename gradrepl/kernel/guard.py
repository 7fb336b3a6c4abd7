"""Touching learner objects safely: bounded time, any exception, capped text.

After a step the kernel reads the learner's objects (str of an exception, repr
of a result, the namespace walk). Those calls run learner code that may raise,
sleep or produce megabytes; ``bounded`` turns all of that into a value so the
step still gets its reply.
"""

from __future__ import annotations

import signal
import time
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from gradrepl.kernel.protocol import TEXT_CAP

T = TypeVar("T")
TOUCH_SECONDS = 5.0   # a __str__/__repr__/attribute access that takes longer is given up on


class Overtime(BaseException):
    """Raised in the kernel's thread when a bounded call runs out of time."""


class Failed(Exception):
    """A bounded call did not give a value; the message says why, in words.

    ``why`` is the same without its subject ("took over 5 s", "raised KeyError"), and
    ``timed_out`` / ``interrupted`` say which of the three it was.
    """

    def __init__(self, message: str, why: str, timed_out: bool = False, interrupted: bool = False) -> None:
        super().__init__(message)
        self.why = why
        self.timed_out = timed_out
        self.interrupted = interrupted


def _on_alarm(signum, frame) -> None:
    raise Overtime


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise Overtime in this (the main) thread if the block runs longer than ``seconds``.

    Limits nest: inside a request's limit, each bounded read of a learner object gets the
    shorter of the two, and the request's own is armed again, less the time spent, after it.
    """
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    outer = signal.getitimer(signal.ITIMER_REAL)[0]  # what is left of an enclosing limit (0: none)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer) if outer else seconds)
    started = time.monotonic()
    try:
        yield
    finally:
        left = outer - (time.monotonic() - started)
        signal.setitimer(signal.ITIMER_REAL, max(left, 1e-6) if outer else 0)  # past its end: at once
        signal.signal(signal.SIGALRM, previous)


def bounded(call: Callable[[], T], seconds: float = TOUCH_SECONDS) -> T:
    """call(), or Failed with the reason if it raised or ran longer than ``seconds``.

    KeyboardInterrupt (the learner's Ctrl-C) also becomes Failed: the step that is
    being reported is over, so there is nothing else to stop.
    """
    try:
        with time_limit(seconds):
            return call()
    except Overtime:
        raise Failed(f"it took longer than {seconds:g} s", f"took over {seconds:g} s", timed_out=True) from None
    except KeyboardInterrupt:
        raise Failed("it was interrupted", "was interrupted", interrupted=True) from None
    except BaseException as exc:  # learner code may raise anything
        raise Failed(f"it raised {type(exc).__name__}", f"raised {type(exc).__name__}") from None


def safe_text(call: Callable[[], object], what: str, limit: int = TEXT_CAP) -> str:
    """The text call() gives (capped), or words saying why it could not be shown."""
    try:
        text = bounded(lambda: str(call()))
    except Failed as failed:
        return f"<{what} could not be shown: {failed}>"
    return cap(text, limit)


def cap(text: str, limit: int = TEXT_CAP) -> str:
    """At most ``limit`` bytes of UTF-8, with a note saying how much was cut."""
    if len(text) <= limit // 4 or len(text.encode("utf-8", "replace")) <= limit:
        return text
    kept = text.encode("utf-8", "replace")[:limit].decode("utf-8", "ignore")
    return kept + f"... ({len(text) - len(kept):,} more characters not shown)"
