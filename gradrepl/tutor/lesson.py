"""Lessons as data: the model and the loader of lessons/*.md.

A lesson is a Markdown file: YAML front matter, prose, ```python cells that run
in the kernel, and ```question blocks holding YAML. docs/LESSONS.md is the
format for authors. Nothing here runs lesson code: the loader only parses it
(``ast.parse`` for syntax), so a broken lesson is reported with file and line
and the rest of the course stays available.
"""

from __future__ import annotations

import os
from pathlib import Path

from gradrepl.source_file import Unreadable, read_text
from gradrepl.tutor.lesson_model import (  # noqa: F401 (the names callers import from here)
    Claim,
    Course,
    Lesson,
    LessonFormatError,
    Misconception,
    Option,
    Problem,
    Question,
    Source,
    Step,
    question_sources,
    replay_sources,
)
from gradrepl.tutor.lesson_parser import QUESTION_TYPES, STATE_FIELDS, parse_lesson  # noqa: F401
from gradrepl.views.remarks import file_error_words

LESSONS_ENV = "GRADREPL_LESSONS"
MAX_LESSON_BYTES = 1 << 20   # a lesson is prose and small cells; a bigger file is a mistake or an attack


def default_lessons_dir() -> Path:
    """$GRADREPL_LESSONS, else the checkout's lessons/ folder, else the course installed with the package."""
    override = os.environ.get(LESSONS_ENV)
    if override:
        return Path(override)
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent / "lessons"
    return checkout if checkout.is_dir() else package / "course"


def load_course(directory: str | Path | None = None) -> Course:
    """Every lessons/*.md in file-name order; a bad file adds problems and is left out."""
    folder = Path(directory) if directory is not None else default_lessons_dir()
    lessons: list[Lesson] = []
    problems: list[Problem] = []
    if not folder.is_dir():
        return Course([], [Problem(str(folder), 0, "no lessons folder here")])
    seen: dict[str, str] = {}
    for path in sorted(folder.glob("*.md")):
        try:
            lesson = load_lesson(path)
        except LessonFormatError as exc:
            problems.extend(exc.problems)
            continue
        if lesson.id in seen:
            problems.append(Problem(lesson.path, 2, f"lesson id {lesson.id!r} is also used by {seen[lesson.id]}"))
            continue
        seen[lesson.id] = lesson.path
        lessons.append(lesson)
    known = {lesson.id for lesson in lessons}
    for lesson in lessons:
        for needed in lesson.requires:
            if needed not in known:
                problems.append(Problem(lesson.path, 2, f"requires unknown lesson {needed!r}"))
    return Course(lessons, problems)


def load_lesson(path: str | Path) -> Lesson:
    """Parse one lesson file; raises LessonFormatError listing every problem found."""
    path = Path(path)
    try:
        text = read_text(str(path), MAX_LESSON_BYTES)  # a regular file only: a FIFO or device is refused unopened
    except Unreadable as exc:
        words = f"the file is larger than {MAX_LESSON_BYTES >> 20} MiB, the most a lesson may be: split it into " \
            "lessons" if exc.code == "too_large" else f"cannot read: {file_error_words(exc.code, exc.names)}"
        raise LessonFormatError([Problem(str(path), 0, words)]) from None
    return parse_lesson(text, str(path))
