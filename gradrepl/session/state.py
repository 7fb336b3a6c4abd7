"""The kernel's state as a frontend sees it. A restart is an event (Session's on_restart), not a state."""

from __future__ import annotations

from enum import Enum


class KernelState(str, Enum):
    """Compares equal to its value ("idle"), so status words can be looked up by either."""

    STARTING = "starting"  # the first start, or a fresh kernel replacing the old one
    IDLE = "idle"
    BUSY = "busy"
    DEAD = "dead"          # closed: no kernel until start() again
