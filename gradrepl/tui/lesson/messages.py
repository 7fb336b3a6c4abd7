"""Messages of the lesson pane: its workers' disk reads, and the lesson run's events."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from gradrepl.tutor.lesson import Course
from gradrepl.tutor.lesson_events import Event
from gradrepl.tutor.progress import LessonProgress


@dataclass
class CourseLoaded(Message):
    """The course was parsed; `progress` is the stored progress per lesson id."""

    course: Course
    progress: dict[str, LessonProgress]
    notices: list[str] = field(default_factory=list)


@dataclass
class LessonLoaded(Message):
    """The learner's stored progress in the lesson they opened."""

    lesson_id: str
    progress: LessonProgress


@dataclass
class LessonEvent(Message):
    """An event of the lesson run (tutor/lesson_events.py), delivered to the pane's own message queue."""

    event: Event
