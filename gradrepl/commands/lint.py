"""`gradrepl lint [PATH...]`: check lesson files, running every key and solution in a kernel."""

from __future__ import annotations

import argparse
import sys

from gradrepl.commands.common import (add_kernel_options, emit_json, exit_codes, INTERRUPTED_EXIT, kernel_options,
                                     run_async, USAGE_EXIT)
from gradrepl.terminal_text import visible
from gradrepl.tutor import lint as linter
from gradrepl.tutor.lesson import default_lessons_dir


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "lint", help="validate lesson files (schema, ids, keys, solutions)",
        description="Validate lessons: schema and unique ids; then play each lesson twice in fresh kernels "
                    "with its own keys: every solution passes its check, a task's check fails before its "
                    "solution, exactly one choice matches a computed key, keys are stable, steps are fast. "
                    "Each problem names a file and a line; exit status 1 if there is any.",
        epilog=exit_codes("0 every lesson is valid",
                          "1 some lesson has problems (listed)",
                          USAGE_EXIT,
                          INTERRUPTED_EXIT))
    parser.add_argument("paths", nargs="*", metavar="PATH", help="lesson files or folders (default: the course)")
    parser.add_argument("--static", action="store_true", help="only the checks that need no kernel")
    parser.add_argument("--time-limit", type=float, default=linter.DEFAULT_TIME_LIMIT, metavar="S",
                        help=f"seconds a step may take (default {linter.DEFAULT_TIME_LIMIT:g})")
    parser.add_argument("--json", action="store_true", help="one JSON object with files, lessons and problems")
    add_kernel_options(parser, step_timeout=30.0)


def run(args: argparse.Namespace) -> int:
    from gradrepl.errors import UsageError

    paths = args.paths or [str(default_lessons_dir())]
    files = linter.lesson_files(paths)
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise UsageError(f"no such lesson file: {', '.join(missing)}")
    if args.static:
        lessons, problems = linter.lint_static(files)
        report = linter.LintReport([str(f) for f in files], [lesson.id for lesson in lessons], problems)
    else:
        report = run_async(_lint(paths, args))
    if args.json:
        emit_json({"type": "lint", "files": report.files, "lessons": report.lessons,
                   "problems": report.problems, "ok": report.ok})
    else:
        for problem in report.problems:
            print(visible(problem))  # it names the lesson file
        verdict = "ok" if report.ok else f"{len(report.problems)} problem(s)"
        print(f"{len(report.files)} file(s), {len(report.lessons)} lesson(s) checked: {verdict}", file=sys.stderr)
    return 0 if report.ok else 1


async def _lint(paths: list[str], args: argparse.Namespace) -> linter.LintReport:
    from gradrepl.session import Session

    async with Session(kernel_options(args)) as session:
        return await linter.lint(paths, session, args.time_limit)
