"""The panel in the past: the table as it stood after an earlier step, rebuilt from the session's timeline.

F3 steps back, F4 forward; the panel's border says PAST and which step; rows
that step changed are lit, names it removed are listed. Typing anything (or
stepping forward past the last step) returns to the present. It is the live
panel's own widget, so it lays out the same columns the same way (the four
facts first, → and ← scroll its columns), with what each row's graph held last.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from gradrepl.views.numbers import format_bytes
from gradrepl.views.tables import COLUMNS, PAST_COLUMNS, GradBefore
from gradrepl.tui.tensors.tensor_table import TensorTable

LEAVE = "F3/F4 · type to return"  # how to leave: said before the step's source, which is cut first
FRESH = "restart"  # said of a kernel's first step: short, as the border has room for little more


class PastPanel(TensorTable):
    """The rows of one past step; `step` is None while the present is shown."""

    columns = {**COLUMNS, "saved_bytes": PAST_COLUMNS["saved_bytes"]}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.step: int | None = None

    def cells_of(self, row: dict[str, Any], before: GradBefore | None = None) -> dict[str, Text]:
        return {**super().cells_of(row, before), "saved_bytes": Text(format_bytes(row.get("saved_bytes")))}

    def show_past(self, past) -> None:
        """Fill the table with a timeline PastState."""
        self.step = past.step
        self.show_rows(past.rows, set(past.changed), past.freed)  # graph freed where the live panel said so

    def title(self, past, now: int, width: int) -> str:
        """The border's words in `width` cells: where in the past, how to leave, then what the step ran."""
        removed = f" · removed {', '.join(past.removed)}" if past.removed else ""
        # A kernel's first step says that a restart (or a kill) began the kernel there, numbered from 1.
        where = f"{FRESH}, step {past.step}" if past.fresh_kernel else f"after step {past.step}"
        head = f"PAST · {where} of {now} · {LEAVE}"
        first = (past.source.splitlines() or [""])[0]
        tail = f" · {first}{removed}"
        room = width - len(head)
        if len(tail) > room:
            tail = tail[: max(0, room - 1)] + "…" if room > 4 else ""
        return head + tail


def target_step(steps: list[int], current: int | None, delta: int) -> int | None:
    """The step to show after pressing back (-1) or forward (+1); None means the present."""
    if not steps:
        return None
    if current is None:  # the present is the state after the last step: back shows the one before
        return steps[max(len(steps) - 2, 0)] if delta < 0 else None
    index = steps.index(current) + delta if current in steps else len(steps) - 1
    if index >= len(steps):
        return None
    return steps[max(index, 0)]
