"""What a lesson run says happens: one dataclass per event, one `play --json` line each.

The engine (tutor/lesson_run.py) emits them; frontends render them (commands/play.py's
TextView, the learn pane) and import only this module, never the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from gradrepl.protocol.messages import StepResult
from gradrepl.tutor.grading import Grade, Key
from gradrepl.tutor.lesson import Lesson, Question

@dataclass
class Event:
    type: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type}


@dataclass
class Opened(Event):
    type: ClassVar[str] = "lesson"
    lesson: Lesson
    start: int
    replayed: int  # steps replayed into a fresh live kernel before `start`

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.lesson.id, "title": self.lesson.title, "path": self.lesson.path,
                "steps": len(self.lesson.steps), "start": self.start}


@dataclass
class Prose(Event):
    type: ClassVar[str] = "prose"
    step: int
    line: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "step": self.step, "line": self.line, "text": self.text}


@dataclass
class CellRan(Event):
    type: ClassVar[str] = "cell"
    step: int
    line: int
    source: str
    result: StepResult

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "step": self.step, "line": self.line, "source": self.source,
                "result": self.result.to_json()}


@dataclass
class Asked(Event):
    """A question is put to the learner; ``order`` is the order its options are shown in."""

    type: ClassVar[str] = "question"
    step: int
    question: Question
    order: list[int]

    def to_json(self) -> dict[str, Any]:
        question = self.question
        event: dict[str, Any] = {"type": self.type, "step": self.step, "id": question.uid,
                                 "question_type": question.type, "prompt": question.prompt, "line": question.line,
                                 "hints": len(question.hints)}
        if question.code:
            event["code"] = question.code
        if question.starter:
            event["starter"] = question.starter
        if question.ask:
            event["ask"] = question.ask
        if question.options:
            event["options"] = [{"index": i, "text": question.options[i].text} for i in self.order]
        if question.type == "predict_state":
            event["fields"] = list(question.fields)
        if question.tolerance is not None:
            event["tolerance"] = question.tolerance
        if question.type == "derive":
            event["function"], event["variable"] = question.function, question.variable
        return event


@dataclass
class KeyReady(Event):
    type: ClassVar[str] = "key"
    uid: str
    key: Key

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.uid, "text": self.key.text}


@dataclass
class Hinted(Event):
    type: ClassVar[str] = "hint"
    uid: str
    n: int           # how many hints are shown now
    text: str | None  # None: there are no more

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.uid, "n": self.n,
                "text": self.text or "No more hints: type 'skip' to see the solution."}


@dataclass
class Notice(Event):
    type: ClassVar[str] = "notice"
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@dataclass
class Refused(Notice):
    """What the learner asked for is not allowed here (skipping a lesson that forbids it)."""


@dataclass
class Graded(Event):
    """The verdict on one answer; ``counts`` is False when no verdict could be reached."""

    type: ClassVar[str] = "grade"
    uid: str
    attempt: int
    answer: Any
    hinted: bool
    grade: Grade
    counts: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.uid, "attempt": self.attempt, "answer": self.answer,
                "hinted": self.hinted, **self.grade.to_json(), "steps": [s.to_json() for s in self.grade.steps]}


@dataclass
class Revealed(Event):
    """The question is closed: answered, or skipped (a skipped task's solution ran)."""

    type: ClassVar[str] = "reveal"
    uid: str
    skipped: bool
    expected: str
    steps: list[StepResult] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "id": self.uid, "skipped": self.skipped, "expected": self.expected,
                "steps": [s.to_json() for s in self.steps]}


@dataclass
class LessonProblem(Event):
    type: ClassVar[str] = "problem"
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "message": self.message}


@dataclass
class Summary(Event):
    """How a run went: right at the first try, right after hints or wrong tries, skipped."""

    type: ClassVar[str] = "summary"
    lesson_id: str
    questions: int = 0
    first_try: int = 0
    after_help: int = 0
    skipped: int = 0
    not_read: int = 0  # answers that could not be read: asked again, not counted as tries
    failed: dict[str, str] = field(default_factory=dict)  # uid -> feedback, when its own key was graded wrong
    problems: list[str] = field(default_factory=list)   # lesson bugs: file:line: message
    finished: bool = False
    slowest_ms: float = 0.0
    slowest_line: int = 0                                # where the slowest step starts in the file

    @property
    def correct(self) -> int:
        return self.first_try + self.after_help

    @property
    def ok(self) -> bool:
        return self.finished and not self.failed and not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "lesson": self.lesson_id, "questions": self.questions, "correct": self.correct,
                "first_try": self.first_try, "after_help": self.after_help, "skipped": self.skipped,
                "not_read": self.not_read, "failed": list(self.failed), "problems": self.problems,
                "finished": self.finished, "ok": self.ok, "slowest_ms": self.slowest_ms}


Emit = Callable[[Event], None]
