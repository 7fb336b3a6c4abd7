"""The live tensor panel: one row per named tensor, drawn line by line (only what is on screen).

A step costs what it changed, not what is alive: `apply_step` updates the
rows it was given and marks only their lines dirty (all lines in view only
when rows moved or a column grew); Textual coalesces repaints to one per
frame, and `render_line` builds only dirty lines in view. Column widths only
ever grow (measuring every row again would cost a pass over the table).

The name column stays put; a sideways scroll moves a whole column. The four
facts come first, so at 80 columns and wider they are in view before any
scroll. A step that changes rows out of view scrolls to the newest one (unless
the learner is moving around the table) and the last line counts the rest:
"2 changed below ↓".
"""

from __future__ import annotations

from typing import Any, Iterable

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from gradrepl.views.tables import COLUMNS, GradBefore
from gradrepl.tui.tensors.cells import row_cells

LIT_STYLE = Style(bold=True, color="yellow")
HEADER_STYLE = Style(bold=True)
MARKER_STYLE = Style(color="black", bgcolor="yellow", bold=True)
CURSOR_STYLE = Style(reverse=True)
TRACED_STYLE = Style(bold=True, color="black", bgcolor="cyan")  # the tensor the trace view's node made
MARK = "● "
TRACED_MARK = "▶ "
MORE = " ▶"                  # the header's last cells: columns off to the right
GAP = 2                      # spaces between columns
FACTS = ("requires_grad", "is_leaf", "grad_fn", "grad")  # always in view before a sideways scroll
MIN_NAME = 8                 # the name column never gets narrower than this
MIN_GRAD = 10                # .grad may be cut to this before grad_fn is
MIN_CROPPED = 6              # a last column narrower than this is left out rather than cut
NARROWEST = {"grad_fn": MIN_CROPPED, "grad": 5}  # cells kept by a fact cut when space runs out


