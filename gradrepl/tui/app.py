"""The gradrepl TUI: the console on the left, the live tensor panel on the right.

A thin face over `Session`: typed steps and lesson turns wait in one StepQueue
(session/steps.py); every kernel call runs in an async worker on the app's own
event loop and posts a message from messages.py, which the handlers render.
Lesson code reaches the kernel through the queue's Door and comes back as ordinary
StepFinished messages. Widgets reach the app only through messages (InputSubmitted, ...).

This module composes the screen, binds the keys and wires the widgets' messages; the app's
jobs are its parts, one a module: kernel_workers.py (the kernel, in workers), step_replies.py
(what the workers post, rendered), panel_views.py (details, trace and timeline views) and
leaving_app.py (asking before the namespace goes; quitting; a hung-up terminal).
"""

from __future__ import annotations

import gc
import subprocess
import sys

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical

from gradrepl.history import History, default_path
from gradrepl.client.options import KernelOptions
from gradrepl.session.state import KernelState
from gradrepl.tui.app_part import found
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.commands import GradReplCommands
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.key_footer import KeyFooter
from gradrepl.tui.kernel_workers import KernelWorkers
from gradrepl.tui.leaving_app import LeavingApp
from gradrepl.tui.messages import (
    CompletionRequested,
    ConsoleNotice,
    ConsolePageRequested,
    FocusConsole,
    InputSubmitted,
    QuitRequested,
)
from gradrepl.tui.panel_views import PanelViews
from gradrepl.tui.status_bar import StatusBar
from gradrepl.tui.step_replies import StepReplies
from gradrepl.tui.tensors.tensor_table import TensorTable
from gradrepl.tui.tensors.trace_view import TraceView
from gradrepl.tui.unicode_width import align_with_terminal

WELCOME = (
    "gradrepl · importing torch… type away: steps run as soon as it is in.\n"
    "Enter runs · Ctrl+J new line · Tab completes · Ctrl+R history · Ctrl+P commands · %help magics"
)


# The lesson pane (the course, markdown-it, yaml, the tutor) is imported when a lesson opens, not before the
# first frame: queries name it by its id.
LESSON_PANE = "#lesson"


def lesson_pane(app: GradReplApp, *args, **kwargs):
    """The pane, with the engine's parts built here and handed in (widgets never build the engine)."""
    from gradrepl.session.steps import Door
    from gradrepl.tui.lesson.pane import LessonPane
    from gradrepl.tutor.lesson_parts import LessonParts

    door = app.steps.door() if app.steps is not None else Door(None)  # no kernel: the course still shows
    app.lesson_parts = LessonParts.build(door, app.options)
    return LessonPane(app.lesson_parts, *args, **kwargs)


MIN_CONSOLE = 20  # columns magic output is drawn to, however narrow the console


