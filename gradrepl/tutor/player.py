"""Scripted playback of a lesson: step through prose, cells and questions.

The player drives a Session and reports what happens as plain event dicts (one
`play --json` line each); an Answerer supplies the answers: a person at a
terminal, or the keys themselves (`--auto`, the course's own test). Keys are
computed in the kernel from the lesson's canonical namespace: the lesson's
setup, cells, question code and tasks' solutions, in order. When a learner
solved a task their own way, that namespace is rebuilt (restart + replay)
before the lesson goes on, so every later key is the same for everyone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from gradrepl.tutor import grading
from gradrepl.tutor.grading import Grade, Key
from gradrepl.tutor.lesson import Lesson, Question, Source, replay_sources

Event = dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """What an answerer says: an answer, or a request for a hint, the solution, or to stop."""

    kind: str  # "answer" | "hint" | "skip" | "quit"
    value: Any = None


@dataclass
class Asked:
    """A question as put to an answerer; ``key`` is for automatic answerers only."""

    question: Question
    order: list[int]          # option indexes in the order shown (choice)
    key: Key
    attempt: int
    hints_shown: int


class Answerer(Protocol):
    async def reply(self, asked: Asked) -> Reply: ...


class KeyAnswerer:
    """Answers every question with its computed key: `play --auto`."""

    async def reply(self, asked: Asked) -> Reply:
        return Reply("answer", grading.key_answer(asked.question, asked.key))


@dataclass
class Summary:
    """How a playback went."""

    lesson_id: str
    questions: int = 0
    correct: int = 0
    skipped: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # uid -> feedback, when its own key was graded wrong
    problems: list[str] = field(default_factory=list)   # lesson bugs: file:line: message
    finished: bool = False
    slowest_ms: float = 0.0
    slowest_line: int = 0                                # where the slowest step starts in the file
    keys: dict[str, Key] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.finished and not self.failed and not self.problems

    def to_json(self) -> Event:
        return {"type": "summary", "lesson": self.lesson_id, "questions": self.questions, "correct": self.correct,
                "skipped": self.skipped, "failed": list(self.failed), "problems": self.problems,
                "finished": self.finished, "ok": self.ok, "slowest_ms": self.slowest_ms}


class LessonPlayer:
    """Plays one lesson in one session."""

    def __init__(self, lesson: Lesson, session, answerer: Answerer, emit: Callable[[Event], None],
                 *, auto: bool = False, verify: bool = False, shuffle_seed: str = "", prelude: str = ""):
        self.lesson = lesson
        self.session = session
        self.answerer = answerer
        self.emit = emit
        self.auto = auto
        self.verify = verify  # lint: also check that a task's check fails before its solution
        self.shuffle_seed = shuffle_seed
        self.prelude = prelude  # hidden code run after each restart (lint reseeds torch with it)
        self.summary = Summary(lesson.id)
        self._canonical = False  # does the namespace equal the lesson's own up to the current step?

    async def run(self, start: int = 0) -> Summary:
        """Play from step ``start`` (resume replays the steps before it) to the end."""
        self.emit({"type": "lesson", "id": self.lesson.id, "title": self.lesson.title,
                   "path": self.lesson.path, "steps": len(self.lesson.steps), "start": start})
        await self._rebuild(start)
        for index in range(start, len(self.lesson.steps)):
            step = self.lesson.steps[index]
            if step.kind == "prose":
                self.emit({"type": "prose", "step": index, "line": step.line, "text": step.text})
                continue
            if not self._canonical:
                await self._rebuild(index)
            if step.kind == "code":
                await self._cell(index, step.text, step.line)
            elif not await self._question(index, step.question):
                self.emit(self.summary.to_json())
                return self.summary
        self.summary.finished = True
        self.emit(self.summary.to_json())
        return self.summary

    # -- steps ----------------------------------------------------------------
    async def _rebuild(self, index: int) -> None:
        """A fresh kernel holding the lesson's namespace before step ``index``."""
        await self.session.restart()
        sources = replay_sources(self.lesson, index)
        if self.prelude:
            sources.insert(0, Source(self.prelude, 1))
        self._problems(await grading.run_sources(self.session, sources, self.lesson.path))
        self._canonical = True

    async def _cell(self, index: int, source: str, line: int) -> None:
        result = await self.session.execute(source)
        self._timed(result, line)
        self.emit({"type": "cell", "step": index, "line": line, "source": source, "result": result.to_json()})
        if result.error:
            self._problems([f"{self.lesson.path}:{line + 1}: the cell raised {result.error.type}: "
                            f"{result.error.message}"])

    async def _question(self, index: int, question: Question) -> bool:
        """Ask one question until it is answered, skipped or abandoned; False to stop the lesson."""
        self.summary.questions += 1
        if question.type == "task":
            key = Key(question.uid, question.solution.strip())
            await self._run_setup(question)
            if self.verify:
                await self._verify_task_start(question)
        else:
            key = await self._silent_key(question)
        self.summary.keys[question.uid] = key
        self._problems(key.problems)
        order = self._order(question)
        self.emit(_question_event(index, question, order))
        hints = 0
        attempt = 0
        while True:
            attempt += 1
            reply = await self.answerer.reply(Asked(question, order, key, attempt, hints))
            if reply.kind == "quit":
                return False
            if reply.kind == "hint":
                attempt -= 1
                text = question.hint(hints)
                self.emit({"type": "hint", "id": question.uid, "n": hints + 1,
                           "text": text or "No more hints: type 'skip' to see the solution."})
                hints += text is not None
                continue
            if reply.kind == "skip":
                if not self.lesson.skippable:
                    attempt -= 1
                    self.emit({"type": "notice", "text": "This lesson cannot be skipped: try, or ask for a hint."})
                    continue
                await self._reveal(question, key, skipped=True)
                self.summary.skipped += 1
                return True
            graded = await self._grade(question, reply.value, key)
            self.emit({"type": "grade", "id": question.uid, "attempt": attempt, "answer": reply.value,
                       "hinted": hints > 0, **graded.to_json(), "steps": [s.to_json() for s in graded.steps]})
            if graded.retry and not self.auto:
                attempt -= 1  # an answer in the wrong form is not an attempt: ask again
                continue
            if graded.correct:
                self.summary.correct += 1
                await self._reveal(question, key, skipped=False)
                return True
            if self.auto:
                # The key failed its own question: note it, and go on with the lesson's namespace.
                self.summary.failed[question.uid] = graded.feedback
                self._canonical = False
                return True

    async def _silent_key(self, question: Question) -> Key:
        """The key, computed in the lesson's own namespace (its output is shown after answering)."""
        await self._run_setup(question)
        key = await grading.compute_key(question, self.session, fresh=False)
        for result in key.steps:
            self._timed(result, question.line)
        return key

    async def _run_setup(self, question: Question) -> None:
        if question.setup:
            self._problems(await grading.run_sources(self.session, [Source(question.setup, question.line)],
                                                     question.path))

    async def _verify_task_start(self, question: Question) -> None:
        holds, _ = await grading.check_holds(question, self.session)
        if holds:
            self._problems([f"{question.path}:{question.line}: task {question.id!r}: the check already holds "
                            "before the solution runs, so any answer passes"])

    async def _grade(self, question: Question, answer: Any, key: Key) -> Grade:
        if question.type == "task":
            graded = await grading.grade_task(question, str(answer), self.session, in_place=True)
            for result in graded.steps:
                self._timed(result, question.line)
            # Restored means back at the task's canonical start; solved the learner's own
            # way means the namespace must be rebuilt before the next step.
            self._canonical = graded.restored or (graded.correct and self.auto)
            return graded
        return await grading.grade(question, answer, self.session, key)

    async def _reveal(self, question: Question, key: Key, skipped: bool) -> None:
        """After the answer: show what the code printed, or run and show the skipped task's solution."""
        event: Event = {"type": "reveal", "id": question.uid, "skipped": skipped, "expected": key.text,
                        "steps": [s.to_json() for s in key.steps]}
        if question.type == "task" and skipped:
            result = await self.session.execute(question.solution)
            self._timed(result, question.line)
            event["steps"] = [result.to_json()]
            holds, why = await grading.check_holds(question, self.session)
            if not holds:
                self._problems([f"{question.path}:{question.line}: task {question.id!r}: the solution does not "
                                f"pass its own check ({why})"])
        self.emit(event)

    # -- helpers --------------------------------------------------------------
    def _order(self, question: Question) -> list[int]:
        return question.option_order(self.shuffle_seed)

    def _timed(self, result, line: int) -> None:
        if result.duration_ms > self.summary.slowest_ms:
            self.summary.slowest_ms, self.summary.slowest_line = result.duration_ms, line
        if result.kernel_event:
            self._problems([f"{self.lesson.path}: the kernel was replaced: {result.kernel_event}"])

    def _problems(self, problems: list[str]) -> None:
        for problem in problems:
            if problem not in self.summary.problems:
                self.summary.problems.append(problem)
                self.emit({"type": "problem", "message": problem})


def _question_event(index: int, question: Question, order: list[int]) -> Event:
    event: Event = {"type": "question", "step": index, "id": question.uid, "question_type": question.type,
                    "prompt": question.prompt, "line": question.line, "hints": len(question.hints)}
    if question.code:
        event["code"] = question.code
    if question.ask:
        event["ask"] = question.ask
    if question.options:
        event["options"] = [{"index": i, "text": question.options[i].text} for i in order]
    if question.type == "predict_state":
        event["fields"] = list(question.fields)
    if question.tolerance is not None:
        event["tolerance"] = question.tolerance
    if question.type == "derive":
        event["function"], event["variable"] = question.function, question.variable
    return event

