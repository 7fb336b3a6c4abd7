"""`gradrepl lessons`: the course, one line per lesson (or JSON)."""

from __future__ import annotations

import argparse
import json
import sys

from gradrepl.commands.common import exit_codes, open_store, USAGE_EXIT
from gradrepl.tutor.lesson import Course, load_course
from gradrepl.tutor.progress import LessonProgress, lesson_state


def register(subparsers) -> None:
    parser = subparsers.add_parser("lessons", help="list the course's lessons",
                                   description="List the lessons in the course folder, in order. Lessons that "
                                               "cannot be loaded are reported on stderr with file and line.",
        epilog=exit_codes("0 the lessons were listed (lessons with problems too, marked)", USAGE_EXIT))
    parser.add_argument("--json", action="store_true", help='a JSON list of {"id", "title", "path", ...}')
    parser.add_argument("--lessons", metavar="DIR", help="the course folder (default: the shipped lessons/)")


def listing(course: Course, progress: dict[str, LessonProgress]) -> list[dict]:
    """One row per lesson, with the learner's progress in it."""
    rows = []
    for lesson in course.lessons:
        mine = progress.get(lesson.id)
        if mine is not None and mine.version != lesson.version:
            mine = None  # a new version of the lesson starts over
        row = lesson.to_json()
        row["progress"] = {
            "state": lesson_state(mine, len(lesson.steps)),
            "steps": len(lesson.steps),
            "finished_steps": len(mine.finished) if mine else 0,
            "current_step": mine.current_step if mine else 0,
        }
        rows.append(row)
    return rows


def stored_progress() -> dict[str, LessonProgress]:
    from gradrepl.errors import UsageError

    try:
        with open_store() as store:
            return store.lessons()
    except UsageError as exc:  # the course is still worth listing
        print(f"gradrepl: progress not shown: {exc}", file=sys.stderr)
        return {}


def run(args: argparse.Namespace) -> int:
    course = load_course(args.lessons)
    rows = listing(course, stored_progress())
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        width = max((len(row["id"]) for row in rows), default=0)
        for n, row in enumerate(rows, 1):
            state = row["progress"]
            words = {"new": "not started", "done": "done"}.get(
                state["state"], f"step {state['current_step'] + 1} of {state['steps']}")
            print(f"{n:>2}. {row['id']:<{width}}  {row['title']}  "
                  f"({len(row['questions'])} questions; {words})")
    for problem in course.problems:
        print(f"gradrepl: lesson not loaded: {problem}", file=sys.stderr)
    return 0
