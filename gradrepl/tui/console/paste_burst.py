"""Telling a paste from typing when the terminal has no bracketed paste (ssh, `tmux paste-buffer`).

Such a paste arrives as keys, Enter included. The keys of one terminal read are
created microseconds apart; a person types tens of milliseconds apart (auto-repeat
too), so a key that follows the previous one within PASTE_GAP belongs to a paste.
"""

from __future__ import annotations

PASTE_GAP = 0.005  # seconds between two keys of one paste, at most
PASTE_SETTLE = 0.06  # quiet after the last key before the paste counts as finished


class PasteBurst:
    """Feeds on key timestamps; says whether the current key is part of a paste."""

    def __init__(self) -> None:
        self._last_key = float("-inf")
        self.active = False

    def key(self, time: float) -> bool:
        """Record a key made at `time`; True while a paste is arriving."""
        if time - self._last_key < PASTE_GAP:
            self.active = True
        self._last_key = time
        return self.active

    def settled(self) -> None:
        """The paste is over (no key for PASTE_SETTLE seconds)."""
        self.active = False
