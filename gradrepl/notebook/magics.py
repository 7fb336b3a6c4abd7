"""The %magics in cells: the same content as in the TUI, from the same inspector and text views.

HTML where the frontend renders it (a <pre> block), text otherwise. A name a magic cannot
find is a UsageError in words; learner text is looked up as a row name, never evaluated.
"""

from __future__ import annotations

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.display import display

from gradrepl.errors import UsageError as GradreplUsageError
from gradrepl.kernel.inspect.graph import graph_of
from gradrepl.kernel.inspect.trace import StepTraces, TraceError, preview
from gradrepl.kernel.symbolic import checks as symbolic
from gradrepl.notebook.words import html_block
from gradrepl.session.backward_magics import is_row_name
from gradrepl.session.timeline import parse_step
from gradrepl.terminal_text import visible
from gradrepl.views.check import render_check
from gradrepl.views.graph_drawing import graph_drawing_text
from gradrepl.views.remarks import request_error, word_trace
from gradrepl.views.tables import tensor_table
from gradrepl.views.trace import at_text, step_traces_text, trace_text


def show(text: str) -> None:
    """A magic's text, made visible first: graphs and traces name the learner's own classes and keys."""
    text = visible(text)
    display({"text/plain": text, "text/html": html_block(text)}, raw=True)


@magics_class
class PanelMagics(Magics):
    def __init__(self, shell, extension) -> None:
        super().__init__(shell)
        self.extension = extension

    @property
    def _inspector(self):
        return self.extension.cells.inspector

    def _tensor(self, name: str):
        tensor = self._inspector.resolve(name)
        if tensor is None:
            raise UsageError(f"no live tensor named {name!r} (see %tensors for the names; a tensor made in "
                             "this cell is named once the cell has run)")
        return tensor

    @line_magic
    def tensors(self, line: str) -> None:
        """%tensors: every live tensor, as a table."""
        show(tensor_table(list(self.extension.cells.rows.values()), all_rows=True))

    @line_magic
    def graph(self, line: str) -> None:
        """%graph NAME: NAME's autograd graph as boxes and arrows down to its leaves."""
        name = _needs(line, "a tensor name, e.g. %graph y")
        graph = graph_of(self._tensor(name), self._inspector.names_by_id())
        graph["root"] = name
        show(graph_drawing_text(graph, None))  # boxes and arrows, as the TUI's %graph (a cell scrolls sideways)

    @line_magic
    def check(self, line: str) -> None:
        """%check NAME: NAME's formula, its symbolic gradient per leaf, and what .grad holds."""
        name = _needs(line, "a tensor name, e.g. %check y")
        self.extension.cells.looked_at()
        show(render_check(symbolic.check_tensor(self.extension.cells.namespace(), name, self._inspector.resolve)))

    @line_magic
    def trace(self, line: str) -> None:
        """%trace NAME previews backward from a tensor; %trace STATEMENT runs it with its backward recorded."""
        arg = _needs(line, "a tensor name (%trace loss) or a statement (%trace loss.backward())")
        inspector = self._inspector
        if is_row_name(self.extension.cells, arg):
            tensor = self._tensor(arg)
            names = inspector.names_by_id()
            retained = [t for t in map(inspector.resolve, names.values()) if t is not None and t.retains_grad]
            try:
                show(trace_text(word_trace(preview(tensor, arg, names, retained))))
            except TraceError as exc:
                raise UsageError(request_error(exc.code, exc.names)) from None
            return
        tracer = StepTraces(inspector.names_by_id(), self.shell.user_ns)
        with tracer.recording():
            self.shell.ex(arg)  # the learner's statement, run as the cell's code
        show(step_traces_text(word_trace(tracer.result())))

    @line_magic
    def at(self, line: str) -> None:
        """%at N: the table as it stood after cell N (nothing is re-run)."""
        timeline = self.extension.cells.timeline
        now = self.shell.execution_count
        try:
            past = timeline.state_at(parse_step(_needs(line, "a cell number, e.g. %at 3"), now))
        except GradreplUsageError as exc:
            raise UsageError(str(exc)) from None
        show(at_text(past.step, past.source, past.rows, past.changed, past.removed, now - 1))

    @line_magic
    def gradrepl(self, line: str) -> None:
        """%gradrepl off|on: stop or resume the panel's inspection (off costs a cell nothing)."""
        word = line.strip()
        extension = self.extension
        if word == "off":
            extension.on = False
            extension.cells.stop_recording()
            extension.panel.on = False
            print("gradrepl panel off: cells are not inspected (%gradrepl on resumes)")
        elif word == "on":
            extension.on = True
            if extension.panel is None or extension.panel.comm is None:
                extension.show_panel()  # the old one was closed
            extension.panel.on = True
            print("gradrepl panel on")
        else:
            raise UsageError("%gradrepl needs off or on")


def _needs(line: str, what: str) -> str:
    arg = line.strip()
    if not arg:
        raise UsageError(f"this magic needs {what}")
    return arg