class TensorTable(Widget, can_focus=True):
    """Rows changed in the last step are lit; a row's name carries its aliases."""

    DEFAULT_CSS = """
    TensorTable {
        height: 1fr;
    }
    """
    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "cursor(-1000000000)", "First", show=False),
        Binding("end", "cursor(1000000000)", "Last", show=False),
        Binding("left", "columns(-1)", "Columns left", show=False),
        Binding("right", "columns(1)", "Columns right", show=False),
        Binding("enter", "select", "Details", show=False),
    ]

    class RowSelected(Message):
        """The learner chose a row (Enter or a click): open its details."""

        def __init__(self, table: TensorTable, name: str) -> None:
            super().__init__()
            self.table = table
            self.name = name

        @property
        def control(self) -> TensorTable:
            return self.table

    columns: dict[str, str] = COLUMNS  # key -> header; the past panel adds one

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._scrolling = [key for key in self.columns if key != "name"]  # the columns a sideways scroll moves
        self._order: list[str] = []            # names in panel order (first appearance)
        self._index: dict[str, int] = {}       # name -> position in _order
        self._cells: dict[str, dict[str, Text]] = {}
        self._lit: dict[str, set[str]] = {}    # name -> columns changed by the last step
        self._held: dict[str, int] = {}        # name -> bytes its graph saved, as last shown
        self._freed: set[str] = set()          # rows whose graph a backward freed (it held bytes, then none)
        self._widths = self._header_widths()
        self.top = 0              # first row in view
        self.cursor = 0           # row the keys move
        self.first_column = 0     # first of the scrolling columns in view
        self._newest: int | None = None  # row the last step asks to keep in view (None: the learner steers)
        self.traced: str | None = None  # the row the trace view points at, lit while it does
        self._grads: dict[str, Any] = {}  # name -> its .grad summary as last shown, to see what a backward added

    # -- the step ------------------------------------------------------------
    def apply_step(self, changed: Iterable[dict[str, Any]], removed: Iterable[str],
                   step: int | None = None) -> tuple[list[str], list[str]]:
        """Show one step's delta: add or patch `changed` rows, drop `removed` names; repaint only their lines.
        A .grad that step `step` added to (a second backward) says what it added."""
        previously_lit = self._lit
        marker_before = self.changed_out_of_view()
        layout_before = (dict(self._widths), self.top, len(self._order), self.first_column)
        self._lit = {}
        changed_names: list[str] = []
        for row in changed:
            name = row["name"]
            changed_names.append(name)
            self._note_graph(row)
            cells = self.cells_of(row, (self._grads.get(name), step) if step is not None else None)
            self._grads[name] = row.get("grad")
            old = self._cells.get(name)
            self._cells[name] = cells
            if old is None:
                self._index[name] = len(self._order)
                self._order.append(name)
                self._lit[name] = set(self.columns)
            else:
                self._lit[name] = {key for key in self.columns if cells[key] != old[key]} | {"name"}
            for key, cell in cells.items():
                if cell.cell_len > self._widths[key]:
                    self._widths[key] = cell.cell_len
        removed_names = [name for name in removed if name in self._cells]
        if removed_names:
            self._remove(removed_names)
        self._follow(changed_names)
        if (dict(self._widths), self.top, len(self._order), self.first_column) != layout_before:
            self.refresh()  # rows moved or columns grew: every line in view is new
        else:
            self._repaint_rows(set(changed_names) | set(previously_lit), marker_before)
        return changed_names, removed_names

    def _repaint_rows(self, names: set[str], marker_before: tuple[int, int]) -> None:
        """Mark dirty only the lines of these rows (and the marker line if its count changed)."""
        width, height = self.size
        lines = {1 + self._index[name] - self.top for name in names if name in self._index}
        if marker_before != self.changed_out_of_view():
            lines.add(height - 1)
        regions = [Region(0, y, width, 1) for y in sorted(lines) if 1 <= y < height]
        if regions:
            self.refresh(*regions)

    def point_at(self, name: str | None) -> None:
        """Light the row of `name` (the trace view's current node made it), bringing it into view; None: none."""
        if name == self.traced:
            return
        self.traced = name if name in self._index else None
        if self.traced is not None:
            index = self._index[self.traced]
            height = self._body_height()
            if not self.top <= index < self.top + height:
                self.top = max(0, index - height // 2)
        self.refresh()

    def _remove(self, names: list[str]) -> None:
        gone = set(names)
        for name in names:
            del self._cells[name]
            self._lit.pop(name, None)
            self._held.pop(name, None)
            self._freed.discard(name)
            self._grads.pop(name, None)
        self._order = [name for name in self._order if name not in gone]
        self._index = {name: i for i, name in enumerate(self._order)}
        if not self._order:
            self._widths = self._header_widths()
        self.cursor = min(self.cursor, max(0, len(self._order) - 1))
        self.top = min(self.top, max(0, len(self._order) - self._body_height()))

    def _follow(self, changed: list[str]) -> None:
        """Bring the newest changed row into view, unless the learner is moving around the table."""
        indices = [self._index[name] for name in changed if name in self._index]
        self._newest = max(indices) if indices and not self.has_focus else None
        self._show_newest()
        if self._newest is not None:
            self._show_changed_columns(self._order[self._newest])

    def _show_changed_columns(self, name: str) -> None:
        """Scroll sideways the fewest columns that bring what the step changed in the newest row into view
        (after opt.step(), its value); back to the first column when the change is in view from there."""
        lit = self._lit.get(name, set())
        wanted = {key for key in lit if key in self._scrolling}
        width = self.size.width - len(MORE)
        if lit == set(self.columns) or width <= 0:
            self.first_column = 0  # a new row: its facts first
            return
        for first in range(len(self._scrolling)):
            self.first_column = first
            if wanted <= {key for key, _ in self._layout(width)[1]}:
                return
        self.first_column = 0

    def _show_newest(self, height: int | None = None) -> None:
        if self._newest is None:
            return
        height = self._body_height(height)
        if not self.top <= self._newest < self.top + height:
            self.top = max(0, self._newest - height + 1)
        if self.changed_out_of_view() != (0, 0) and self._newest >= self.top + height - 1:
            self.top += 1  # the marker line covers the last row: keep the newest above it

    def on_resize(self, event: events.Resize) -> None:
        # Grown taller, the rows scrolled past come back: no empty lines below while rows hide above.
        self.top = min(self.top, max(0, len(self._order) - self._body_height(event.size.height)))
        self._show_newest(event.size.height)
        self.refresh()

    def cells_of(self, row: dict[str, Any], before: GradBefore | None = None) -> dict[str, Text]:
        """A row's cells, keyed like `columns` (`before`: its .grad before step N, views.tables.grad_words)."""
        return row_cells(row, graph_freed=row["name"] in self._freed, before=before)

    def _note_graph(self, row: dict[str, Any]) -> None:
        """A row that held saved bytes and now holds none, grad_fn kept: backward freed its graph."""
        name, held = row["name"], row.get("saved_bytes") or 0
        if held or not row.get("grad_fn"):
            self._freed.discard(name)
        elif self._held.get(name):
            self._freed.add(name)
        self._held[name] = held

    def _header_widths(self) -> dict[str, int]:
        return {key: len(header) for key, header in self.columns.items()}

    def show_rows(self, rows: Iterable[dict[str, Any]], lit: set[str], freed: Iterable[str] = ()) -> None:
        """Show exactly `rows` (a whole table, not a step's delta), the names in `lit` lit, those in `freed`
        as `graph freed`; from the top."""
        self._order, self._index, self._cells, self._lit, self._held, self._freed = [], {}, {}, {}, {}, set(freed)
        self._widths = self._header_widths()
        self.top = self.cursor = 0
        self._newest = None
        for row in rows:
            name = row["name"]
            self._index[name] = len(self._order)
            self._order.append(name)
            self._cells[name] = cells = self.cells_of(row)
            for key, cell in cells.items():
                self._widths[key] = max(self._widths[key], cell.cell_len)
            if name in lit:
                self._lit[name] = set(self.columns)
        self.refresh()

    # -- what the app reads -------------------------------------------
    @property
    def names(self) -> list[str]:
        """Names in the order the panel shows them."""
        return list(self._order)

    def visible_names(self) -> list[str]:
        """Names of the rows on screen now."""
        return self._order[self.top:self.top + self._body_height()]

    def changed_out_of_view(self) -> tuple[int, int]:
        """How many rows the last step changed above and below the view."""
        above = below = 0
        bottom = self.top + self._body_height()
        for name in self._lit:
            index = self._index.get(name)
            if index is None:
                continue
            above += index < self.top
            below += index >= bottom
        return above, below

    # -- drawing ---------------------------------------------------------------
    def _body_height(self, height: int | None = None) -> int:
        return max(1, (self.size.height if height is None else height) - 1)  # the header takes the first line

    def _layout(self, width: int) -> tuple[int, list[tuple[str, int]], bool]:
        """Name width, the (column, width) pairs in view, and whether more columns are off to the right.

        The name gives way to the four facts: it gets what they leave (at least MIN_NAME cells), and
        .grad shrinks to MIN_GRAD before grad_fn is cut; if even that does not fit, every fact keeps a
        few cells (grad_fn cut with …) rather than one falling off the edge.
        """
        facts = sum(GAP + self._widths[key] for key in FACTS) - self._widths["grad"] + min(
            self._widths["grad"], MIN_GRAD)
        name_width = max(MIN_NAME, min(self._widths["name"], width - len(MARK) - facts))
        x = len(MARK) + name_width
        shown: list[tuple[str, int]] = []
        keys = self._scrolling[self.first_column:]
        for position, key in enumerate(keys):
            later_facts = sum(GAP + self._narrowest(k) for k in keys[position + 1:] if k in FACTS)
            want = self._widths[key]
            room = width - x - GAP - later_facts
            if want <= room:
                shown.append((key, want))
                x += GAP + want
            elif room >= MIN_CROPPED or key in FACTS:
                shown.append((key, max(1, room)))
                x += GAP + max(1, room)
                if key not in FACTS or not later_facts:
                    return name_width, shown, True
            else:
                return name_width, shown, True
        return name_width, shown, False

    def _facts_end(self, name_width: int, shown: list[tuple[str, int]]) -> int:
        """The cell just after the last fact column in view."""
        end = x = len(MARK) + name_width
        for key, column_width in shown:
            x += GAP + column_width
            if key in FACTS:
                end = x
        return end

    def _narrowest(self, key: str) -> int:
        """The fewest cells a fact column is given when space runs out (req and leaf are never cut)."""
        return min(self._widths[key], NARROWEST.get(key, self._widths[key]))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        name_width, shown, more = self._layout(width - len(MORE))
        if y == 0:
            return self._header(width, name_width, shown, more)
        above, below = self.changed_out_of_view()
        if (above or below) and y == self.size.height - 1:
            return self._marker(width, above, below)
        index = self.top + y - 1
        if index >= len(self._order):
            return Strip.blank(width, self.rich_style)
        name = self._order[index]
        console = self.app.console
        lit = self._lit.get(name, set())
        cells = self._cells[name]
        traced = name == self.traced
        segments = [Segment(TRACED_MARK, TRACED_STYLE) if traced else Segment(MARK if lit else "  ",
                                                                              LIT_STYLE if lit else None)]
        segments += _cell(cells["name"], name_width, "name" in lit, console)
        for key, column_width in shown:
            segments.append(Segment(" " * GAP))
            segments += _cell(cells[key], column_width, key in lit, console)
        # A change in a column off to the right is named at the row's end, over what it covers.
        in_view = {key for key, _ in shown}
        hidden = [self.columns[key] for key in self._scrolling if key in lit and key not in in_view]
        tag = "" if not hidden or lit == set(self.columns) else f" {', '.join(hidden)} changed ▶"  # new: all
        if tag and len(tag) > width - self._facts_end(name_width, shown):
            tag = MORE  # never over a fact
        strip = Strip(segments).adjust_cell_length(width - len(tag))
        if tag:
            strip = Strip([*strip, Segment(tag, LIT_STYLE)])
        if index == self.cursor and self.has_focus:
            strip = strip.apply_style(CURSOR_STYLE)
        elif traced:
            strip = strip.apply_style(TRACED_STYLE)
        return strip.apply_style(self.rich_style)

    def _header(self, width: int, name_width: int, shown: list[tuple[str, int]], more: bool) -> Strip:
        console = self.app.console
        segments = [Segment("◀ " if self.first_column else "  ", Style(dim=True))]
        segments += _cell(Text(self.columns["name"]), name_width, False, console)
        for key, column_width in shown:
            segments.append(Segment(" " * GAP))
            segments += _cell(Text(self.columns[key]), column_width, False, console)
        strip = Strip(segments).adjust_cell_length(width - len(MORE))
        strip = Strip([*strip, Segment(MORE if more else " " * len(MORE), Style(dim=True))])
        return strip.apply_style(HEADER_STYLE).apply_style(self.rich_style)

    def _marker(self, width: int, above: int, below: int) -> Strip:
        words = [f"{above} changed above ↑"] if above else []
        words += [f"{below} changed below ↓"] if below else []
        text = Text(" " + " · ".join(words) + " ", style=MARKER_STYLE)
        return Strip(_cell(text, width, False, self.app.console)).apply_style(self.rich_style)

    # -- keys and the mouse ------------------------------------------------------
    def action_cursor(self, delta: int) -> None:
        self._newest = None
        if not self._order:
            return
        self.cursor = max(0, min(len(self._order) - 1, self.cursor + delta))
        height = self._body_height()
        if self.cursor < self.top:
            self.top = self.cursor
        elif self.cursor >= self.top + height:
            self.top = self.cursor - height + 1
        self.refresh()

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * self._body_height())

    def action_columns(self, delta: int) -> None:
        _, _, more = self._layout(self.size.width - len(MORE))
        if (delta > 0 and more) or (delta < 0 and self.first_column > 0):
            self.first_column += delta
            self.refresh()

    def action_select(self) -> None:
        if self._order:
            self.post_message(self.RowSelected(self, self._order[self.cursor]))

    def on_click(self, event: events.Click) -> None:
        index = self.top + event.y - 1
        if event.y >= 1 and 0 <= index < len(self._order):
            self.cursor = index
            self.refresh()
            self.post_message(self.RowSelected(self, self._order[index]))

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._scroll(3)
        event.stop()

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._scroll(-3)
        event.stop()

    def _scroll(self, delta: int) -> None:
        self._newest = None
        self.top = max(0, min(max(0, len(self._order) - self._body_height()), self.top + delta))
        self.refresh()

    def on_focus(self) -> None:
        if not self.top <= self.cursor < self.top + self._body_height():
            self.cursor = min(self.top, max(0, len(self._order) - 1))
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()


def _cell(text: Text, width: int, lit: bool, console) -> list[Segment]:
    """One cell cropped (with …) or padded to `width` cells, lit in the step's colour."""
    cell = text.copy()
    if lit:
        cell.stylize(LIT_STYLE)
    cell.truncate(width, overflow="ellipsis", pad=True)
    return list(cell.render(console, end=""))
