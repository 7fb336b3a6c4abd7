"""The panel in the past: the table as it stood after an earlier step, rebuilt from the session's timeline.

F3 steps back, F4 forward; the panel's border says PAST and which step; rows
that step changed are lit, names it removed are listed. Typing anything (or
stepping forward past the last step) returns to the present.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from gradrepl.kernel.sizes import format_bytes
from gradrepl.textviews import PAST_COLUMNS
from gradrepl.tui.tensors.cells import row_cells

PAST_STYLE = "bold yellow"


class PastPanel(DataTable):
    """A read-only table of one past step; `step` is None while the present is shown."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self.step: int | None = None
        self.changed: set[str] = set()

    def on_mount(self) -> None:
        for key, label in PAST_COLUMNS.items():
            self.add_column(label, key=key)

    def show_past(self, past) -> None:
        """Fill the table with a timeline PastState."""
        self.step = past.step
        self.changed = set(past.changed)
        self.clear()
        for row in past.rows:
            cells = {**row_cells(row), "saved_bytes": Text(format_bytes(row.get("saved_bytes")))}
            lit = row["name"] in self.changed
            for cell in cells.values():
                if lit:
                    cell.stylize(PAST_STYLE)
            cells["name"] = Text.assemble(("● " if lit else "  ", PAST_STYLE), cells["name"])
            self.add_row(*(cells[key] for key in PAST_COLUMNS), key=row["name"])

    def title(self, past, now: int) -> str:
        first = past.source.splitlines()[0] if past.source else ""
        removed = f" · removed {', '.join(past.removed)}" if past.removed else ""
        return f"PAST · after step {past.step} of {now} · {first[:40]}{removed} · F3/F4 · type to return"


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
