"""`gradrepl lessons`: the course, one line per lesson (or JSON)."""

from __future__ import annotations

import argparse
import json
import sys

from gradrepl.tutor.lesson import Course, load_course


def register(subparsers) -> None:
    parser = subparsers.add_parser("lessons", help="list the course's lessons",
                                   description="List the lessons in the course folder, in order. Lessons that "
                                               "cannot be loaded are reported on stderr with file and line.")
    parser.add_argument("--json", action="store_true", help='a JSON list of {"id", "title", "path", ...}')
    parser.add_argument("--lessons", metavar="DIR", help="the course folder (default: the shipped lessons/)")


def listing(course: Course) -> list[dict]:
    """One row per lesson; progress fields are merged into these rows by whoever tracks progress."""
    return [lesson.to_json() for lesson in course.lessons]


def run(args: argparse.Namespace) -> int:
    course = load_course(args.lessons)
    rows = listing(course)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        width = max((len(row["id"]) for row in rows), default=0)
        for n, row in enumerate(rows, 1):
            print(f"{n:>2}. {row['id']:<{width}}  {row['title']}  ({len(row['questions'])} questions)")
    for problem in course.problems:
        print(f"gradrepl: lesson not loaded: {problem}", file=sys.stderr)
    return 0
