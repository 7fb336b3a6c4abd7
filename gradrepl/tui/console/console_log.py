"""The console's output log: each step as the learner typed it, then what it printed and returned."""

from __future__ import annotations

from rich.cells import cell_len
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.strip import Strip
from textual.widgets import RichLog

from gradrepl.protocol.messages import ErrorInfo, StepResult
from gradrepl.terminal_text import visible
from gradrepl.tui.view_guard import shows_reply

PROMPT = ">>> "
CONTINUATION = "... "
# The echo of the step that made the trace view's current node: a background over its lines (the code's
# own colours kept) and, where the line has room, words at its end, readable without colour.
LIT_ECHO = Style(bgcolor="grey30", bold=True)


class Echo:
    """A step's echoed source as written to the log, with the number it took (None: no number).

    The prompts take a margin as wide as the first, the code wraps beside it, line for line as the two-column
    Table.grid it replaced drew them (a prompt beside each of the code's lines as drawn, blank below the last):
    the table measured and laid out its columns again at every write, 0.5 ms of each Enter."""

    def __init__(self, prompts: Text, code: Text, number: int | None) -> None:
        self.prompts = prompts
        self.code = code
        self.number = number
        self.margin = max(cell_len(line) for line in prompts.plain.split("\n"))

    def _code_options(self, console, options):
        """The code's column: what the code needs, at most what the prompts leave."""
        room = options.update(width=max(1, options.max_width - self.margin), justify=None, no_wrap=False,
                              overflow="ellipsis", height=None, highlight=False)
        return room.update_width(max(1, min(room.max_width, Measurement.get(console, room, self.code).maximum)))

    def __rich_console__(self, console, options):
        blank = Style.null()  # the table's cell style, padding included
        code_options = self._code_options(console, options)
        code = console.render_lines(self.code, code_options, style=blank)
        prompts = console.render_lines(self.prompts, options.update(
            width=self.margin, justify=None, no_wrap=True, overflow="ellipsis", height=None, highlight=False),
            style=blank)
        height = max(len(code), len(prompts))
        prompts = Segment.set_shape(prompts, self.margin, height, style=blank)
        code = Segment.set_shape(code, code_options.max_width, height, style=blank)
        new_line = Segment.line()
        for prompt, line in zip(prompts, code):
            yield from prompt
            yield from line
            yield new_line

    def __rich_measure__(self, console, options) -> Measurement:
        code = Measurement.get(console, self._code_options(console, options), self.code)
        return Measurement(self.margin + code.minimum, self.margin + code.maximum).clamp(max_width=options.max_width)


