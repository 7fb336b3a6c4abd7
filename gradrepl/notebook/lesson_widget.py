"""A lesson's face in a notebook: an anywidget showing the steps so far and the question asked now.

The widget renders and passes on what the learner does; it never grades. Its synced traits are
data made in Python (lesson.py turns the engine's events into them, with the views' words):

- `steps`: every step shown so far, in order, each {"index", "kind": "prose" | "code" | "question",
  "html" (prose, Markdown made HTML), "code", "output" (what running it printed), "ran", "done"};
- `question`: the open question, {} when none: its id, type, prompt (HTML), code, given, starter,
  options [{"n", "text"}], fields [{"name", "label", "placeholder"}], placeholder, how (what an
  answer looks like), hints shown, verdict {"correct", "word", "feedback", "fields"}, output (what an
  attempt printed), said (a refusal, "type an answer first"), answer (the key, once revealed),
  closed, skippable;
- `notices`, `busy` (what the kernel is doing now), `can_next`, `finished`, `footer`.

A button sends {"action": "answer" | "check" | "hint" | "skip" | "next" | "run", "value": ...};
`on_action` (set by the lesson) receives it, as the lesson's own methods do from a cell.
"""

from __future__ import annotations

import pathlib

import anywidget
import traitlets

NO_SANDBOX = ("no sandbox: the lesson's code and your answers run in this notebook's own Python, and a task is "
              "checked on its namespace; the answer keys come from a gradrepl kernel of their own")


class LessonWidget(anywidget.AnyWidget):
    _esm = pathlib.Path(__file__).with_name("lesson.js")
    _css = pathlib.Path(__file__).with_name("lesson.css")

    lesson_id = traitlets.Unicode().tag(sync=True)
    title = traitlets.Unicode().tag(sync=True)
    steps = traitlets.List().tag(sync=True)
    question = traitlets.Dict().tag(sync=True)
    notices = traitlets.List(traitlets.Unicode()).tag(sync=True)
    busy = traitlets.Unicode().tag(sync=True)
    can_next = traitlets.Bool(False).tag(sync=True)
    finished = traitlets.Unicode().tag(sync=True)
    footer = traitlets.Unicode(NO_SANDBOX).tag(sync=True)

    def __init__(self, **kwargs) -> None:
        self.on_action = None  # (action, value) -> None
        super().__init__(**kwargs)
        self.on_msg(self._message)

    def _message(self, widget, content, buffers) -> None:
        if isinstance(content, dict) and isinstance(content.get("action"), str) and self.on_action is not None:
            self.on_action(content["action"], content.get("value"))
