"""`%load_ext gradrepl`: IPython's events drive the inspector, the panel shows what changed.

post_run_cell reads the namespace (cells.py) and hands the panel the rows; the panel syncs
only when a row changed, was removed, or lost its changed mark. With the panel off
(`%gradrepl off`) or closed, no cell pays for inspection: the events return at once.

Where a frontend shows the panel (it gets deltas, not a table in the cell's output), the reading
waits until the kernel has sent the cell's reply: the learner sees the cell end, and the panel a
moment later, while the frontend is still drawing the result. Nothing the learner runs can come
between: the next cell (or a lesson's step) reads what is pending first.
"""

from __future__ import annotations

import asyncio
from functools import partial

from IPython.display import display

from gradrepl.notebook.cells import CellInspector
from gradrepl.notebook.fallback import changed_table
from gradrepl.notebook.provenance import Provenance

_LOADED: dict[int, "Extension"] = {}  # id(shell) -> its extension (a second %load_ext does nothing)


def load_ipython_extension(shell) -> None:
    if id(shell) in _LOADED:
        return
    extension = _LOADED[id(shell)] = Extension(shell)
    extension.start()


def unload_ipython_extension(shell) -> None:
    extension = _LOADED.pop(id(shell), None)
    if extension is not None:
        extension.stop()


def loaded(shell) -> "Extension | None":
    return _LOADED.get(id(shell))


def unregister(shell, **callbacks) -> None:
    """Take callbacks off IPython's events ({event: callback}); one never registered is no error."""
    for event, callback in callbacks.items():
        try:
            shell.events.unregister(event, callback)
        except ValueError:
            pass


def has_widget_frontend(shell) -> bool:
    """A kernel a notebook frontend talks to (ipykernel); terminal IPython has no widgets."""
    return getattr(shell, "kernel", None) is not None


