"""Answer keys, computed one way for every frontend: in a namespace rebuilt from scratch.

A key kernel restarts, replays the lesson up to the question (never pickles) and
only then runs the question's code and describes what it asks about, so nothing
the learner tried can change a key. `learn` gives it a kernel of its own (the
learner's console is never touched); headless playback shares the learner's
kernel, whose namespace is then the lesson's own after each key.
"""

from __future__ import annotations

import asyncio

from gradrepl.session import Session
from gradrepl.tutor import grading
from gradrepl.tutor.grading import Grade, Key, OnStep
from gradrepl.tutor.lesson import Question
from gradrepl.tutor.replay import prepare


def needs_kernel(question: Question) -> bool:
    """True when the key comes from running the lesson's code, not from the author (a task's key is its
    solution's behaviour, run from the task's start)."""
    return question.computed and question.type != "derive"


class KeyKernel:
    """The keys of one lesson visit and the grades that need a kernel, one question at a time."""

    def __init__(self, session: Session, *, owned: bool, prelude: str = "") -> None:
        self.session = session
        self.owned = owned  # started and closed here (learn); else the caller's session (play, lint)
        self.prelude = prelude
        self.keys: dict[str, Key] = {}
        self._lock = asyncio.Lock()  # each key restarts and replays: never two at once
        self._started = not owned

    async def start(self) -> None:
        """Warm the kernel up (torch import) ahead of the first question that needs it."""
        async with self._lock:
            await self._start()

    async def _start(self) -> None:
        if not self._started:
            await self.session.start()
            self._started = True

    async def key(self, question: Question, on_step: OnStep | None = None) -> Key:
        """The question's key, computed once per visit; ``on_step`` sees the steps of a shared kernel."""
        if question.uid in self.keys:
            return self.keys[question.uid]
        async with self._lock:
            if question.uid not in self.keys:
                self.keys[question.uid] = await self._compute(question, on_step)
            return self.keys[question.uid]

    async def _compute(self, question: Question, on_step: OnStep | None) -> Key:
        if not needs_kernel(question):
            return await grading.compute_key(question, self.session, fresh=False)
        await self._start()
        problems = await prepare(question, self.session, on_step, self.prelude)
        key = await grading.compute_key(question, self.session, fresh=False)
        key.problems[:0] = problems
        return key

    async def grade(self, question: Question, answer: object) -> Grade:
        """The grade of a non-task answer (a derive answer is compared by the symbolic engine here)."""
        if question.type == "derive":
            async with self._lock:
                await self._start()
                return await grading.grade(question, answer, self.session)
        return await grading.grade(question, answer, self.session, await self.key(question))

    async def close(self) -> None:
        if self.owned and self._started:
            await self.session.close()
