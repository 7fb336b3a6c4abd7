"""The frontend's one door to a kernel: steps, magics, the interrupt ladder, the live table."""

__all__ = ["KernelState", "Session"]


def __getattr__(name: str):
    # Loaded on first use, so the session's pure parts (timeline.py) import without the kernel client
    # (the notebook room reads the timeline in the learner's own Python).
    if name == "Session":
        from gradrepl.session.session import Session
        return Session
    if name == "KernelState":
        from gradrepl.session.state import KernelState
        return KernelState
    raise AttributeError(f"module 'gradrepl.session' has no attribute {name!r}")
