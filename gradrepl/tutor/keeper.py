"""The progress store, used from an event loop without blocking it (learn and play).

SQLite objects must stay on the thread that made them, so the store lives on
one worker thread of its own; callers await its answers and never wait on disk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from gradrepl.tutor.progress import LessonProgress, ProgressStore, StoreError
from gradrepl.tutor.quiz import SpacedRepetition

T = TypeVar("T")


class ProgressKeeper:
    """Lesson progress read and written on a private thread; a store that cannot open is reported once."""

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradrepl-progress")
        self._store: ProgressStore | None = None
        self.notices: list[str] = []
        self.broken = False

    async def _call(self, use: Callable[[ProgressStore], T], default: T) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._run, use, default)

    def _run(self, use: Callable[[ProgressStore], T], default: T) -> T:
        if self.broken:
            return default
        if self._store is None:
            try:
                self._store = ProgressStore.open()
            except (StoreError, OSError) as exc:
                self.broken = True
                self.notices.append(f"Progress cannot be saved: {exc}")
                return default
            self.notices.extend(self._store.notices)
        return use(self._store)

    async def all(self) -> dict[str, LessonProgress]:
        """Stored progress of every lesson started, by id."""
        return await self._call(lambda store: store.lessons(), {})

    async def lesson(self, lesson_id: str, version: str) -> LessonProgress:
        """Progress in one lesson (fresh, with a notice, when its version changed)."""
        return await self._call(lambda store: store.lesson(lesson_id, version), LessonProgress(lesson_id, version))

    def save(self, progress: LessonProgress) -> None:
        """Queue a write; the thread runs queued writes in order, and close() waits for them."""
        self._thread.submit(self._run, lambda store: store.save_lesson(progress), None)

    def review(self, question_id: str, correct: bool, hinted: bool, answer: str) -> None:
        """Queue a quiz review of a lesson answer, so `gradrepl quiz` schedules what was learnt here."""
        self._thread.submit(self._run, lambda store: SpacedRepetition(store).review(
            question_id, correct, hinted, answer), None)

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
