"""The panel: an anywidget (JupyterLab, Notebook 7, VS Code, Colab) showing the live rows.

The synced trait `rows` is the contract: every live row with the same keys and values as
`gradrepl run --json`'s `tensors` rows, plus `cell`. A notebook run by nbclient with
store_widget_state=True therefore saves the panel as the learner saw it. `words` holds each
row's cells as the text views word them (one renderer for every frontend); `stale` the rows
computed by an older version of a re-run cell. The view sends {"event": "rendered"} once
shown, so the kernel knows a widget frontend exists (else fallback.py prints a table), and
{"event": "visible", "visible": bool} when its output is collapsed or its browser tab hidden, and
back: a panel no one sees costs a cell nothing, and catches up once seen again.

Only what changed is sent to a frontend that shows the panel: a custom message with the cell's
changed rows, removed names and rows whose mark went off (`send_delta`); the view applies it to
its copy of `rows`. The traits are brought up to date only when a frontend asks for the whole
state (a new view, a reload, a saved notebook), so a cell costs what it changed, not what lives.
Where no view has shown the panel (nbclient, nbconvert) there is no one to apply deltas, and the
traits are synced whole: the saved widget state is then the panel as it stood after each cell.
"""

from __future__ import annotations

import pathlib

import anywidget
import traitlets

NO_SANDBOX = ("no sandbox: this code runs in your own Python kernel, with your files and network "
              "(gradrepl's sandbox is for its own REPL)")


# At most this long between a cell's delta and its sending (s): a learner does not see 30 ms, and Run All's
# cells, a few ms each, share a message.
SEND_EVERY = 0.03


def merged_delta(first: dict, then: dict) -> dict:
    """One delta that a view applies (panel.js) to the same result as `first`, then `then`: rows by name,
    the later winning and keeping the earlier's place; a row only `first` changed has lost its mark since;
    a row `then` removed is gone, one removed and made again is removed then appended, as it would be."""
    gone = set(then["removed"])
    rows = {row["name"]: {**row, "changed": False} for row in first["rows"] if row["name"] not in gone}
    rows.update((row["name"], row) for row in then["rows"])
    words = {name: text for name, text in first["words"].items() if name not in gone}
    words.update(then["words"])
    removed = list(dict.fromkeys(first["removed"] + then["removed"]))
    unmarked = list(dict.fromkeys(first["unmarked"] + then["unmarked"]))
    return {"rows": list(rows.values()), "removed": removed, "unmarked": unmarked, "words": words,
            "stale": then["stale"], "notes": then["notes"]}


class Panel(anywidget.AnyWidget):
    _esm = pathlib.Path(__file__).with_name("panel.js")
    _css = pathlib.Path(__file__).with_name("panel.css")

    rows = traitlets.List().tag(sync=True)      # of row dicts; not validated one by one: cells.py checked them
    words = traitlets.Dict().tag(sync=True)     # name -> {column: words} (views.tables.row_words)
    columns = traitlets.Dict().tag(sync=True)   # column key -> header (views.tables.COLUMNS)
    stale = traitlets.List(traitlets.Unicode()).tag(sync=True)
    notes = traitlets.List(traitlets.Unicode()).tag(sync=True)
    footer = traitlets.Unicode(NO_SANDBOX).tag(sync=True)
    on = traitlets.Bool(True).tag(sync=True)

    def __init__(self, current=None, **kwargs) -> None:
        self.rendered = False  # a frontend showed this panel at least once
        self._current = current  # () -> the whole state (rows, words, stale, notes), for a full sync
        self._behind = False     # deltas went out that the traits do not hold yet
        self.hidden = False      # the view says no one can see it: cells are not inspected meanwhile
        self.on_shown = None     # () -> None, called when a hidden view shows itself again
        self._outbox: dict | None = None  # deltas not sent yet, merged (send_delta)
        self._flush = None                # the event loop's timer that sends them
        super().__init__(**kwargs)
        self.on_msg(self._message)

    def send_delta(self, delta: dict, loop=None) -> None:
        """What one cell changed, to the views that apply it; the traits catch up when asked. With the
        kernel's event loop, deltas that come within SEND_EVERY of each other go out as one (merged): cells
        run back to back (Run All) cost the kernel and the frontend one message per SEND_EVERY, not per cell."""
        self._behind = True
        if loop is None:
            self.send({"delta": delta})
            return
        self._outbox = delta if self._outbox is None else merged_delta(self._outbox, delta)
        if self._flush is None:
            self._flush = loop.call_later(SEND_EVERY, self.flush)

    def flush(self) -> None:
        """Send the deltas waiting in the outbox now (none: nothing)."""
        if self._flush is not None:
            self._flush.cancel()
        delta, self._outbox, self._flush = self._outbox, None, None
        if delta is not None and self.comm is not None:
            self.send({"delta": delta})

    def get_state(self, key=None, drop_defaults=False):
        if self._behind and self._current is not None:
            # Written without a notification: this state is about to be sent whole anyway.
            self._trait_values.update(self._current())
            self._behind = False
        return super().get_state(key, drop_defaults)

    def send_state(self, key=None) -> None:
        """ipywidgets' send_state without its search for binary buffers: this state is JSON only
        (strings, numbers, lists and dicts), and walking 50 rows for buffers cost a cell a millisecond."""
        state = self.get_state(key=key)
        if not state:
            return
        for name, value in state.items():
            if name in self._property_lock:  # ipywidgets keeps these up to date with what the frontend holds
                self._property_lock[name] = value
        self._send({"method": "update", "state": state, "buffer_paths": []}, buffers=[])

    def _message(self, widget, content, buffers) -> None:
        if not isinstance(content, dict):
            return
        if content.get("event") == "rendered":
            self.rendered = True
        elif content.get("event") == "visible":  # the view's output collapsed, or its browser tab hidden
            self.hidden = not content.get("visible", True)
            if not self.hidden and self.on_shown is not None:
                self.on_shown()
