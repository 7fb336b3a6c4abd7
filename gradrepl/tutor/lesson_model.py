"""Lessons as data: Lesson, Step, Question and their parts, and the code that rebuilds a lesson's namespace.

tutor/lesson_parser.py makes them from lessons/*.md; tutor/lesson.py is the face callers import.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from gradrepl.tutor.language import DEFAULT as DEFAULT_LANGUAGE, in_language
from gradrepl.tutor.task_checks import Check

DEFAULT_STATE_FIELDS = ("requires_grad", "is_leaf", "grad_fn", "grad")  # predict_state asks these unless told

@dataclass(frozen=True)
class Problem:
    """One thing wrong with a lesson file, where an author can find it."""

    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class LessonFormatError(Exception):
    """A lesson file that cannot be used; ``problems`` says every reason found."""

    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


@dataclass(frozen=True)
class Source:
    """Code the lesson runs in the kernel, with the line it starts on in its file."""

    code: str
    line: int
    may_fail: bool = False  # question code whose point may be the error it raises


@dataclass(frozen=True)
class Option:
    """One option of a choice question.

    ``correct`` is the author's word for conceptual questions; when the question
    asks the kernel (``ask``), correctness is computed by matching ``answer``.
    """

    text: str
    correct: bool | None = None
    feedback: str = ""
    answer: str | None = None


@dataclass(frozen=True)
class Misconception:
    """A wrong answer to a predict/numeric question worth naming when given."""

    answer: str
    feedback: str


@dataclass
class Question:
    """One gradable question; ``uid`` (lesson_id/question_id) is its stable card id."""

    id: str
    lesson_id: str
    type: str
    prompt: str
    path: str
    line: int
    hints: list[str] = field(default_factory=list)
    setup: str = ""
    code: str = ""
    ask: str = ""
    options: list[Option] = field(default_factory=list)
    solution: str = ""
    tolerance: float | None = None
    fields: tuple[str, ...] = DEFAULT_STATE_FIELDS
    function: str = ""
    variable: str = ""
    misconceptions: list[Misconception] = field(default_factory=list)
    compare: tuple[str, ...] = ("value",)
    explanation: str = ""
    given: str = ""  # code the question depends on that ran earlier, shown (never run) with the question
    checks: list[Check] = field(default_factory=list)  # task: every one must hold, in order (task_checks.py)
    starter: str = ""  # task as a coding exercise: buggy code put into the editor for the learner to fix
    # What the lesson ran before this question, in order: replaying it in a
    # fresh kernel rebuilds the namespace the question is asked in.
    context: list[Source] = field(default_factory=list)

    @property
    def uid(self) -> str:
        return f"{self.lesson_id}/{self.id}"

    def option_order(self, seed: str | int | None) -> list[int]:
        """The order a choice question's options are shown in: the same seed gives the same order."""
        order = list(range(len(self.options)))
        random.Random(None if seed is None else f"{seed}:{self.uid}").shuffle(order)
        return order

    @property
    def quiz_code(self) -> str:
        """The code a question shows out of its lesson (the quiz): what it depends on, then its own code.

        ``given`` is the author's account of the context and replaces the setup (which may hold hidden
        helpers); without it the setup is shown.
        """
        starter = f"# This code has a bug; enter it fixed:\n{self.starter.strip()}" if self.starter.strip() else ""
        return "\n".join(part for part in (self.given.strip() or self.setup.strip(), self.code.strip(), starter)
                         if part)

    @property
    def computed(self) -> bool:
        """True when the key comes from the kernel rather than the author."""
        return bool(self.ask) or self.type in ("task", "derive")

    def hint(self, n: int) -> str | None:
        """The n-th hint (0-based), or None when there are no more."""
        return self.hints[n] if 0 <= n < len(self.hints) else None


@dataclass
class Step:
    """One step of a lesson: prose to read, a cell to run, or a question."""

    kind: str  # "prose" | "code" | "question"
    line: int
    text: str = ""
    question: Question | None = None


@dataclass(frozen=True)
class Claim:
    """A ```python claim block: code stating that what the prose says holds (asserts).

    lint runs it in the canonical namespace before step ``before`` and fails the
    lesson if it raises; play and learn never show or run it (docs/LESSONS.md).
    """

    code: str
    line: int    # the first line of its code in the file
    before: int  # the index of the step it comes before (len(steps) at the end)


@dataclass
class Lesson:
    id: str
    title: str
    version: str
    path: str
    steps: list[Step]
    requires: list[str] = field(default_factory=list)
    language: str = "en"
    skippable: bool = True
    summary: str = ""
    setup: str = ""
    claims: list[Claim] = field(default_factory=list)
    # language tag -> title, when given in several (`title` is then the English one, else the lesson's own)
    titles: dict[str, str] = field(default_factory=dict)

    def title_in(self, language: str) -> str:
        """The title in `language` when the lesson gives one, else in English, else in its own language."""
        return in_language(self.titles, language, (DEFAULT_LANGUAGE, self.language)) if self.titles else self.title

    @property
    def questions(self) -> list[Question]:
        return [s.question for s in self.steps if s.question is not None]

    def question(self, question_id: str) -> Question | None:
        """A question by its local id or its uid."""
        local = question_id.split("/", 1)[1] if question_id.startswith(self.id + "/") else question_id
        return next((q for q in self.questions if q.id == local), None)

    def to_json(self) -> dict[str, Any]:
        """The listing row of `gradrepl lessons --json` (progress fields are added by the caller)."""
        return {"id": self.id, "title": self.title, "path": self.path, "version": self.version,
                "requires": self.requires, "language": self.language, "summary": self.summary,
                "questions": [q.uid for q in self.questions]}


@dataclass
class Course:
    """The lessons that loaded, in order, and the problems of those that did not."""

    lessons: list[Lesson]
    problems: list[Problem] = field(default_factory=list)

    def get(self, lesson_id: str) -> Lesson | None:
        return next((lesson for lesson in self.lessons if lesson.id == lesson_id), None)

    def question(self, uid: str) -> Question | None:
        """A question by its card id ``lesson_id/question_id``."""
        lesson_id, _, local = uid.partition("/")
        lesson = self.get(lesson_id)
        return lesson.question(local) if lesson else None

    @property
    def questions(self) -> list[Question]:
        return [q for lesson in self.lessons for q in lesson.questions]


def replay_sources(lesson: Lesson, upto: int) -> list[Source]:
    """The code that rebuilds the canonical namespace before step ``upto``.

    Front matter setup, every python cell, each question's setup and code, and
    each task's solution: what resume replays (never pickled tensors).
    """
    sources = [Source(lesson.setup, 2)] if lesson.setup else []
    for step in lesson.steps[:upto]:
        if step.kind == "code":
            sources.append(Source(step.text, step.line + 1))
        elif step.question is not None:
            sources.extend(question_sources(step.question, with_solution=True))
    return sources


def question_sources(question: Question, with_solution: bool) -> list[Source]:
    """What a question itself runs: its setup, its code, and (for tasks) the solution."""
    sources = []
    if question.setup:
        sources.append(Source(question.setup, question.line))
    if question.code:
        sources.append(Source(question.code, question.line, may_fail=True))
    if with_solution and question.type == "task":
        sources.append(Source(question.solution, question.line))
    return sources
