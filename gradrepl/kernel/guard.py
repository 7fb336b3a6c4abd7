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

from gradrepl.protocol.messages import TEXT_CAP

T = TypeVar("T")
TOUCH_SECONDS = 5.0   # a __str__/__repr__/attribute access that takes longer is given up on


class Overtime(BaseException):
    """Raised in the kernel's thread when a bounded call runs out of time."""


class NoValue(Exception):
    """A bounded call did not give a value; ``reason`` says why, as data the frontend words
    (views/remarks.py NO_VALUE): ``{"why": "timed_out", "seconds"}``, ``{"why": "raised", "error"}``
    (the exception's type name) or ``{"why": "interrupted"}``.
    """

    def __init__(self, reason: dict) -> None:
        super().__init__(reason)
        self.reason = reason

    @property
    def timed_out(self) -> bool:
        return self.reason["why"] == "timed_out"

    @property
    def interrupted(self) -> bool:
        return self.reason["why"] == "interrupted"


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
    """call(), or NoValue with the reason if it raised or ran longer than ``seconds``.

    KeyboardInterrupt (the learner's Ctrl-C) also becomes NoValue: the step that is
    being reported is over, so there is nothing else to stop.
    """
    try:
        with time_limit(seconds):
            return call()
    except Overtime:
        raise NoValue({"why": "timed_out", "seconds": seconds}) from None
    except KeyboardInterrupt:
        raise NoValue({"why": "interrupted"}) from None
    except BaseException as exc:  # learner code may raise anything
        raise NoValue({"why": "raised", "error": type(exc).__name__}) from None


def safe_text(call: Callable[[], object], limit: int = TEXT_CAP) -> tuple[str, dict | None]:
    """(the text call() gives, capped, None), or ("", the NoValue reason) when it could not be had:
    the frontend says so in words (views/remarks.unshown_text)."""
    try:
        text = bounded(lambda: str(call()))
    except NoValue as failed:
        return "", failed.reason
    return cap(text, limit), None


def cap(text: str, limit: int = TEXT_CAP) -> str:
    """At most ``limit`` bytes of UTF-8, with a note saying how much was cut."""
    if len(text) <= limit // 4 or len(text.encode("utf-8", "replace")) <= limit:
        return text
    kept = text.encode("utf-8", "replace")[:limit].decode("utf-8", "ignore")
    return kept + f"... ({len(text) - len(kept):,} more characters not shown)"
