"""The progress store, used from the TUI without blocking it.

SQLite objects must stay on the thread that made them, so the store lives on
one worker thread of its own; the pane awaits its answers and never waits on disk.
A write that fails is retried a few times; if it still fails, the failure is a
notice and the returned future says why, so nothing claims progress not stored.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from gradrepl.tutor.progress import LessonProgress, ProgressStore, StoreError
from gradrepl.tutor.quiz import SpacedRepetition

T = TypeVar("T")
RETRY_WAITS = (0.25, 1.0)   # seconds before the second and third attempt of a write


class ProgressKeeper:
    """Lesson progress read and written on a private thread; a store that cannot open is reported once."""

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradrepl-progress")
        self._store: ProgressStore | None = None
        self.notices: list[str] = []
        self.broken = False
        self.unsaved: dict[str, str] = {}   # what could not be stored -> why (cleared when a later write works)

    async def _call(self, use: Callable[[ProgressStore], T], default: T) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._run, use, default)

    def _run(self, use: Callable[[ProgressStore], T], default: T) -> T:
        if self._store is None:
            try:
                self._store = ProgressStore.open()
            except (StoreError, OSError) as exc:
                if not self.broken:  # said once; the next call tries again
                    self.notices.append(f"Progress cannot be saved: {exc}")
                self.broken = True
                return default
            self.broken = False
            self.notices.extend(self._store.notices)
        try:
            return use(self._store)
        except (StoreError, sqlite3.Error) as exc:
            self.notices.append(f"Progress could not be read: {exc}")
            return default

    async def all(self) -> dict[str, LessonProgress]:
        """Stored progress of every lesson started, by id."""
        return await self._call(lambda store: store.lessons(), {})

    async def lesson(self, lesson_id: str, version: str) -> LessonProgress:
        """Progress in one lesson (fresh, with a notice, when its version changed)."""
        return await self._call(lambda store: store.lesson(lesson_id, version), LessonProgress(lesson_id, version))

    def save(self, progress: LessonProgress, on_failure: Callable[[str], None] | None = None) -> Future:
        """Queue a write; the thread runs queued writes in order, and close() waits for them.

        The future gives None once stored, or the words saying why it was not (also a notice,
        and passed to ``on_failure`` on the store's thread).
        """
        return self._thread.submit(self._write, f"progress in lesson {progress.lesson_id}",
                                   lambda store: store.save_lesson(progress), on_failure)

    def review(self, question_id: str, correct: bool, hinted: bool, answer: str,
               on_failure: Callable[[str], None] | None = None) -> Future:
        """Queue a quiz review of a lesson answer, so `gradrepl quiz` schedules what was learnt here."""
        return self._thread.submit(self._write, f"the review of {question_id}", lambda store: SpacedRepetition(
            store).review(question_id, correct, hinted, answer), on_failure)

    def _write(self, what: str, use: Callable[[ProgressStore], object],
               on_failure: Callable[[str], None] | None) -> str | None:
        reason = "the progress store could not be opened"
        for wait in (0.0, *RETRY_WAITS):
            time.sleep(wait)
            if self._run(lambda store: True, False) is not True:
                break  # the store cannot open at all: its notice says why
            try:
                use(self._store)
            except (StoreError, OSError) as exc:
                reason = str(exc)
                continue
            self.unsaved.pop(what, None)
            return None
        words = f"Not saved: {what} ({reason}). It stays on screen, but gradrepl will not remember it."
        self.unsaved[what] = words
        self.notices.append(words)
        if on_failure:
            on_failure(words)
        return words

    def take_notices(self) -> list[str]:
        notices, self.notices = self.notices, []
        return notices

    def close(self) -> None:
        """Close the store on its own thread after the writes queued before, then let the thread go."""
        self._thread.submit(self._close_store)
        self._thread.shutdown(wait=True)

    def _close_store(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
