"""guard.time_limit and bounded, the kernel's clock on learner objects (no torch needed)."""

import signal
import time

import pytest

from gradrepl.kernel.guard import NoValue, Overtime, bounded, time_limit


def test_an_inner_limit_leaves_the_outer_one_armed():
    # A request's 30 s limit wraps bounded reads of learner objects; each read must not disarm it.
    started = time.monotonic()
    with pytest.raises(Overtime):
        with time_limit(0.3):
            assert bounded(lambda: 41 + 1) == 42
            time.sleep(3)
    assert time.monotonic() - started < 2


def test_an_inner_limit_does_not_outlast_the_outer_one():
    started = time.monotonic()
    with pytest.raises((Overtime, NoValue)):
        with time_limit(0.3):
            bounded(lambda: time.sleep(3), seconds=5)
            time.sleep(3)
    assert time.monotonic() - started < 2


def test_a_learners_alarm_handler_is_kept():
    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        assert bounded(lambda: "read") == "read"
        assert signal.getsignal(signal.SIGALRM) is mine
    finally:
        signal.signal(signal.SIGALRM, previous)
