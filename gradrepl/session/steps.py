"""The step queue of an interactive frontend: typed steps and lesson turns, one at a time, in order.

Typed code and lesson code share one kernel, so they never overlap: both wait
here. The lesson engine reaches the kernel through a `Door` (session-shaped):
it takes a turn in the queue for each of its calls, and every step it runs
comes back as an ordinary `Started`/`Finished` event, so a frontend renders a
lesson's step where it renders a typed one (help() included). The interrupt
policy lives here too: Ctrl-C drops the typed steps still waiting (the learner
meant to stop) but keeps lesson turns (a lesson waits for them), then the
Session's ladder stops the running step.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

from gradrepl.protocol.messages import StepResult
from gradrepl.session.session import Session

Job = Callable[[Session], Awaitable[None]]


@dataclass
class Queued:
    """A typed step waits (behind another step, or for the kernel to start)."""

    source: str
    kernel_ready: bool


@dataclass
class Started:
    source: str
    number: int | None = None  # the step number it takes (None: a magic that looks, `obj?`)


@dataclass
class Finished:
    """A step came back. ``shown``: as a typed step is (echoed, help opened); else only its rows count
    (a lesson's replay, a question's setup)."""

    result: StepResult
    shown: bool = True


@dataclass
class NotRun:
    """The session could not run a step or a job at all (no kernel); not a learner error."""

    source: str
    reason: str


QueueEvent = Queued | Started | Finished | NotRun


class StepQueue:
    """Steps for one Session; `on_event` hears what happens (a frontend renders it)."""

    def __init__(self, session: Session, on_event: Callable[[QueueEvent], None]) -> None:
        self.session = session
        self.on_event = on_event
        self.ready = asyncio.Event()  # set once the kernel takes work
        self._items: asyncio.Queue[str | Job] = asyncio.Queue()
        self._running = False

    @property
    def waiting(self) -> int:
        """Typed steps and jobs not yet started."""
        return self._items.qsize()

    @property
    def runs_at_once(self) -> bool:
        """Whether a step submitted now starts at once: the kernel is ready and nothing runs or waits."""
        return self.ready.is_set() and not self._running and self._items.empty()

    def submit(self, source: str) -> None:
        """Queue a typed step (or a %magic); it says so when it has to wait."""
        waits = not self.runs_at_once
        self._items.put_nowait(source)
        if waits:
            self.on_event(Queued(source, self.ready.is_set()))

    def submit_job(self, job: Job) -> None:
        """Queue `job(session)` behind the typed steps."""
        self._items.put_nowait(job)

    def door(self) -> Door:
        """The lesson engine's way in: a session whose steps wait their turn here and come back as events."""
        return Door(self.session, self.on_event, self)

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold the kernel for a block: queued behind the typed steps, and typed steps wait until it ends."""
        loop = asyncio.get_running_loop()
        granted: asyncio.Future[None] = loop.create_future()
        released = asyncio.Event()

        async def job(_session: Session) -> None:
            if not granted.done():
                granted.set_result(None)
            await released.wait()

        self.submit_job(job)
        try:
            await granted
            yield
        finally:
            released.set()

    async def run(self) -> None:
        """Run queued items forever, each once the kernel is ready."""
        while True:
            item = await self._items.get()
            await self.ready.wait()
            self._running = True
            try:
                await self._run_one(item)
            finally:
                self._running = False

    async def _run_one(self, item: str | Job) -> None:
        if callable(item):
            try:
                await item(self.session)
            except Exception as exc:  # a failed job must not stop the queue
                self.on_event(NotRun("<lesson>", f"{type(exc).__name__}: {exc}"))
            return
        self.on_event(Started(item, self.session.next_number(item)))
        try:
            result = await self.session.execute(item)
        except Exception as exc:
            self.on_event(NotRun(item, f"{type(exc).__name__}: {exc}"))
        else:
            self.on_event(Finished(result))

    async def interrupt(self) -> int:
        """Ctrl-C: drop the typed steps still waiting (lesson jobs stay), stop the running one; returns
        how many were dropped."""
        dropped = self._drop_typed()
        await self.session.interrupt()
        return dropped

    async def kill(self) -> tuple[int, bool]:
        """Kill the kernel now (a fresh one follows); queued typed steps are dropped as for Ctrl-C. Returns
        how many were dropped, and whether the kernel was idle (a restart: no step's result says so)."""
        dropped = self._drop_typed()
        idle = await self.session.kill() is not None
        return dropped, idle

    def _drop_typed(self) -> int:
        kept: list[Job] = []
        dropped = 0
        while not self._items.empty():
            item = self._items.get_nowait()
            if callable(item):
                kept.append(item)
            else:
                dropped += 1
        for job in kept:
            self._items.put_nowait(job)
        return dropped


class Door:
    """Session-shaped: what the lesson engine calls instead of the Session.

    Every step it runs is reported to ``on_event`` as Started/Finished (``shown`` unless inside
    ``quiet()``), and a restart as the rows that went; ``turn()`` holds the queue for one engine
    call (a door without a queue, as `play` has, holds nothing). Everything else is the Session's.
    """

    def __init__(self, session: Session, on_event: Callable[[QueueEvent], None] | None = None,
                 queue: StepQueue | None = None) -> None:
        self.session = session
        self.on_event = on_event
        self.queue = queue
        self._quiet = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        if self.queue is None:
            yield
            return
        async with self.queue.turn():
            yield

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Steps in this block are the lesson's own bookkeeping: only their rows are reported."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    async def execute(self, source: str, **kwargs: Any) -> StepResult:
        shown = not self._quiet
        if shown:
            self._report(Started(source))
        result = await self.session.execute(source, **kwargs)
        self._report(Finished(result, shown))
        return result

    async def restart(self) -> list[str]:
        removed = await self.session.restart()
        if removed:
            self._report(Finished(StepResult(step=self.session.step, source="", removed=removed), False))
        return removed

    def _report(self, event: QueueEvent) -> None:
        if self.on_event is not None:
            self.on_event(event)
