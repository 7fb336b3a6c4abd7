"""The app's kernel, in workers: start it, run the step queue, interrupt or kill it, fetch completions
and details; a worker that raised is put into words and what it left behind restored.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import work
from textual.worker import Worker, WorkerState

from gradrepl.tui.app_part import AppPart
from gradrepl.session import leaving
from gradrepl.session.state import KernelState
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.console.console_log import ConsoleLog
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
from gradrepl.tui import worker_failures

if TYPE_CHECKING:
    from gradrepl.session.steps import QueueEvent

COMPLETING_AFTER = 0.3  # seconds a completion may take before the input says "completing…"


class KernelWorkers(AppPart):
    """The workers that talk to the kernel (app_part.py)."""

    def make_session(self) -> None:
        """The session and its step queue, made once (none for an app started without a kernel)."""
        if self.session is not None or not self._start_kernel:
            return
        # the kernel client and the magics: imported here, after the first frame, not with the app
        from gradrepl.session.session import Session
        from gradrepl.session.steps import StepQueue

        self.session = Session(self.options, on_state=self._on_session_state, on_restart=self._on_session_restart)
        self.steps = StepQueue(self.session, self._on_queue_event)

    def start_session(self) -> None:
        """Start the kernel and the queue's worker once: after the first frame, or at a step typed before it."""
        self.make_session()
        if self.session is not None and not self._session_started:
            self._session_started = True
            self.start_kernel()
            self.run_steps()

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
        from gradrepl.session.steps import Finished, NotRun, Queued, Started  # with the queue, after the first frame

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
        self.start_session()  # typed before the first frame was out
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

    def _update_queue_count(self, count: int) -> None:
        status = self.query_one(StatusBar)
        if status.queued != count:  # a step typed at an idle kernel runs at once: 0 before, 0 after
            status.queued = count
            status.refresh_text()
