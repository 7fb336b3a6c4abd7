"""A kernel that ended while the frontend waited on it, and its wait status in words."""

from __future__ import annotations

import os
import signal

from gradrepl.protocol.messages import OUT_OF_MEMORY_EXIT

OUT_OF_MEMORY = "the kernel ran out of memory (its memory limit) where no reply could say so"


class KernelDied(Exception):
    """The kernel process ended while we waited on it; `reason` says why, in words."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class KernelOverdue(KernelDied):
    """A request went unanswered past its deadline (learner code that ignores the kernel's own alarm, or
    a kernel that stopped itself), so the kernel was killed; `seconds` is the deadline, `stopped` whether the
    kernel had stopped itself (SIGSTOP): said beside the deadline, which is why it never answered."""

    def __init__(self, reason: str, seconds: float, stopped: bool = False):
        super().__init__(reason)
        self.seconds = seconds
        self.stopped = stopped


class ForkFailed(KernelDied):
    """The zygote could not fork a kernel (or stopped with the request's pipes): start one another way."""


def describe_exit(status: int | None, runs_learner_code: bool = True) -> str:
    """A wait status in words a learner can act on. Learner code can end its kernel with any status, so
    OUT_OF_MEMORY_EXIT says out of memory only from a kernel that runs none (the sympy-only one)."""
    if status is None:
        return "the kernel process ended"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        names = {signal.SIGSEGV: "a segmentation fault (the process touched invalid memory)",
                 signal.SIGKILL: "it was killed (SIGKILL: stopped by gradrepl, or out of memory)",
                 signal.SIGABRT: "it aborted (SIGABRT)", signal.SIGBUS: "a bus error (SIGBUS)",
                 signal.SIGFPE: "a floating-point exception (SIGFPE)",
                 signal.SIGSYS: "a forbidden system call (SIGSYS)"}
        return f"the kernel crashed: {names.get(sig, f'signal {sig}')}"
    code = os.WEXITSTATUS(status)
    if code == OUT_OF_MEMORY_EXIT and not runs_learner_code:
        return OUT_OF_MEMORY
    return f"the kernel process exited with status {code} (os._exit or a fatal error)"
