"""`gradrepl learn [ID]`: the TUI with the lesson pane beside the console and the tensor panel.

Without ID the pane shows the course with progress; with ID it opens that lesson
where the learner stopped. A lesson that does not load is shown with its file
and line, and the rest of the course stays available.
"""

from __future__ import annotations

import argparse

from gradrepl.commands.common import add_kernel_options, exit_codes, kernel_options, USAGE_EXIT


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "learn", help="take a lesson in the TUI (the console and tensor panel beside it)",
        description="Open the tutor with the lesson pane. Without ID, pick a lesson from the course; "
                    "with ID, resume that lesson where you stopped.",
        epilog=exit_codes("0 you left the tutor", USAGE_EXIT, "129 the terminal went away (hang-up)"))
    parser.add_argument("lesson", metavar="ID", nargs="?", help="a lesson id (see `gradrepl lessons`)")
    parser.add_argument("--lessons", metavar="DIR", help="the course folder (default: the shipped lessons/)")
    add_kernel_options(parser)


def run(args: argparse.Namespace) -> int:
    from gradrepl.tui.app import GradReplApp

    app = GradReplApp(kernel_options(args), learn=True, lesson_id=args.lesson, lessons_dir=args.lessons)
    app.run()
    return app.return_code or 0
