"""The two kernels a lesson uses.

KeyKernel: a second kernel of its own where every answer key is computed in the
lesson's canonical namespace, rebuilt from scratch, so whatever the learner tried
in the console never changes a key, and a key never shows up in the learner's panel.

LiveLesson: lesson code in the learner's own kernel (the console's), run as jobs
between typed steps; what runs there is posted as steps, so the console and the
tensor panel show it exactly like code the learner typed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace

from textual.message import Message

from gradrepl.kernel.options import KernelOptions
from gradrepl.kernel.protocol import StepResult
from gradrepl.session import Session
from gradrepl.tui.messages import StepFinished, StepStarted
from gradrepl.tutor import grading
from gradrepl.tutor.grading import Grade, Key
from gradrepl.tutor.lesson import Lesson, Question, replay_sources


def needs_kernel(question: Question) -> bool:
    """True when the key comes from running code (or the symbolic engine), not from the author."""
    return question.type == "derive" or (question.computed and question.type != "task")


class KeyKernel:
    """Answer keys and symbolic checks, computed in a kernel the learner never sees."""

    def __init__(self, options: KernelOptions) -> None:
        self.session = Session(options)
        self._lock = asyncio.Lock()  # one question at a time: each key restarts and replays
        self._started = False
        self._keys: dict[str, Key] = {}

    async def start(self) -> None:
        """Warm the kernel up (torch import) ahead of the first question that needs it."""
        async with self._lock:
            await self._start()

    async def _start(self) -> None:
        if not self._started:
            await self.session.start()
            self._started = True

    async def key(self, question: Question) -> Key:
        """The question's key, computed once per lesson visit."""
        if question.uid in self._keys:
            return self._keys[question.uid]
        async with self._lock:
            if question.uid not in self._keys:
                if needs_kernel(question):
                    await self._start()
                self._keys[question.uid] = await grading.compute_key(question, self.session, fresh=True)
            return self._keys[question.uid]

    async def grade(self, question: Question, answer: object) -> Grade:
        """The engine's grade of a non-task answer."""
        if question.type == "derive":
            async with self._lock:
                await self._start()
                return await grading.grade(question, answer, self.session)
        key = await self.key(question)
        return await grading.grade(question, answer, self.session, key)

    async def close(self) -> None:
        if self._started:
            await self.session.close()


def quiet(result: StepResult) -> StepResult:
    """A replayed step for the panel only: its rows, none of its output."""
    return replace(result, stdout="", stderr="", result=None, display=None, error=None, notes=[])


class LiveLesson:
    """Runs lesson code in the learner's kernel; `post` delivers step messages to the app."""

    def __init__(self, lesson: Lesson, post: Callable[[Message], object]) -> None:
        self.lesson = lesson
        self.post = post

    async def run(self, session: Session, code: str, *, echo: bool = True) -> StepResult:
        """One step of lesson code; echoed like a typed step, or (silent) only its rows reach the panel."""
        result = await session.execute(code)
        if echo:
            self.post(StepStarted(code))
            self.post(StepFinished(result))
        else:
            self.post(StepFinished(quiet(result) if result.ok else result))
        return result

    async def rebuild(self, session: Session, upto: int) -> list[str]:
        """A fresh kernel holding the lesson's namespace before step `upto` (never pickled: replayed).

        Returns lesson problems (file:line: error) for code that should not have failed.
        """
        removed = await session.restart()
        if removed:
            self.post(StepFinished(StepResult(step=session.step, source="", removed=removed)))
        problems = []
        for source in replay_sources(self.lesson, upto):
            result = await session.execute(source.code)
            self.post(StepFinished(quiet(result)))
            if result.error and not source.may_fail:
                problems.append(f"{self.lesson.path}:{source.line}: {result.error.type}: {result.error.message}")
        return problems

    async def check(self, session: Session, question: Question) -> Grade:
        """Grade a task on the live namespace; a failed check puts it back to where the task started."""
        return await grading.grade_task_state(question, session, on_step=self._replayed)

    async def solve(self, session: Session, question: Question) -> list[str]:
        """Skip: run the task's solution where the learner sees it; returns lesson problems.

        The learner's attempt may have left the namespace where the solution cannot
        work: then the task's start is rebuilt (by the failed check) and it runs again.
        """
        for _attempt in range(2):
            await self.run(session, question.solution)
            if (await self.check(session, question)).correct:
                return []
        return [f"{question.path}:{question.line}: task {question.id!r}: the solution does not pass its own check"]

    def _replayed(self, result: StepResult) -> None:
        self.post(StepFinished(quiet(result)))
