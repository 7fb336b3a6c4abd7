"""Every past step, rebuilt from what each step changed (`%at N`, the TUI's timeline).

A step's delta is what the kernel already sent: the rows it changed (summaries,
never tensors) and the names it removed. The table after step N is the base
table with the deltas up to N applied, so nothing is ever re-run. Memory is
bounded: past ``max_rows`` stored rows, the oldest deltas are folded into the
base table, and those steps can no longer be shown one by one.

A restart numbers steps from 1 again, as Jupyter does: the old kernel's steps go
(their names went with it), and the timeline says that a fresh kernel began
before its step 1 (``restarts``, ``PastState.fresh_kernel``).
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
class GradStory:
    """What the kept steps did to one tensor's .grad, as (step, source) pairs, for why it is None now
    (views/why.py words it): the step that made the row, the last that wrote its .grad, the one that
    then emptied it, and the first backward since the row was made that wrote some other .grad."""

    created: tuple[int, str] | None = None
    filled: tuple[int, str] | None = None
    emptied: tuple[int, str] | None = None
    backward: tuple[int, str] | None = None


@dataclass(frozen=True)
class PastState:
    """The table after one step: rows in first-appearance order, and what that step changed."""

    step: int
    source: str
    rows: list[dict]
    changed: set[str]
    removed: list[str]
    fresh_kernel: bool = False  # the first step of a kernel that a restart began (the table was empty)
    # rows whose graph a backward had freed by then (held saved bytes, then none): the panel's `graph freed`
    freed: frozenset[str] = frozenset()


class Timeline:
    """Deltas of the steps so far; the state after any kept step, on demand."""

    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self.max_rows = max_rows
        self.restarts = 0  # kernels begun by a restart since this timeline began
        self.clear()

    def clear(self) -> None:
        self._base: dict[str, dict] = {}  # the table after step base_step
        self.base_step = 0
        self._deltas: deque[Delta] = deque()
        self._stored = 0

    def restart(self) -> None:
        """A fresh kernel began: its steps are numbered from 1, the old one's are no longer shown."""
        self.clear()
        self.restarts += 1

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
        held = {name: row.get("saved_bytes") or 0 for name, row in self._base.items()}
        freed: set[str] = set()
        for delta in self._deltas:
            if delta.step > step:
                break
            _apply(table, delta)
            _note_freed(held, freed, delta)
            if delta.step == step:
                return PastState(step, delta.source, list(table.values()),
                                 {row["name"] for row in delta.rows}, list(delta.removed),
                                 fresh_kernel=self.restarts > 0 and self.base_step == 0 and delta is self._deltas[0],
                                 freed=frozenset(freed))
        raise UsageError(f"step {step} left no trace in the timeline (it was folded into an earlier state)")

    def grad_story(self, name: str) -> GradStory:
        """What the kept steps did to `name`'s .grad (the folded ones are forgotten)."""
        grads = {row_name: row.get("grad") for row_name, row in self._base.items()}
        created = filled = emptied = backward = None
        for delta in self._deltas:
            here = (delta.step, delta.source)
            if name in delta.removed:
                created = filled = emptied = backward = None
            for row in delta.rows:
                row_name, old, new = row["name"], grads.get(row["name"]), row.get("grad")
                if row_name == name:
                    if row_name not in grads or name in delta.removed:
                        created, filled, emptied, backward = here, None, None, None
                    if new is not None and new != old:
                        filled, emptied = here, None
                    elif new is None and old is not None:
                        emptied = here
                elif new is not None and new != old and name in grads and backward is None:
                    backward = here  # a .grad written elsewhere: a backward ran after `name` was made
                grads[row_name] = new
            for gone in delta.removed:
                if gone not in {row["name"] for row in delta.rows}:
                    grads.pop(gone, None)
        return GradStory(created, filled, emptied, backward)

    def scalar_history(self, name: str) -> list[tuple[int, float]]:
        """(step, value) of each kept step that changed `name` while it held one number (the loss while
        training, `%plot loss`, the details' sparkline); begins again where the name was removed."""
        points: list[tuple[int, float]] = []
        held = _one_number(self._base.get(name))
        if held is not None:
            points.append((self.base_step, held))
        for delta in self._deltas:
            if name in delta.removed:
                points = []
            for row in delta.rows:
                if row["name"] == name:
                    value = _one_number(row)
                    points = points + [(delta.step, value)] if value is not None else []
        return points

    def _fold(self, delta: Delta) -> None:
        _apply(self._base, delta)
        self.base_step = delta.step
        self._stored -= len(delta.rows)


def _apply(table: dict[str, dict], delta: Delta) -> None:
    for name in delta.removed:
        table.pop(name, None)
    for row in delta.rows:
        table[row["name"]] = row


def _note_freed(held: dict[str, int], freed: set[str], delta: Delta) -> None:
    """The live panel's rule (tui/tensors/tensor_table.py), step by step: a row that held saved bytes and
    now holds none, its grad_fn kept, had its graph freed by a backward."""
    for name in delta.removed:
        held.pop(name, None)
        freed.discard(name)
    for row in delta.rows:
        name, now = row["name"], row.get("saved_bytes") or 0
        if now or not row.get("grad_fn"):
            freed.discard(name)
        elif held.get(name):
            freed.add(name)
        held[name] = now


def _one_number(row: dict | None) -> float | None:
    """The number a row holds when it holds exactly one (a scalar, or a 1×1 tensor), else None."""
    summary = (row or {}).get("value") or {}
    values = summary.get("values")
    while isinstance(values, list) and len(values) == 1:
        values = values[0]
    if isinstance(values, bool) or not isinstance(values, (int, float)):
        return None
    return float(values)


def parse_step(arg: str, now: int) -> int:
    """`%at 3`, `%at -1` (the last step, `now`; -2 the one before): the step number, or a UsageError."""
    text = arg.strip()
    try:
        number = int(text)
    except ValueError:
        raise UsageError(f"%at needs a step number, e.g. %at 3 (or %at -1 for the last step), not {text!r}") from None
    return now + number + 1 if number < 0 else number
