"""Every past step, rebuilt from what each step changed (`%at N`, the TUI's timeline).

A step's delta is what the kernel already sent: the rows it changed (summaries,
never tensors) and the names it removed. The table after step N is the base
table with the deltas up to N applied, so nothing is ever re-run. Memory is
bounded: past ``max_rows`` stored rows, the oldest deltas are folded into the
base table, and those steps can no longer be shown one by one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from gradrepl.errors import UsageError

MAX_ROWS = 20_000      # rows kept across all deltas (about 1 KB each: at most ~20 MB)
MAX_SOURCE = 2_000     # characters of a step's source kept for the header


@dataclass(frozen=True)
class Delta:
    step: int
    source: str
    rows: tuple[dict, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class PastState:
    """The table after one step: rows in first-appearance order, and what that step changed."""

    step: int
    source: str
    rows: list[dict]
    changed: set[str]
    removed: list[str]


class Timeline:
    """Deltas of the steps so far; the state after any kept step, on demand."""

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self.max_rows = max_rows
        self.clear()

    def clear(self) -> None:
        self._base: dict[str, dict] = {}  # the table after step base_step
        self.base_step = 0
        self._deltas: deque[Delta] = deque()
        self._stored = 0

    def record(self, step: int, source: str, rows: list[dict], removed: list[str]) -> None:
        kept = tuple({key: value for key, value in row.items() if key != "changed"} for row in rows)
        self._deltas.append(Delta(step, source[:MAX_SOURCE], kept, tuple(removed)))
        self._stored += len(kept)
        while self._stored > self.max_rows and len(self._deltas) > 1:
            self._fold(self._deltas.popleft())

    @property
    def steps(self) -> list[tuple[int, str]]:
        """(step, source) of every step that can be shown, oldest first."""
        return [(delta.step, delta.source) for delta in self._deltas]

    @property
    def last_step(self) -> int:
        return self._deltas[-1].step if self._deltas else self.base_step

    def state_at(self, step: int) -> PastState:
        """The table as it stood after ``step``; UsageError for a step not kept."""
        if not self._deltas:
            raise UsageError("no steps yet: run some code first")
        first, last = self._deltas[0].step, self._deltas[-1].step
        if not first <= step <= last:
            kept = f"steps {first} to {last}" if first != last else f"step {first}"
            raise UsageError(f"step {step} is not in the timeline: {kept} can be shown")
        table = dict(self._base)
        for delta in self._deltas:
            if delta.step > step:
                break
            _apply(table, delta)
            if delta.step == step:
                return PastState(step, delta.source, list(table.values()),
                                 {row["name"] for row in delta.rows}, list(delta.removed))
        raise UsageError(f"step {step} left no trace in the timeline (it was folded into an earlier state)")

    def _fold(self, delta: Delta) -> None:
        _apply(self._base, delta)
        self.base_step = delta.step
        self._stored -= len(delta.rows)


def _apply(table: dict[str, dict], delta: Delta) -> None:
    for name in delta.removed:
        table.pop(name, None)
    for row in delta.rows:
        table[row["name"]] = row


def parse_step(arg: str, now: int) -> int:
    """`%at 3`, `%at -1` (one step back): the step number, or a UsageError in words."""
    text = arg.strip()
    try:
        number = int(text)
    except ValueError:
        raise UsageError(f"%at needs a step number, e.g. %at 3 (or %at -1 for the step before), not {text!r}") from None
    return now + number if number < 0 else number
