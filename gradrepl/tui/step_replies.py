"""What the workers post, rendered: the kernel's state, a step queued, started, finished or not run, the
details loaded; and the repaints held for a step's reply (REPLY_HOLD).
"""

from __future__ import annotations

from textual import on

from gradrepl.tui.app_part import AppPart, found
from gradrepl.session.state import said_once
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.tensors.details import TensorDetails
from gradrepl.tui.messages import (
    DetailsLoaded,
    KernelFailed,
    KernelReady,
    KernelRestarted,
    KernelStateChanged,
    StepFailed,
    StepFinished,
    StepQueued,
    StepStarted,
)
from gradrepl.tui.status_bar import StatusBar
from gradrepl.tui.tensors.tensor_table import TensorTable
from gradrepl.tui.view_guard import ViewFailed, failure_words, shows_reply

# Enter on a step that runs at once holds the screen's repaints until its reply, at most this long (s):
# the cleared input, the echo and the panel's row are then drawn in one frame. Drawn as they came, the
# row waited for Textual's next frame, 17-33 ms after the cleared input's (its timer skips a slot).
REPLY_HOLD = 0.04


class StepReplies(AppPart):
    """The handlers of the kernel's and the step queue's messages (app_part.py)."""

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

    @on(KernelStateChanged)
    def _state_changed(self, message: KernelStateChanged) -> None:
        self.kernel_state = message.state
        if not self.screen_stack:  # the app is closing (its screens gone) as the kernel stops: nothing to draw
            return
        bar = found(self, StatusBar)  # none yet on a loaded machine's first frames: it reads kernel_state on mount
        if bar is not None:
            bar.set_state(message.state)
        if message.state == "busy":
            self._busy_timer.resume()
        else:
            self._busy_timer.pause()
        self.refresh_bindings()

    def show_next_number(self) -> None:
        """The input's title is IPython's prompt: `In [N]`, the number the next step takes."""
        if self.session is not None:
            self.query_one(CodeInput).border_title = f"In [{self.session.step + 1}]"
        elif self._start_kernel:  # the first frame, drawn before the session is made: no step has run
            self.query_one(CodeInput).border_title = "In [1]"

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
    async def _step_finished(self, message: StepFinished) -> None:
        """Every step's one way back, typed or lesson code (a lesson's bookkeeping steps only show rows)."""
        from gradrepl.tui.console.help_view import is_help  # with the first reply, not before the first frame

        result = message.result
        if message.shown:
            self.steps_in_kernel += 1
            self.query_one(ConsoleLog).write_result(said_once(result))
            self.refresh_bindings()  # F9 shows once a traceback has torch frames to open
            if is_help(result.display):
                self._open_help(result.display)
        self.show_next_number()
        self._show_rows(result)
        if result.trace and result.trace.get("traces"):
            # a preview changed nothing: the live rows are the leaves' .grad before it
            stopped = result.error.type if result.error else None  # its words are in the console
            preview = result.trace["traces"][0].get("preview")  # the kernel's flag (kernel/inspect/trace.py)
            await self.show_trace(result.trace, self.session.tensors if preview else None, stopped)
        self._release_hold()

    @shows_reply("the help view")
    def _open_help(self, display: dict) -> None:
        from gradrepl.tui.console.help_view import HelpView

        self.push_screen(HelpView(str(display.get("title", "help")), str(display.get("text", ""))),
                         lambda _: self.focus_input())

    @shows_reply("the tensor panel")
    def _show_rows(self, result) -> None:
        table = self.query_one(TensorTable)
        changed, removed = table.apply_step(result.tensors, result.removed, result.step)
        self.fit_panel()
        status = self.query_one(StatusBar)
        status.last_step_ms = result.duration_ms
        status.refresh_text()
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

    def _tick(self) -> None:
        self.query_one(StatusBar).refresh_text()
