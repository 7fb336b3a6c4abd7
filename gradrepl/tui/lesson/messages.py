"""Messages of the lesson pane: its workers and kernel jobs post them, its handlers render them."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from gradrepl.tutor.grading import Grade, Key
from gradrepl.tutor.lesson import Course
from gradrepl.tutor.progress import LessonProgress


@dataclass
class CourseLoaded(Message):
    """The course was parsed; `progress` is the stored progress per lesson id."""

    course: Course
    progress: dict[str, LessonProgress]
    notices: list[str] = field(default_factory=list)


@dataclass
class LessonResumed(Message):
    """The live kernel holds the lesson's namespace before the step the learner is on."""

    lesson_id: str
    replayed: int
    problems: list[str] = field(default_factory=list)


@dataclass
class KeyComputed(Message):
    """A question's answer key came back from the key kernel."""

    uid: str
    key: Key


@dataclass
class AnswerGraded(Message):
    """The engine's verdict on one answer (or on a task's Check)."""

    uid: str
    grade: Grade
    answer: str = ""    # what the learner gave, for the review log
    counts: bool = True  # False when no verdict could be reached: not a review


@dataclass
class Revealed(Message):
    """The question's own code (or a skipped task's solution) ran in the live kernel."""

    uid: str
    skipped: bool
    problems: list[str] = field(default_factory=list)


@dataclass
class LessonNotice(Message):
    """Words for the learner about the lesson itself (rebuilt namespace, a lesson bug)."""

    text: str
    style: str = "dim"


@dataclass
class LessonLoaded(Message):
    """The learner's stored progress in the lesson they opened."""

    lesson_id: str
    progress: LessonProgress
