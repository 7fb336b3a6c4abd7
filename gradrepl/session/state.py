"""The kernel's state as a frontend sees it. A restart is an event (Session's on_restart), not a state."""

from __future__ import annotations

from dataclasses import replace
from enum import Enum


class KernelState(str, Enum):
    """Compares equal to its value ("idle"), so status words can be looked up by either."""

    STARTING = "starting"  # the first start, or a fresh kernel replacing the old one
    IDLE = "idle"
    BUSY = "busy"
    DEAD = "dead"          # closed: no kernel until start() again


def said_once(result):
    """`result` (a StepResult) as a frontend shows it: a step the kernel's death took along is said once, by
    its kernel event (the error's message and why only repeat it: "KernelLost: you stopped the kernel ...")."""
    error = result.error
    if (result.kernel_event and error is not None and not error.frames and not error.traceback
            and error.explanation == result.kernel_event):
        return replace(result, error=None)
    return result
