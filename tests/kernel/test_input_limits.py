"""Files and expressions that are too big get a clear answer, with a real kernel where one is asked."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import gradrepl


def test_run_of_an_endless_file_is_refused_unread():
    # A device is no script: refused before a byte is read (a FIFO would block the open; /dev/zero never ends).
    done = gradrepl("run", "/dev/zero", timeout=60)
    assert done.returncode == 2
    assert "is a device, not a file" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("budget", ["1M", "8M", "16M"])
def test_check_that_exhausts_the_kernel_says_the_limit_is_too_small_not_no_answer(budget):
    # Where the allocation fails differs with the budget: a MemoryError, or (often at 8M here) C code
    # in sympy or the import machinery that returns NULL without one, which Python raises as SystemError.
    # Under these budgets the checker cannot check even x**2 (kernel/check_memory.py): the limit is the cause,
    # not the expression, however large it is.
    done = gradrepl("check", "x**x**x**x**x**x**x**x**x**x**x**x**x", "--at", "x=2", "--memory-limit", budget)
    assert done.returncode == 2, done.stderr
    assert "memory limit is too small for the checker" in done.stderr, done.stderr
    assert "too large" not in done.stderr and "gave no answer" not in done.stderr


def test_check_with_no_finite_value_exits_non_zero():
    done = gradrepl("check", "exp(exp(exp(exp(x))))", "--at", "x=10", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert json.loads(done.stdout)["value"] is None
    assert "nothing could be compared" in done.stderr
    assert gradrepl("check", "x**2", "--at", "x=3").returncode == 0
