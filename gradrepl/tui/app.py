"""The gradrepl TUI: the console on the left, the live tensor panel on the right.

A thin face over `Session`: typed steps and lesson turns wait in one StepQueue
(session/steps.py); every kernel call runs in an async worker on the app's own
event loop and posts a message from messages.py, which the handlers render.
Lesson code reaches the kernel through the queue's Door and comes back as ordinary
StepFinished messages. Widgets reach the app only through messages (InputSubmitted, ...).
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import subprocess
import sys

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import TextArea
from textual.worker import Worker, WorkerState

from gradrepl.history import History, default_path
from gradrepl.client.options import KernelOptions
from gradrepl.session import KernelState, Session, leaving
from gradrepl.session.state import said_once
from gradrepl.session.steps import Finished, NotRun, QueueEvent, Queued, Started, StepQueue
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.commands import GradReplCommands
from gradrepl.tui.confirm import Confirm
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.console.help_view import HelpView, is_help
from gradrepl.tui.key_footer import KeyFooter
from gradrepl.tui.tensors.details import TensorDetails
from gradrepl.tui.messages import (
    CompletionRequested,
    ConsoleNotice,
    ConsolePageRequested,
    DetailsLoaded,
    FocusConsole,
    InputSubmitted,
    KernelFailed,
    KernelReady,
    KernelRestarted,
    KernelStateChanged,
    QuitRequested,
    StepFailed,
    StepFinished,
    StepQueued,
    StepStarted,
)
from gradrepl.tui.panel_fit import fit_panel
from gradrepl.tui.status_bar import StatusBar
from gradrepl.tui.tensors.tensor_table import TensorTable
from gradrepl.tui.tensors.past_panel import PastPanel, target_step
from gradrepl.tui.tensors.trace_view import TraceView
from gradrepl.tui.terminal_watch import terminal_fds, terminal_gone
from gradrepl.tui.unicode_width import align_with_terminal
from gradrepl.tui.view_guard import ViewFailed, failure_words, shows_reply
from gradrepl.tui import worker_failures
from gradrepl.views.trace_story import echo_tag

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


HANGUP_CLOSE_TIMEOUT = 5.0  # seconds for the kernel and zygote to go after the terminal did
COMPLETING_AFTER = 0.3  # seconds a completion may take before the input says "completing…"
HANGUP_EXIT = 129  # 128 + SIGHUP, as a shell reports a hung-up job
MIN_CONSOLE = 20  # columns magic output is drawn to, however narrow the console
BORDER_TITLE_CHROME = 6  # a border title's corners and the spaces around it
# Enter on a step that runs at once holds the screen's repaints until its reply, at most this long (s):
# the cleared input, the echo and the panel's row are then drawn in one frame. Drawn as they came, the
# row waited for Textual's next frame, 17-33 ms after the cleared input's (its timer skips a slot).
REPLY_HOLD = 0.04


class GradReplApp(App):
    """The tutor's main screen."""

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
        # Made here, started on mount: the lesson pane is given it when composed.
        self.session = Session(self.options, on_state=self._on_session_state,
                               on_restart=self._on_session_restart) if start_kernel else None
        self.steps = StepQueue(self.session, self._on_queue_event) if self.session is not None else None
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
                yield lesson_pane(self, *self.learn)
            with Vertical(id="console"):
                yield ConsoleLog(id="log")
                yield CodeInput(self.repl_history, id="input")
            with Vertical(id="inspector"):
                yield TensorTable(id="tensors")
                yield PastPanel(id="past")
                yield TraceView(id="trace")
                yield TensorDetails(id="details")
        yield StatusBar(id="status")
        yield KeyFooter()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and event.key == "enter":
            self._hold_for_reply()
        await super().on_event(event)

    @property
    def holding_repaints(self) -> bool:
        """Repaints wait for a step's reply (the key footer rebuilds after, from the keys then)."""
        return self._reply_hold is not None

    def _hold_for_reply(self) -> None:
        """Enter that runs a step at once: hold the repaints until its reply (_release_hold), or REPLY_HOLD."""
        code_input = self.focused
        if (self._reply_hold is not None or self.steps is None or not self.steps.runs_at_once
                or not isinstance(code_input, CodeInput) or code_input.id != "input"
                or not code_input.enter_submits()):
            return
        batch = self.batch_update()
        batch.__enter__()
        self._reply_hold = (batch, self.set_timer(REPLY_HOLD, self._release_hold))

    def _release_hold(self) -> None:
        if self._reply_hold is None:
            return
        batch, timer = self._reply_hold
        self._reply_hold = None
        timer.stop()
        batch.__exit__(None, None, None)
        self.refresh_bindings()  # the footer skipped the changes made meanwhile

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
        if self.session is not None:
            self.start_kernel()
            self.run_steps()

    def _after_first_frame(self) -> None:
        if not gc.isenabled():  # cli.main held the collector off while the first screen was built
            gc.freeze()  # what start-up made lives as long as the app: later collections skip it
            gc.enable()

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

    def fit_panel(self) -> None:
        """The panel's height from its rows when it shows only the table under the console (panel_fit.py)."""
        base = self.screen_stack[0] if self.screen_stack else None
        if self.learn or base is None or not base.query("#inspector"):
            return  # the lesson's grid lays the panel out; or not composed yet
        inspector = base.query_one("#inspector")
        only_table = not (inspector.has_class("-details") or inspector.has_class("-past")
                          or base.query_one(TraceView).display)
        narrow = self.size.width < self.HORIZONTAL_BREAKPOINTS[1][0]  # the class may lag a resize
        fit_panel(self.size.height, inspector, len(base.query_one(TensorTable).names), narrow and only_table)

    def _watch_terminal(self) -> None:
        """Leave, and take the kernel along, when the terminal goes away, with or without a SIGHUP."""
        fds = [] if self.is_headless else terminal_fds()
        if not fds:
            return
        self.set_interval(0.5, lambda: terminal_gone(fds) and self.terminal_lost())
        asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self.terminal_lost)

    def terminal_lost(self) -> None:
        """No one can see or type any more: stop the kernel and its zygote first, then exit."""
        if not self._exiting_for_hangup:
            self._exiting_for_hangup = True
            self.run_worker(self._close_and_exit(), group="hangup", exit_on_error=False)

    async def _close_and_exit(self) -> None:
        if self.session is not None:
            try:
                await asyncio.wait_for(self.session.close(), HANGUP_CLOSE_TIMEOUT)
            except (asyncio.TimeoutError, OSError):
                pass  # the kernels die with their zygote (parent-death signal) when this process goes
        # Not self.exit(): Textual's shutdown writes to the dead terminal, and once its writer
        # thread has died of EIO, the put of the last frame blocks forever. Nothing is left to show.
        os._exit(HANGUP_EXIT)

    async def on_unmount(self) -> None:
        # The kernel process must not outlive the app (tests run many apps in one process).
        if self.lesson_parts is not None:
            await self.lesson_parts.close()
        if self.session is not None:
            await self.session.close()

    # -- the kernel, in workers ---------------------------------------------
    def _on_session_state(self, state: KernelState) -> None:
        self.post_message(KernelStateChanged(state))

    def _on_session_restart(self) -> None:
        self.post_message(KernelRestarted())

    @work(group="kernel", exit_on_error=False)
    async def start_kernel(self) -> None:
        """Warm the kernel up while the first frame is already on screen."""
        try:
            await self.session.start()
        except Exception as exc:  # the learner needs words, not a crashed app
            self.post_message(KernelFailed(f"{type(exc).__name__}: {exc}"))
            return
        # The first completion imports jedi in the kernel: sent first, so a step typed meanwhile waits
        # for it (one request), and the first Tab does not.
        warming = asyncio.ensure_future(self.session.warm_completion())
        await asyncio.sleep(0)
        self.post_message(KernelReady(self.session.sandbox))
        self.steps.ready.set()
        await warming

    @work(group="steps", exit_on_error=False)
    async def run_steps(self) -> None:
        """Run queued steps one at a time, in the order they were typed (session/steps.py)."""
        await self.steps.run()

    def _on_queue_event(self, event: QueueEvent) -> None:
        if isinstance(event, Queued):
            self.post_message(StepQueued(event.source, event.kernel_ready))
        elif isinstance(event, Started):
            self.post_message(StepStarted(event.source, event.number))
        elif isinstance(event, Finished):
            self.post_message(StepFinished(event.result, event.shown))
        elif isinstance(event, NotRun):
            self.post_message(StepFailed(event.source, event.reason))

    def submit(self, source: str) -> None:
        """Queue `source` as the next step (typed, or sent by the command palette)."""
        if self.steps is not None:
            self.steps.submit(source)
            self._update_queue_count(self.steps.waiting)

    @work(group="control", exit_on_error=False)
    async def interrupt_step(self) -> None:
        dropped = await self.steps.interrupt()
        self.query_one(ConsoleLog).write_notice(
            "Interrupt sent (Ctrl-C)." + (f" {dropped} queued step(s) dropped." if dropped else ""), "yellow")
        self._update_queue_count(self.steps.waiting)

    @work(group="control", exit_on_error=False)
    async def kill_kernel(self) -> None:
        dropped, idle = await self.steps.kill()
        if idle:  # during a step, its result says what was lost
            self.query_one(ConsoleLog).write_notice(leaving.restarted("F8"), "bold magenta")
        self._update_queue_count(self.steps.waiting)

    @work(group="complete", exclusive=True, exit_on_error=False)
    async def fetch_completions(self, code: str, cursor: int, typing: bool) -> None:
        if self.session is None:
            return
        code_input = self.query_one(CodeInput)
        # A slow answer (a kernel busy importing, a large namespace) says it is coming.
        slow = self.set_timer(COMPLETING_AFTER, lambda: setattr(code_input, "border_subtitle", "completing…"))
        try:
            completions = await self.session.complete(code, cursor)
        finally:
            slow.stop()
            code_input.border_subtitle = None
        await code_input.offer_completions(completions, code, cursor, inline=not typing)

    @work(group="details", exclusive=True, exit_on_error=False)
    async def fetch_details(self, name: str) -> None:
        """Ask the kernel for the graph, then the (slower) symbolic check, of `name`."""
        if self.session is None:
            return
        row = self.session.tensors.get(name)
        errors: list[str] = []
        # Shielded: selecting another row cancels this worker, and a request cancelled after it was
        # sent would leave its reply unawaited, which the client takes for a broken kernel and kills it.
        reply = await asyncio.shield(self.session.graph(name))
        graph = reply.data if reply.ok else None
        if reply.lost:  # the kernel died answering: a fresh one replaced it, and the details closed with it
            self.query_one(ConsoleLog).write_notice(reply.error, "bold magenta")
            return
        if not reply.ok:
            errors.append(f"graph: {reply.error}")
        why = await asyncio.shield(self.session.why_grad_is_none(name, graph))
        history = self.session.timeline.scalar_history(name)
        self.post_message(DetailsLoaded(name, row, graph, None, errors, why, history))
        check = await asyncio.shield(self.session.check(name))
        if check.data or check.error:
            if check.error:
                errors = errors + [f"check: {check.error}"]
            self.post_message(DetailsLoaded(name, row, graph, check.data if check.ok else None, errors, why, history))

    # -- a worker that raised ----------------------------------------------
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker runs with exit_on_error=False, so one that raised would vanish: say what failed
        (logged with its traceback) and put back what it left behind. Widgets forward theirs here."""
        if event.state != WorkerState.ERROR:
            return
        worker = event.worker
        worker_failures.log.error("worker %s failed", worker.name, exc_info=worker.error)
        self.query_one(ConsoleLog).write_notice(worker_failures.failure_words(worker.name, worker.error),
                                                "bold red")
        restore = getattr(worker.node, "restore_after_failure", None)
        if restore is not None:
            restore(worker.name)

    def restore_after_failure(self, name: str) -> None:
        """What the app's own workers leave behind when they raise."""
        if name == "run_steps":
            self.run_steps()  # else every later step would wait forever
        elif name == "fetch_details":
            self.close_details()  # it said "loading…"
        self._notice_no_kernel()

    def _notice_no_kernel(self) -> None:
        """No kernel runs (a restart failed): the status says so instead of "warming up", the rows that
        died with the old kernel go, and F8 may try again."""
        if self.session is None or self.session.client.kernel is not None or self.kernel_state == "failed":
            return
        self.kernel_state = "failed"
        self.query_one(StatusBar).set_state("failed")
        self._busy_timer.pause()
        table = self.query_one(TensorTable)
        self.session.tensors.clear()
        table.apply_step([], list(table.names))
        self.steps_in_kernel = 0
        self.refresh_bindings()

    # -- what the workers post ----------------------------------------------
    @on(KernelStateChanged)
    def _state_changed(self, message: KernelStateChanged) -> None:
        self.kernel_state = message.state
        bars = self.query(StatusBar)  # none yet on a loaded machine's first frames: it reads kernel_state on mount
        if bars:
            bars.first().set_state(message.state)
        if message.state == "busy":
            self._busy_timer.resume()
        else:
            self._busy_timer.pause()
        self.refresh_bindings()

    def show_next_number(self) -> None:
        """The input's title is IPython's prompt: `In [N]`, the number the next step takes."""
        if self.session is not None:
            self.query_one(CodeInput).border_title = f"In [{self.session.step + 1}]"

    @on(KernelRestarted)
    def _restarted(self, message: KernelRestarted) -> None:
        """Whatever replaced the kernel (F8, %restart, a crash, a lesson), the panel holds only the new
        kernel's rows: none yet."""
        self.steps_in_kernel = 0
        table = self.query_one("#tensors", TensorTable)
        table.apply_step([], list(table.names))
        if self.details_name is not None:
            self.close_details()
        self.return_to_present()  # the past it showed was the old kernel's
        self.fit_panel()
        self.call_after_refresh(self.show_next_number)  # once restart() has numbered from 1 again
        self.query_one(StatusBar).note_restart()

    @on(KernelReady)
    def _kernel_ready(self, message: KernelReady) -> None:
        self.kernel_started = True
        self.query_one(StatusBar).set_sandbox(message.sandbox)
        version = self.session.kernel_info.get("torch") if self.session else None
        self.query_one(ConsoleLog).write_notice(
            f"torch{f' {version}' if version else ''} is imported, with nn and F. "
            "The panel shows every tensor after each step.")

    @on(KernelFailed)
    def _kernel_failed(self, message: KernelFailed) -> None:
        self.kernel_state = "failed"
        self.query_one(StatusBar).set_state("failed")
        self.query_one(ConsoleLog).write_notice(
            f"The kernel could not start: {message.reason}\n"
            "F8 tries again; Ctrl+Q quits (`gradrepl doctor` says what is missing).", "bold red")
        self.refresh_bindings()

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

    @on(StepQueued)
    def _step_queued(self, message: StepQueued) -> None:
        # Behind a running step the status bar's count says enough; a cold kernel deserves words.
        if not message.kernel_ready:
            first = message.source.splitlines()[0] if message.source else ""
            self.query_one(ConsoleLog).write_notice(f"queued: {first}  (runs once the kernel has imported torch)",
                                                    "dim italic")

    @on(StepStarted)
    def _step_started(self, message: StepStarted) -> None:
        self._update_queue_count(self.steps.waiting if self.steps else 0)
        self.query_one(ConsoleLog).write_source(message.source, message.number)

    @on(StepFinished)
    def _step_finished(self, message: StepFinished) -> None:
        """Every step's one way back, typed or lesson code (a lesson's bookkeeping steps only show rows)."""
        result = message.result
        if message.shown:
            self.steps_in_kernel += 1
            self.query_one(ConsoleLog).write_result(said_once(result))
            self.refresh_bindings()  # F9 shows once a traceback has torch frames to open
            if is_help(result.display):
                self._open_help(result.display)
        self.show_next_number()
        self._show_rows(result)
        self._release_hold()

    @shows_reply("the help view")
    def _open_help(self, display: dict) -> None:
        self.push_screen(HelpView(str(display.get("title", "help")), str(display.get("text", ""))),
                         lambda _: self.focus_input())

    @on(TraceView.NodeShown)
    def _trace_node(self, event: TraceView.NodeShown) -> None:
        """The trace view's node lights the row of the tensor it made (or the leaf whose .grad it fills) and,
        in the console, the echo of the step whose statement made it (for a leaf's AccumulateGrad, the step
        that made the leaf, from the timeline)."""
        self.query_one(TensorTable).point_at(event.tensor)
        node = event.node or {}
        step = (event.made_by or {}).get("step")
        if step is None and "leaf" in node and self.session is not None:
            created = self.session.timeline.grad_story(node["leaf"]).created
            step = created[0] if created else None
        self.query_one(ConsoleLog).light_step(step, echo_tag(node) if step is not None else "")

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

    @shows_reply("the tensor panel")
    def _show_rows(self, result) -> None:
        table = self.query_one(TensorTable)
        changed, removed = table.apply_step(result.tensors, result.removed, result.step)
        self.fit_panel()
        status = self.query_one(StatusBar)
        status.last_step_ms = result.duration_ms
        status.refresh_text()
        if result.trace and result.trace.get("traces"):
            # a preview changed nothing: the live rows are the leaves' .grad before it
            stopped = result.error.type if result.error else None  # its words are in the console
            self.show_trace(result.trace, self.session.tensors if result.trace.get("preview") else None, stopped)
        if self.details_name in removed:
            self.close_details()
        elif self.details_name in changed:
            self.fetch_details(self.details_name)

    @on(StepFailed)
    def _step_failed(self, message: StepFailed) -> None:
        self._release_hold()
        self.query_one(ConsoleLog).write_notice(f"The step could not run: {message.reason}", "bold red")
        self._notice_no_kernel()  # a fresh kernel after a crash may have failed to start

    @on(ViewFailed)
    def _view_failed(self, message: ViewFailed) -> None:
        """A view could not render a reply (view_guard.py): words in the console; the keys back where they show."""
        self.query_one(ConsoleLog).write_notice(failure_words(message.view, message.reason), "bold red")
        if self.focused is not None and not self.focused.display:
            self.focus_input()
        self.refresh_bindings()

    @on(DetailsLoaded)
    @shows_reply("the details view", on_failure="close_details")
    def _details_loaded(self, message: DetailsLoaded) -> None:
        if message.name == self.details_name:
            self.query_one(TensorDetails).show(message)

    @on(TensorTable.RowSelected, "#tensors")
    def _row_selected(self, event: TensorTable.RowSelected) -> None:
        self.show_details(event.name)

    # -- actions -------------------------------------------------------------
    def show_details(self, name: str) -> None:
        """Open the details view of tensor `name` and load its graph from the kernel."""
        self.details_name = name
        details = self.query_one(TensorDetails)
        details.display = True
        details.show_loading(name)
        self.query_one("#inspector").add_class("-details")
        self.fit_panel()
        self.fetch_details(name)
        self.refresh_bindings()

    @shows_reply("the trace view", on_failure="close_trace")
    def show_trace(self, traced: dict, before: dict[str, dict] | None = None, stopped: str | None = None) -> None:
        """Open the node-by-node view of a `%trace` step; it takes the keys until Esc."""
        view = self.query_one(TraceView)
        view.display = True
        view.show_trace(traced, before, stopped)
        self.fit_panel()
        if view.display:  # else it could not render the trace, and said so
            view.focus()
        self.refresh_bindings()

    @shows_reply("the timeline (F3/F4)", on_failure="return_to_present")
    def action_timeline(self, delta: int) -> None:
        """Show the panel as it stood one step earlier (-1) or later (+1); past the last, the present."""
        past_panel = self.query_one(PastPanel)
        timeline = self.session.timeline if self.session else None
        steps = [step for step, _ in timeline.steps] if timeline else []
        step = target_step(steps, past_panel.step, delta)
        if step is None:
            self.return_to_present()
            return
        past = timeline.state_at(step)
        past_panel.show_past(past)
        past_panel.display = True
        live = self.query_one("#tensors", TensorTable)
        if live.has_focus:  # the keys (→ ← ↑ ↓) go to the table on screen
            past_panel.focus()
        live.display = False
        inspector = self.query_one("#inspector")
        inspector.add_class("-past")
        inspector.border_title = past_panel.title(past, steps[-1], inspector.size.width - BORDER_TITLE_CHROME)
        self.fit_panel()

    def return_to_present(self) -> None:
        panels = self.query(PastPanel)  # none while the app is closing (a late TextArea.Changed)
        if not panels or panels.first().step is None:
            return
        past_panel = panels.first()
        past_panel.step = None
        live = self.query_one("#tensors", TensorTable)
        live.display = True
        if past_panel.has_focus:
            live.focus()
        past_panel.display = False
        inspector = self.query_one("#inspector")
        inspector.remove_class("-past")
        inspector.border_title = "tensors"
        self.fit_panel()

    @on(TextArea.Changed, "#input")
    def _typing(self, event: TextArea.Changed) -> None:
        self.return_to_present()  # any typing returns to the present

    def action_close_details(self) -> None:
        """Escape: the trace view if it is open, else the details view."""
        if self.query_one(TraceView).display:
            self.close_trace()
        else:
            self.close_details()

    def close_trace(self) -> None:
        self.query_one(TraceView).hide()
        self.fit_panel()
        self.focus_input()
        self.refresh_bindings()

    def close_details(self) -> None:
        self.details_name = None
        self.query_one(TensorDetails).display = False
        self.query_one("#inspector").remove_class("-details")
        self.fit_panel()
        self.refresh_bindings()

    def action_interrupt(self) -> None:
        self.interrupt_step()

    def action_kill(self) -> None:
        """Kill the kernel for a fresh one; asks first when the learner's variables would go with it."""
        if self.kernel_state == "failed" and not self.kernel_started:
            self.start_kernel()  # the first start failed: F8 tries it again
            return
        self.ask_first(leaving.KILL, self._kill_now)

    def _kill_now(self) -> None:
        self.kill_kernel()

    # -- leaving, or losing the namespace ------------------------------------------
    def run_typed(self, source: str) -> None:
        """A step typed (or chosen in the palette): `exit`/`quit` leave, as in IPython; %reset and
        %restart ask first (session/leaving.py); the rest is queued."""
        if leaving.is_exit(source):
            self.exit()
        elif (magic := leaving.loses_namespace(source)) is not None:
            self.ask_first(leaving.LOSES[magic], lambda: self.submit(source))
        else:
            self.submit(source)

    def action_quit(self) -> None:
        """Ctrl-Q, or Ctrl-D on an empty input: leave, asking first when the namespace holds something.
        Pressed again while asked (or while the question is being made), it leaves."""
        if self._leaving:
            self.exit()
            return
        self._leaving = True

        def stay() -> None:
            self._leaving = False

        self.ask_first(leaving.QUIT, self.exit, stay, also_yes=("ctrl+d",))

    @work(group="ask", exit_on_error=False)
    async def ask_first(self, asked: leaving.Asked, then, stay=None, also_yes: tuple[str, ...] = ()) -> None:
        """`then()` at once when the namespace holds nothing of the learner's, else once they say yes."""
        names = await self._names_to_lose()
        if not leaving.worth_asking(names):
            then()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                then()
                return
            if stay is not None:
                stay()
            self.focus_input()

        question = leaving.question(asked, names, self.query_one(TensorTable).names)
        self.push_screen(Confirm(question, asked.yes, also_yes), answered)

    async def _names_to_lose(self) -> list[str] | None:
        if self.session is None or self.kernel_state == "failed":
            return []  # no kernel: nothing left to lose
        if self.kernel_state != "busy" and self.steps_in_kernel == 0 and not self.session.tensors:
            return []  # nothing typed into this kernel yet (a fresh one holds only torch, nn, F)
        return await leaving.names_to_lose(self.session)

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

    def action_toggle_focus(self) -> None:
        past = self.query_one(PastPanel)
        table = past if past.display else self.query_one("#tensors", TensorTable)  # the one on screen
        target = self.query_one(CodeInput) if table.has_focus else table
        target.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Interrupt exists only while a step runs; otherwise Ctrl-C copies or clears the input.
        if action == "interrupt":
            return self.kernel_state == "busy"
        if action == "kill":
            return self.session is not None and self.kernel_state in ("busy", "idle", "failed")
        if action == "close_details":
            return self.details_name is not None or any(view.display for view in self.query(TraceView))
        if action == "toggle_library_frames":  # only once a traceback has library frames to show
            return any(log.has_library_frames for log in self.query(ConsoleLog))
        if action == "focus_input":  # Escape brings typing back to where it shows
            return not isinstance(self.focused, CodeInput)
        if action == "lesson_next":
            return any(pane.can_advance() for pane in self.query(LESSON_PANE))
        if action == "lesson_check":
            return any(pane.open_task() is not None for pane in self.query(LESSON_PANE))
        return True

    def tensor_names(self) -> list[str]:
        """Live tensor names in panel order (for the command palette)."""
        return self.query_one(TensorTable).names

    def run_subcommand(self, name: str) -> None:
        """Leave the TUI for `gradrepl NAME` (lessons, quiz) and come back after."""
        with self.suspend():
            subprocess.run([sys.executable, "-m", "gradrepl.cli", name], check=False)

    def _tick(self) -> None:
        self.query_one(StatusBar).refresh_text()

    def _update_queue_count(self, count: int) -> None:
        status = self.query_one(StatusBar)
        status.queued = count
        status.refresh_text()


def run_app(options: KernelOptions) -> int:
    """Entry point for `gradrepl` with no command: run the TUI until the learner quits."""
    app = GradReplApp(options)
    app.run()
    return app.return_code or 0