class ConsoleLog(RichLog):
    """Append-only log of steps; learner text is always plain Text, never markup."""

    KEEP = 2000  # renderables kept for re-wrapping after a resize
    # RichLog grows virtual_size at every write, and Widget's reactive for it lays the screen out again and
    # repaints every line of the log (then the compositor renders every widget the union of the dirty
    # regions crosses: the panel, the borders), ~3 ms of each Enter. The log's size is app.tcss's, never its
    # content's: a write repaints its new lines and the scrollbar itself (write).
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False, repaint=False)

    def __init__(self, **kwargs) -> None:
        super().__init__(wrap=True, markup=False, highlight=False, auto_scroll=True, min_width=20, **kwargs)
        self._written: list = []
        self._wrapped_at = 0
        self.show_library_frames = False  # F9: torch's frames in every traceback, or folded
        self.has_library_frames = False  # some traceback in the log has frames F9 would open
        self._echo_lines: dict[int, range] = {}  # step number -> the log lines its echo takes (the latest echo)
        self.lit_step: int | None = None  # the step whose echo is lit (the trace view's current node)
        self._lit_words = ""
        self._following_end = True  # the end is in view (not scrolled up): kept in view as the log resizes
        self._frame_style = None  # the log's style while a frame renders its lines (render_lines)

    def _emit(self, content) -> None:
        self._written.append(content)
        del self._written[: -self.KEEP]
        self.write(self._renderable(content))

    def _renderable(self, content):
        # Errors are kept as ErrorInfo so F9 can draw them again with library frames open or folded.
        if not isinstance(content, ErrorInfo):
            return content
        from gradrepl.tui.console.traceback_view import error_view  # at the first traceback

        return error_view(content, self.show_library_frames)

    def on_resize(self) -> None:
        # RichLog wraps once, at write time: re-wrap everything when the width changes.
        width = self.scrollable_content_region.width
        if width != self._wrapped_at and self._written:
            self._wrapped_at = width
            self._write_again()
        self._wrapped_at = width
        # Made shorter (the details or a trace opened under it): the lit echo stays in view, else the last
        # steps, unless the learner had scrolled up.
        if not self._show_lit() and self._following_end:
            self.scroll_end(animate=False, immediate=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # The learner scrolled up (or back down to the end): a resize keeps what they chose in view.
        self._following_end = new_value >= self.max_scroll_y

    def _write_again(self) -> None:
        self.clear()
        for content in self._written:
            self.write(self._renderable(content))

    def write(self, content, *args, **kwargs):
        # Where each echo lands, so it can be lit later; a write deferred until the size is known lands
        # nothing now and comes back through here when it is rendered.
        start = len(self.lines)
        before = self.virtual_size
        written = super().write(content, *args, **kwargs)
        if self.virtual_size != before:
            self._grown(before, start)
        if isinstance(content, Echo) and content.number is not None and len(self.lines) > start:
            self._echo_lines[content.number] = range(start, len(self.lines))
        return written

    def _grown(self, before: Size, start: int) -> None:
        """What a layout did for the lines written from `start`: the scrollbar told (while the log fits its
        window the thumb fills the track either way, and its repaint is a millisecond), the new lines drawn
        (a scroll to the end, after the frame, repaints all)."""
        if max(before.height, self.virtual_size.height) > self.scrollable_content_region.height:
            self._scroll_update(self.virtual_size)
        self.refresh(Region(0, start - self.scroll_offset.y, self.size.width, len(self.lines) - start))

    def clear(self):
        self._echo_lines = {}
        return super().clear()

    def light_step(self, step: int | None, words: str = "") -> None:
        """Light the echo of step `step` (In [step]), scrolled into view, with `words` at its first line's
        end where they fit; None: no echo lit, and the log back at its end."""
        if step == self.lit_step and words == self._lit_words:
            return
        self.lit_step, self._lit_words = step, words
        self.refresh()
        if not self._show_lit() and step is None:
            self.scroll_end(animate=False)

    def _show_lit(self) -> bool:
        """Scroll the lit echo into view if it is not; False when no echo is lit."""
        lines = self.lit_lines()
        if not lines:
            return False
        room = max(1, self.scrollable_content_region.height)
        if not (self.scroll_y <= lines.start and lines.stop <= self.scroll_y + room):
            self.scroll_to(y=max(0, lines.start - max(0, room - len(lines)) // 2), animate=False)
        return True

    def lit_lines(self) -> range | None:
        """The log lines of the lit echo (None when none is lit, or its echo has left the log)."""
        return self._echo_lines.get(self.lit_step) if self.lit_step is not None else None

    def render_lines(self, crop) -> list[Strip]:
        # RichLog.render_line walks up the DOM for the log's style at every line, and a step repaints
        # every line in view: the walk is made once a frame here.
        self._frame_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._frame_style = None

    def render_line(self, y: int) -> Strip:
        if self._frame_style is None:
            strip = super().render_line(y)
        else:  # RichLog.render_line, with the frame's style
            scroll_x, scroll_y = self.scroll_offset
            strip = self._render_line(scroll_y + y, scroll_x, self.scrollable_content_region.width).apply_style(
                self._frame_style)
        lines = self.lit_lines()
        index = self.scroll_offset.y + y
        if lines is None or index not in lines:
            return strip
        if index == lines.start and self._lit_words:
            strip = _tagged(strip, f" ◀ {self._lit_words}")
        return Strip(Segment.apply_style(strip, post_style=LIT_ECHO), strip.cell_length)

    def toggle_library_frames(self) -> None:
        """Open (or fold again) the library frames of every traceback in the log."""
        self.show_library_frames = not self.show_library_frames
        self._write_again()

    def write_source(self, source: str, number: int | None = None) -> None:
        """Echo a step's source with Python highlighting, prompts in the margin: `In [N]: ` for a
        numbered step, as IPython's, `>>> ` for an input that takes no number (a magic that looks)."""
        from gradrepl.tui.console.python_text import python_text  # pygments: at the first step, not the first frame

        source = visible(source)  # typed (or pasted) by the learner
        lines = source.splitlines() or [""]
        first = f"In [{number}]: " if number is not None else PROMPT
        more = CONTINUATION.rjust(len(first))
        prompts = Text("\n".join([first] + [more] * (len(lines) - 1)), style="bold green")
        code = python_text(source, word_wrap=True)
        self._emit(Echo(prompts, code, number))

    @shows_reply("the console")
    def write_result(self, result: StepResult) -> None:
        """Everything a step produced except its source, in reading order (its text visible already:
        kernel text is made so where the client decodes it)."""
        # the views of replies: with the first reply, not before the first frame
        from gradrepl.tui.console.help_view import is_help
        from gradrepl.views.steps import display_text

        if result.stdout:
            self._emit(Text(result.stdout.rstrip("\n")))
        if result.stderr:
            self._emit(Text(result.stderr.rstrip("\n"), style="yellow"))
        if is_help(result.display):  # the page itself opens in the help view
            self._emit(Text(f"help: {result.display.get('title', '')} (opened in the help view)", style="dim"))
        elif result.display:
            self._emit(Text(display_text(result.display).rstrip("\n")))
        if result.result is not None:
            self._emit(Text(result.result))
        if result.error is not None:
            self.has_library_frames |= any(frame["origin"] == "library" for frame in result.error.frames)
            self._emit(result.error)
        for note in result.notes:
            self._emit(Text.assemble(("note: ", "bold yellow"), (note, "yellow")))
        if result.kernel_event:
            self._emit(Text(result.kernel_event, style="bold magenta"))

    def write_notice(self, text: str, style: str = "dim") -> None:
        """A line from gradrepl itself (kernel restarted, reset, ...); it may quote the kernel or a lesson."""
        self._emit(Text(visible(text), style=style))


def _tagged(strip: Strip, tag: str) -> Strip:
    """`tag` over the blank end of `strip`; the strip as it was when its end is not blank."""
    width = strip.cell_length
    if len(tag) >= width or strip.crop(width - len(tag) - 1, width).text.strip():
        return strip
    return Strip([*strip.crop(0, width - len(tag)), Segment(tag)], width)

