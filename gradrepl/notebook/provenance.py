"""Which rows are stale: computed by an older version of a cell that has since been edited and re-run.

Each row names the cell (execution count) that last changed it. A frontend gives each cell an id
(IPython's ExecutionInfo.cell_id); when a cell id runs again with other source, the rows its old
run made and this run does not remake are stale, until a later cell changes them.
"""

from __future__ import annotations


class Provenance:
    def __init__(self) -> None:
        self._runs: dict[str, tuple[int | None, str]] = {}  # cell id -> (execution count, source) of its last run
        self._editing: tuple[str, int | None] | None = None  # (cell id, old count) of a re-run with new source
        self.stale: set[str] = set()

    def before(self, cell_id: str | None, source: str) -> None:
        self._editing = None
        if cell_id is None:
            return
        old = self._runs.get(cell_id)
        if old is not None and old[1] != source:
            self._editing = (cell_id, old[0])

    def after(self, cell_id: str | None, count: int | None, source: str, rows: dict[str, dict],
              changed: list[str]) -> None:
        """The cell ran: rows of its edited cell's old run go stale; what it changed is fresh."""
        if self._editing is not None:
            old_count = self._editing[1]
            self.stale.update(name for name, row in rows.items() if row.get("cell") == old_count)
            self._editing = None
        self.stale.difference_update(changed)
        self.stale.intersection_update(rows)
        if cell_id is not None:
            self._runs[cell_id] = (count, source)

    def clear(self) -> None:
        self._runs.clear()
        self.stale.clear()
