"""The step queue of an interactive frontend: typed steps and lesson jobs, one at a time, in order.

Typed code and lesson code share one kernel, so they never overlap: both wait
here. The interrupt policy lives here too: Ctrl-C drops the typed steps still
waiting (the learner meant to stop) but keeps lesson jobs (a lesson waits for
them), then the Session's ladder stops the running step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from gradrepl.kernel.protocol import StepResult
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


@dataclass
class Finished:
    result: StepResult


@dataclass
class Failed:
    """The session could not run a step or a job at all (no kernel); not a learner error."""

    source: str
    reason: str


QueueEvent = Queued | Started | Finished | Failed


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

    def submit(self, source: str) -> None:
        """Queue a typed step (or a %magic); it says so when it has to wait."""
        waits = self._running or not self.ready.is_set() or not self._items.empty()
        self._items.put_nowait(source)
        if waits:
            self.on_event(Queued(source, self.ready.is_set()))

    def submit_job(self, job: Job) -> None:
        """Queue `job(session)` behind the typed steps: how lesson code reaches the kernel."""
        self._items.put_nowait(job)

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
                self.on_event(Failed("<lesson>", f"{type(exc).__name__}: {exc}"))
            return
        self.on_event(Started(item))
        try:
            result = await self.session.execute(item)
        except Exception as exc:
            self.on_event(Failed(item, f"{type(exc).__name__}: {exc}"))
        else:
            self.on_event(Finished(result))

    async def interrupt(self) -> int:
        """Ctrl-C: drop the typed steps still waiting (lesson jobs stay), stop the running one; returns
        how many were dropped."""
        dropped = self._drop_typed()
        await self.session.interrupt()
        return dropped

    async def kill(self) -> int:
        """Kill the kernel now (a fresh one follows); queued typed steps are dropped as for Ctrl-C."""
        dropped = self._drop_typed()
        await self.session.kill()
        return dropped

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
