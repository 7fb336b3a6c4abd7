"""The lesson engine's event loop, on a thread of its own, while the learner's code stays on the main thread.

A notebook's main thread runs the learner's cells (and, in ipykernel, its own event loop, which a cell
cannot block on). The lesson engine is async (its key kernel is a gradrepl Session), so it runs on an
asyncio loop here; what it runs in the notebook's namespace comes back to the main thread as a job,
which `run` carries out while it waits for the engine. So learner code never runs on another thread,
and nothing runs between two engine calls: a click waits for its verdict as a cell waits for its end.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")
_DONE = object()  # put on the job queue when the engine's coroutine ends: `run` stops waiting


class LoopThread:
    """An asyncio loop on a daemon thread; `run` calls into it from the main thread and serves `on_main`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._running = False
        self._thread = threading.Thread(target=self.loop.run_forever, name="gradrepl-lesson", daemon=True)
        self._thread.start()

    @property
    def busy(self) -> bool:
        """An engine call is under way (the main thread is carrying out its jobs)."""
        return self._running

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Main thread: run ``coroutine`` on the loop and wait for it, carrying out the jobs it sends here."""
        if self._running:
            coroutine.close()
            raise RuntimeError("the lesson is busy with another step: wait for it to finish")
        self._running = True
        # A queue per call: a call stopped by Ctrl-C leaves nothing behind for the next one.
        jobs = self._jobs = queue.SimpleQueue()
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        future.add_done_callback(lambda _future: jobs.put(_DONE))
        try:
            while True:
                job = jobs.get()
                if job is _DONE:
                    return future.result()
                job()
        except BaseException:
            future.cancel()  # Ctrl-C while waiting: the engine's call ends where it is
            raise
        finally:
            self._running = False

    def start(self, coroutine: Coroutine[Any, Any, Any]) -> Future:
        """Run ``coroutine`` in the background (it must not send jobs to the main thread: a key kernel's start)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    async def on_main(self, call: Callable[[], T]) -> T:
        """Loop: ``call()`` on the main thread (inside `run`), its result or exception handed back here."""
        done: Future = Future()

        def job() -> None:
            try:
                done.set_result(call())
            except BaseException as exc:  # handed to the engine, which decides; the main thread goes on
                done.set_exception(exc)

        self._jobs.put(job)
        return await asyncio.wrap_future(done)

    @property
    def closed(self) -> bool:
        return not self._thread.is_alive()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.loop.close()