class GradReplApp(KernelWorkers, StepReplies, PanelViews, LeavingApp, App):
    """The tutor's main screen (its parts before App: Textual dispatches along the MRO)."""

    CSS_PATH = "app.tcss"
    TITLE = "gradrepl"
    COMMANDS = App.COMMANDS | {GradReplCommands}
    # Below 110 columns the panel moves under the console.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("ctrl+c", "interrupt", "Interrupt", priority=True, id="interrupt"),
        Binding("f8", "kill", "Kill kernel", id="kill"),
        Binding("f2", "toggle_focus", "Input ⇄ tensors", id="toggle_focus"),
        Binding("f9", "toggle_library_frames", "Torch frames", id="toggle_library_frames"),
        Binding("escape", "close_details", "Close details", id="close_details"),
        Binding("escape", "focus_input", "Back to the input", show=False),
        Binding("f3", "timeline(-1)", "Earlier step", id="timeline_back"),
        Binding("f4", "timeline(1)", "Later step", id="timeline_forward"),
        Binding("ctrl+n", "lesson_next", "Next step", id="lesson_next"),
        Binding("f5", "lesson_check", "Check task", id="lesson_check"),
        Binding("ctrl+q", "quit", "Quit", priority=True, id="quit"),
    ]

    def __init__(self, options: KernelOptions | None = None, *, start_kernel: bool = True,
                 history: History | None = None, learn: bool = False, lesson_id: str | None = None,
                 lessons_dir: str | None = None) -> None:
        super().__init__()
        align_with_terminal()  # Devanagari vowel signs take the cell the terminal gives them
        # `gradrepl learn [ID]`: the lesson pane beside the console (lesson_pane.py).
        self.learn = (lesson_id, lessons_dir) if learn else None
        self.options = options or KernelOptions()
        self.repl_history = history if history is not None else History(default_path())
        # Made once the first frame is out (its imports are the kernel client and the magics), or before it
        # by what needs it first (a lesson pane composed with the console): make_session, start_session.
        self._start_kernel = start_kernel
        self._session_started = False
        self.session = None
        self.steps = None
        self.kernel_state = KernelState.STARTING
        self.details_name: str | None = None
        self.steps_in_kernel = 0  # steps run since the kernel was last fresh: what a kill would lose
        self.kernel_started = False  # a first kernel came up (F8 after a failed start starts one again)
        self._leaving = False  # the quit question is being asked: Ctrl-D or Ctrl-Q again leaves
        self._exiting_for_hangup = False
        self.lesson_parts = None  # the lesson engine's parts, once a lesson pane is open (lesson_pane)
        self._reply_hold = None  # (batch, timer) while repaints wait for a step's reply (REPLY_HOLD)

    def compose(self) -> ComposeResult:
        self._apply_breakpoint()  # before the widgets mount: styled once, in the layout they first show
        with Horizontal(id="main", classes="-learn" if self.learn else None):
            if self.learn:
                self.make_session()  # the pane is given the queue's door
                yield lesson_pane(self, *self.learn)
            with Vertical(id="console"):
                yield ConsoleLog(id="log")
                yield CodeInput(self.repl_history, id="input")
            with Vertical(id="inspector"):
                yield TensorTable(id="tensors")  # the past, trace and details views: on first use (panel_views.py)
        yield StatusBar(id="status")
        yield KeyFooter()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and event.key == "enter":
            self._hold_for_reply()
        await super().on_event(event)

    def on_key(self, event: events.Key) -> None:
        """Typed text belongs to the console: a printable key pressed on the tensor panel (which takes no
        text) goes into the console's input, and the keyboard with it."""
        if event.is_printable and event.character and isinstance(self.focused, TensorTable):
            code_input = self.query_one(CodeInput)
            code_input.focus()
            code_input.insert(event.character)
            event.stop()

    def on_mount(self) -> None:
        self.query_one(ConsoleLog).write_notice(WELCOME)
        if not self.learn:
            self.query_one(CodeInput).focus()
        self.show_next_number()
        self.query_one("#inspector").border_title = "tensors"
        self.query_one("#console").border_title = "console"
        self._busy_timer = self.set_interval(0.1, self._tick, pause=True)
        self.call_after_refresh(self._after_first_frame)
        self.call_after_refresh(self.fit_console)
        self._watch_terminal()

    def _after_first_frame(self) -> None:
        # The zygote cli started has been importing torch all along: asking it for the kernel a frame later (the
        # footer's keys drawn first, not after the session's imports) loses nothing.
        self.call_after_refresh(self._start_session_late)
        if not gc.isenabled():  # cli.main held the collector off while the first screen was built
            gc.freeze()  # what start-up made lives as long as the app: later collections skip it
            gc.enable()

    def _start_session_late(self) -> None:
        self.start_session()
        self.fit_console()  # the new session is told the console's width (fit_console ran before it was made)

    def _apply_breakpoint(self) -> None:
        # Textual sets the breakpoint class on the first Resize, after the first frame is
        # painted: without this an 80-column terminal first sees the wide layout, then a flip.
        width = self.size.width
        active = [name for minimum, name in self.HORIZONTAL_BREAKPOINTS if width >= minimum][-1]
        self.screen.update_classes({name: name == active for _, name in self.HORIZONTAL_BREAKPOINTS})
        self.fit_panel()

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit_panel)  # after Textual has set the new breakpoint's class
        self.call_after_refresh(self.fit_console)

    def on_app_focus(self, event: events.AppFocus) -> None:
        # A browser tab that reattaches to this tutor (gradrepl serve, after a reload) starts from a
        # blank terminal and focuses: paint the whole screen, not only what changed since the last frame.
        self.screen.refresh()

    def fit_console(self) -> None:
        """Magic output (%at, %check, %help, %trace, %tensors) is drawn to the console's width, a row a line."""
        logs = self.query(ConsoleLog)
        if self.session is not None and logs:
            log = logs.first()
            # the log's text, less the scrollbar a long output brings
            self.session.width = max(MIN_CONSOLE, log.scrollable_content_region.width - (not log.show_vertical_scrollbar))
            self.session.one_line_rows = True

    async def on_unmount(self) -> None:
        # The kernel process must not outlive the app (tests run many apps in one process).
        if self.lesson_parts is not None:
            await self.lesson_parts.close()
        if self.session is not None:
            await self.session.close()

    # -- what the widgets post -------------------------------------------------
    @on(InputSubmitted)
    def _input_submitted(self, message: InputSubmitted) -> None:
        self.run_typed(message.source)

    @on(CompletionRequested)
    def _completion_requested(self, message: CompletionRequested) -> None:
        self.fetch_completions(message.code, message.cursor, message.typing)

    @on(QuitRequested)
    def _quit_requested(self) -> None:
        self.action_quit()

    @on(ConsolePageRequested)
    def _page_console(self, message: ConsolePageRequested) -> None:
        log = self.query_one(ConsoleLog)
        if message.pages < 0:
            log.scroll_page_up()
        else:
            log.scroll_page_down()

    @on(ConsoleNotice)
    def _console_notice(self, message: ConsoleNotice) -> None:
        self.query_one(ConsoleLog).write_notice(message.text, message.style)

    @on(FocusConsole)
    def _focus_console(self, message: FocusConsole) -> None:
        code_input = self.query_one(CodeInput)
        if message.text and not code_input.text.strip():  # never over what the learner typed
            code_input.load_text(message.text.rstrip("\n"))
            code_input.move_cursor(code_input.document.end)
        self.focus_input()

    # -- the keys ------------------------------------------------------------
    def action_interrupt(self) -> None:
        self.interrupt_step()

    async def open_lessons(self) -> None:
        """The lesson pane beside the console (the palette's "lesson: open"); its picker if already open."""
        panes = self.query(LESSON_PANE)
        if panes:
            panes.first().show_picker()
            return
        await self.query_one("#main").mount(lesson_pane(self),
                                            before="#console")
        self.query_one("#main").add_class("-learn")

    async def action_lesson_next(self) -> None:
        for pane in self.query(LESSON_PANE):
            await pane.advance()

    def action_lesson_check(self) -> None:
        for pane in self.query(LESSON_PANE):
            pane.check_task()

    def action_focus_input(self) -> None:
        self.focus_input()

    def focus_input(self) -> None:
        self.query_one(CodeInput).focus()

    def action_toggle_library_frames(self) -> None:
        self.query_one(ConsoleLog).toggle_library_frames()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Interrupt exists only while a step runs; otherwise Ctrl-C copies or clears the input.
        if action == "interrupt":
            return self.kernel_state == "busy"
        if action == "kill":
            return self.session is not None and self.kernel_state in ("busy", "idle", "failed")
        if action == "close_details":
            return self.details_name is not None or any(view.display for view in self.panel_views(TraceView))
        if action == "toggle_library_frames":  # only once a traceback has library frames to show
            return (log := found(self, ConsoleLog)) is not None and log.has_library_frames
        if action == "focus_input":  # Escape brings typing back to where it shows
            return not isinstance(self.focused, CodeInput)
        if action == "lesson_next":
            return (pane := found(self, LESSON_PANE)) is not None and pane.can_advance()
        if action == "lesson_check":
            return (pane := found(self, LESSON_PANE)) is not None and pane.open_task() is not None
        return True

    def tensor_names(self) -> list[str]:
        """Live tensor names in panel order (for the command palette)."""
        return self.query_one(TensorTable).names

    def run_subcommand(self, name: str) -> None:
        """Leave the TUI for `gradrepl NAME` (lessons, quiz) and come back after."""
        with self.suspend():
            subprocess.run([sys.executable, "-m", "gradrepl.cli", name], check=False)


def run_app(options: KernelOptions) -> int:
    """Entry point for `gradrepl` with no command: run the TUI until the learner quits."""
    app = GradReplApp(options)
    app.run()
    return app.return_code or 0
