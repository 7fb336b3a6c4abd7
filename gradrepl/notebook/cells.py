"""What the inspector needs in a plain Python process, in one place, and the rows after each cell.

In a gradrepl kernel the worker sets this up around every step; here IPython's events
call `before` and `after` around every cell: the write hooks (installed by Inspector()),
the shadow recorder (for %check, and its "may a requires_grad flag have changed?" hint),
the namespace without IPython's own names, and the live table kept as the session keeps
it, so each row has the same keys and values as `gradrepl run --json`'s `tensors` rows,
plus `cell`: the execution count that last changed it.
"""

from __future__ import annotations

from gradrepl.kernel.inspect.snapshot import Inspector
from gradrepl.protocol.reply_schema import ROW, Violation
from gradrepl.kernel.symbolic import checks as symbolic
from gradrepl.session.timeline import Timeline
from gradrepl.views.remarks import remark_words


class CellInspector:
    """The live rows of one IPython namespace, brought up to date after each cell."""

    def __init__(self, shell) -> None:
        self.shell = shell
        self.inspector = Inspector()  # installs the class-level write hooks (kernel/inspect/writes.py)
        self.rows: dict[str, dict] = {}  # name -> row, first-appearance order (as Session.tensors)
        self.changed: list[str] = []     # names the last cell changed
        self.removed: list[str] = []     # names the last cell removed
        self.notes: list[str] = []       # the inspector's words about the last cell (skipped names...)
        self.timeline = Timeline()       # %at N
        self._recording = None           # the shadow recorder of the running cell
        self._dirty = True               # a requires_grad flag may have changed since the last look

    @property
    def tensors(self) -> dict[str, dict]:
        """The live table under the session's name for it (backward_magics.is_row_name reads it)."""
        return self.rows

    def namespace(self) -> dict:
        """The learner's names: IPython's own (In, Out, get_ipython...) are left out unless rebound."""
        hidden = self.shell.user_ns_hidden
        return {name: value for name, value in self.shell.user_ns.items()
                if name not in hidden or hidden[name] is not value}

    def before(self) -> None:
        """A cell starts: record its formulas (for %check), as the worker does around a step."""
        if self._recording is None:
            self._recording = symbolic.recording()
            self._journal = self._recording.__enter__()

    def after(self, cell: int, source: str) -> list[dict]:
        """A cell ended: the rows it changed (each with `cell`), the table updated in place."""
        if self._recording is not None:
            recording, self._recording = self._recording, None
            recording.__exit__(None, None, None)
            self._dirty = self._dirty or self._journal.flipped_requires_grad
            self._journal = None
        else:
            self._dirty = True  # a cell the recorder did not see
        changed, removed, remarks = self.inspector.guarded_step(self.namespace(), self._dirty)
        if self.inspector.stopped:
            remarks.append(self.inspector.stopped)
        self.notes = [remark_words(remark) for remark in remarks]  # the inspector's data, in words
        changed = self._checked(changed)
        self._dirty = False
        for name in self.changed:  # only the last cell's rows: cost grows with what changed
            if name in self.rows:
                self.rows[name]["changed"] = False
        for name in removed:
            self.rows.pop(name, None)
        for row in changed:
            row["cell"] = cell
            self.rows[row["name"]] = row
        self.changed = [row["name"] for row in changed]
        self.removed = removed
        self.timeline.record(cell, source, changed, removed)
        return changed

    def _checked(self, rows: list[dict]) -> list[dict]:
        """Rows through the client's reply schema, as a kernel's are: their text made visible (a grad_fn
        class named with escape codes must not drive a terminal), so they read as `run --json`'s."""
        checked = []
        for index, row in enumerate(rows):
            try:
                checked.append(ROW(row, ("tensors", index)))
            except Violation as exc:
                self.notes.append(f"panel leaves out a row: {exc}")
        return checked

    def stop_recording(self) -> None:
        """The panel went off or closed during a cell: end its recording, read nothing."""
        if self._recording is not None:
            recording, self._recording, self._journal = self._recording, None, None
            recording.__exit__(None, None, None)
        self._dirty = True

    def looked_at(self) -> None:
        """A magic read the namespace (or ran code the recorder did not see): ask every flag next time."""
        self._dirty = True

    def reset(self) -> None:
        self.inspector.reset()
        self.rows.clear()
        self.changed, self.removed = [], []
        self.timeline.clear()
        self._dirty = True
