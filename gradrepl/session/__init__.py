"""The frontend's one door to a kernel: steps, magics, the interrupt ladder, the live table."""

from gradrepl.session.session import Session
from gradrepl.session.state import KernelState

__all__ = ["KernelState", "Session"]