class Extension:
    def __init__(self, shell) -> None:
        from gradrepl.notebook.magics import PanelMagics

        self.shell = shell
        self.cells = CellInspector(shell)
        self.provenance = Provenance()
        self.on = True
        self.panel = None
        self._cell: tuple[str | None, str] = (None, "")  # the running cell's id and source
        self._magics = PanelMagics(shell, self)
        self._words: dict[str, dict] = {}   # name -> its words, as the panel holds them
        self._marked: list[str] = []         # rows the panel shows as changed
        self._sent_stale: list[str] = []
        self._sent_notes: list[str] = []
        self._owed = False                   # cells ran while the panel was hidden: read them when it shows
        self._pending = None                 # the last cell's reading, due once its reply is sent

    def start(self) -> None:
        self.shell.register_magics(self._magics)
        self.shell.events.register("pre_run_cell", self.pre_run_cell)
        self.shell.events.register("post_run_cell", self.post_run_cell)
        self.show_panel()
        self.cells.after(self.shell.execution_count, "%load_ext gradrepl")  # what lives already is cell 0's
        self._sync()

    def stop(self) -> None:
        self.read_pending()
        if self.panel is not None:
            self.panel.flush()
        unregister(self.shell, pre_run_cell=self.pre_run_cell, post_run_cell=self.post_run_cell)
        self.cells.after(0, "")  # ends a recording that is open
        if self.panel is not None:
            self.panel.close()

    def show_panel(self) -> None:
        """A new panel under the current cell (the extension's, or %gradrepl on's)."""
        from gradrepl.notebook.panel import Panel
        from gradrepl.notebook.words import COLUMNS

        from gradrepl.notebook.words import panel_words

        self._words = {name: panel_words(row) for name, row in self.cells.rows.items()}
        self._marked, self._sent_stale, self._sent_notes = [], [], []
        self.panel = Panel(current=self._whole, columns=dict(COLUMNS), **self._whole())
        self.panel.on_shown = self.catch_up
        if has_widget_frontend(self.shell):
            display(self.panel)

    def watching(self) -> bool:
        """Inspection runs while on and the panel is open (a closed widget has no comm) and not hidden."""
        return self.on and self.panel is not None and self.panel.comm is not None and not self.panel.hidden

    def catch_up(self) -> None:
        """A hidden panel is seen again: read what the cells run meanwhile changed, under the last cell."""
        self.read_pending()
        if not self._owed or not self.watching():
            return
        self._owed = False
        last = self.shell.execution_count - 1  # the count of the cell that ran last (the next one's is ahead)
        self.cells.after(last, "(cells run while the panel was hidden)")
        self._sync()

    # -- IPython events --------------------------------------------------
    def pre_run_cell(self, info) -> None:
        self.read_pending()  # the cell before is read before this one runs, whatever the event loop did
        self._cell = (getattr(info, "cell_id", None), info.raw_cell or "")
        if self.watching():
            self.provenance.before(*self._cell)
            self.cells.before()

    def post_run_cell(self, result) -> None:
        if not self.watching():
            self.cells.stop_recording()
            self._owed = self._owed or (self.panel is not None and self.panel.hidden)
            return
        read = partial(self._read_cell, result.execution_count, *self._cell)
        loop = self._kernel_loop() if self.panel.rendered else None
        if loop is None:
            read()
            return
        self._pending = read
        loop.call_soon(self.read_pending)  # after execute_request's handler: its reply and idle are out

    def read_pending(self) -> None:
        """Read the cell whose reading is due (none: nothing to do)."""
        read, self._pending = self._pending, None
        if read is not None:
            read()

    def _kernel_loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop of the kernel running this cell (ipykernel's); None in terminal IPython."""
        if not has_widget_frontend(self.shell):
            return None
        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            return None

    def _read_cell(self, count: int, cell_id: str | None, source: str) -> None:
        changed = self.cells.after(count, source)
        self.provenance.after(cell_id, count, source, self.cells.rows, self.cells.changed)
        self._sync()
        if not (has_widget_frontend(self.shell) and self.panel.rendered):
            bundle = changed_table(changed, self.cells.removed, sorted(self.provenance.stale))
            if bundle is not None:
                display(bundle, raw=True)

    def read_now(self, source: str) -> None:
        """Code a lesson ran in the namespace outside a cell of its own (a button's step): read it now,
        under the current execution count."""
        self.read_pending()
        if self.watching():
            self.cells.after(self.shell.execution_count, source)
            self._sync()

    # -- the panel ---------------------------------------------------------
    def _sync(self) -> None:
        """Send the panel what changed: nothing when no row changed, was removed or lost its mark."""
        from gradrepl.notebook.words import panel_words

        cells, panel = self.cells, self.panel
        stale = sorted(self.provenance.stale)
        unmarked = [name for name in self._marked if name in cells.rows and name not in cells.changed]
        if not (cells.changed or cells.removed or unmarked) and stale == self._sent_stale \
                and cells.notes == self._sent_notes:
            return
        words = self._words
        for name in cells.removed:
            words.pop(name, None)
        changed_words = {name: panel_words(cells.rows[name]) for name in cells.changed}
        words.update(changed_words)
        self._marked, self._sent_stale, self._sent_notes = list(cells.changed), stale, list(cells.notes)
        if panel.rendered:
            panel.send_delta({"rows": [dict(cells.rows[name]) for name in cells.changed], "removed": cells.removed,
                              "unmarked": unmarked, "words": changed_words, "stale": stale,
                              "notes": list(cells.notes)}, self._kernel_loop())
            return
        with panel.hold_sync():
            for key, value in self._whole().items():
                setattr(panel, key, value)

    def _whole(self) -> dict:
        """The panel's whole state (copies: traitlets compares by value, and rows change in place)."""
        return {"rows": [dict(row) for row in self.cells.rows.values()], "words": dict(self._words),
                "stale": list(self._sent_stale), "notes": list(self._sent_notes)}
