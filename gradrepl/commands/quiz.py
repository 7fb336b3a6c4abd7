"""`gradrepl quiz`: review the course's questions, scheduled by FSRS.

Due questions first (the ones you are most likely to have forgotten first),
then new ones. Answers are graded like in the lessons (keys computed in the
kernel) and saved one by one. A Textual screen by default; prompts with
--plain, or when stdin/stdout is not a terminal.
"""

from __future__ import annotations

import argparse
import sys

from gradrepl.commands.common import (add_kernel_options, exit_codes, INTERRUPTED_EXIT, kernel_options, open_store,
                                     run_async, USAGE_EXIT)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "quiz", help="spaced-repetition review of the course's questions",
        description="Ask due questions first (lowest chance of recall first), then new ones; grade each "
                    "answer in the kernel, show the right answer and what a wrong one reveals, and "
                    "schedule the next review with FSRS.",
        epilog=exit_codes("0 the quiz ended, or nothing was due", USAGE_EXIT + " (no such --lesson)", INTERRUPTED_EXIT))
    parser.add_argument("--count", type=int, default=10, metavar="N", help="ask at most N questions (default 10)")
    parser.add_argument("--lesson", metavar="ID", help="only questions of this lesson")
    parser.add_argument("--plain", action="store_true", default=argparse.SUPPRESS,
                        help="plain prompts instead of the TUI")
    parser.add_argument("--seed", type=int, metavar="S", help="make the order of questions reproducible")
    add_kernel_options(parser, step_timeout=30.0)


def run(args: argparse.Namespace) -> int:
    from gradrepl.errors import UsageError
    from gradrepl.tutor.lesson import load_course
    from gradrepl.tutor.quiz import SessionGrader, SpacedRepetition, due_in_words, start_quiz

    if args.count < 1:
        raise UsageError("--count must be at least 1")
    options = kernel_options(args)
    course = load_course()
    if course.problems:
        print(f"gradrepl: {len(course.problems)} problem(s) in the lessons; those lessons are left out "
              "(`gradrepl lint` lists them).", file=sys.stderr)
    with open_store() as store:
        spaced = SpacedRepetition(store)
        grader = SessionGrader(options)
        try:
            quiz = start_quiz(course, spaced, grader, lesson_id=args.lesson, count=args.count, seed=args.seed)
        except KeyError:
            known = ", ".join(lesson.id for lesson in course.lessons) or "none"
            raise UsageError(f"--lesson: no lesson {args.lesson!r} (lessons: {known})") from None
        if not quiz.questions:
            later = quiz.plan.next_due
            when = f" The next one is due {due_in_words(later, spaced.now())}." if later else ""
            print(f"Nothing to review right now.{when}")
            return 0
        if getattr(args, "plain", False) or not (sys.stdin.isatty() and sys.stdout.isatty()):
            return run_async(_plain(quiz, grader))  # scripted use (a pipe) keeps the plain flow
        titles = {lesson.id: lesson.title for lesson in course.lessons}
        return _tui(quiz, grader, titles)


def _tui(quiz, grader, titles) -> int:
    from gradrepl.tui.quiz.app import QuizApp, closing_words

    app = QuizApp(quiz, grader=grader, lesson_titles=titles)
    app.run()
    print(closing_words(quiz.summary(), quiz.total))
    return app.return_code or 0


async def _plain(quiz, grader) -> int:
    from gradrepl.plain.quiz import default_reader, play_quiz

    grader.start()
    try:
        await play_quiz(quiz, default_reader())
    finally:
        await grader.close()
    return 0
