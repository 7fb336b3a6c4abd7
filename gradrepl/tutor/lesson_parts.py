"""The lesson engine's parts for an interactive frontend, built by the app and handed to its face.

`learn`'s pane renders a run and passes on what the learner does; it never builds a
kernel, a store thread or a run itself (the contract "widgets never import the engine"
in pyproject.toml). The app builds one LessonParts: the door to the console's kernel
(session.steps.Door), a key kernel of its own, the progress keeper; `new_run` makes
the LessonRun for each lesson opened.
"""

from __future__ import annotations

from gradrepl.client.options import KernelOptions
from gradrepl.session import Session
from gradrepl.session.steps import Door
from gradrepl.tutor.keeper import ProgressKeeper
from gradrepl.tutor.keys import KeyKernel, needs_kernel
from gradrepl.tutor.lesson import Lesson
from gradrepl.tutor.lesson_events import Emit
from gradrepl.tutor.lesson_run import LessonRun
from gradrepl.tutor.progress import LessonProgress


class LessonParts:
    """A door to the learner's kernel, a key kernel and a keeper: everything a LessonRun needs."""

    def __init__(self, door: Door, keys: KeyKernel, keeper: ProgressKeeper) -> None:
        self.door = door
        self.keys = keys
        self.keeper = keeper

    @classmethod
    def build(cls, door: Door, options: KernelOptions | None = None) -> LessonParts:
        """learn's parts: the key kernel is a Session of its own, never the console's."""
        return cls(door, KeyKernel(Session(options or KernelOptions()), owned=True), ProgressKeeper())

    def new_run(self, lesson: Lesson, progress: LessonProgress, emit: Emit, shuffle_seed: str) -> LessonRun:
        self.keys.keys.clear()  # a new visit computes its keys again
        return LessonRun(lesson, self.door, self.keys, emit, progress=progress, recorder=self.keeper,
                         shuffle_seed=shuffle_seed)

    async def warm_keys(self, lesson: Lesson) -> None:
        """Start the key kernel once the console's is up (two torch imports at once slow both)."""
        if any(needs_kernel(q) for q in lesson.questions):
            async with self.door.turn():
                pass
            await self.keys.start()

    async def close(self) -> None:
        await self.keys.close()
        self.keeper.close()
