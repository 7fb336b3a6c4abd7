"""Which websocket frames textual-serve's message loop can read without raising.

Its Server._process_messages parses every text frame as JSON and indexes it as it expects; a frame
that is not (not JSON, too deep, a lone surrogate in stdin, a resize without numbers) raised out of
the loop: a traceback on the server's stderr and the tab's socket dropped. The server hands it only
frames usable() names.
"""

from __future__ import annotations

import json

MAX_SIDE = 1000  # columns or rows; the server's own clamp for ?width= and ?height=


def usable(text: str) -> str | None:
    """The frame's kind ("stdin", "resize", "ping", "blur", "focus") if the loop can read it, else None."""
    try:
        envelope = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        return None
    kind, data = envelope[0], envelope[1:2]
    if kind == "stdin":
        return kind if data and isinstance(data[0], str) and _encodes(data[0]) else None
    if kind == "resize":
        return kind if data and isinstance(data[0], dict) and all(
            _side(data[0].get(name)) for name in ("width", "height")) else None
    if kind == "ping":
        return kind if data else None
    if kind in ("blur", "focus"):
        return kind
    return None  # the loop ignores other kinds; so do we


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _side(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_SIDE
