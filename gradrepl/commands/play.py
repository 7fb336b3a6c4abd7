"""`gradrepl play ID`: a lesson in the terminal, headless.

Without --auto it prints each step and asks each question on stdin (piped
input works: one answer per line). With --auto every question is answered by
its own computed key and every task by its solution: exit status 1 if any
check fails, which makes it the course's own test.

What a verdict rests on: a learner's task attempt is compared with the
solution run in a kernel the learner's code never ran in (a fresh one), and
the comparison is made here, on plain data (tutor/tasks.py). --auto tests the
lesson itself, so every kernel it reads ran the lesson's own code: it trusts
that code, and says so (AUTO_TRUSTS), rather than claim a proof it cannot give.
"""

from __future__ import annotations

import argparse
import secrets
import shutil
import sys
from pathlib import Path

from gradrepl.commands.common import (add_kernel_options, emit_json, exit_codes, INTERRUPTED_EXIT, kernel_options,
                                     run_async, USAGE_EXIT)
from gradrepl.protocol.messages import StepResult
from gradrepl.session import magic_names
from gradrepl.terminal_text import visible
from gradrepl.plain.lesson_input import CELL_HOW, TerminalAnswerer
from gradrepl.tutor.asking import how_to_answer, precision_words
from gradrepl.tutor.lesson import Lesson, LessonFormatError, load_course, load_lesson
from gradrepl.tutor.lesson_events import (
    Asked,
    CellRan,
    Event,
    Graded,
    Hinted,
    LessonProblem,
    Notice,
    Opened,
    Prose,
    Revealed,
    Summary,
)
from gradrepl.views.steps import step_text

COMMANDS_HELP = "type ? or 'hint' for a hint, 'skip' to see the answer, 'quit' to stop; %graph NAME, %trace NAME, %tensors, %at N and %help show what is there"
QUIET_EVENTS = ("key",)  # the engine's own: not part of the transcript
AUTO_TRUSTS = ("--auto trusts the lesson's own code: its keys and every task's reference come from fresh kernels "
               "that ran that code (never a learner's), and the verdicts are compared here, outside any kernel. "
               "A pass says the lesson agrees with itself; a hostile lesson could make itself pass.")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "play", help="play a lesson in the terminal (--auto: answer with the keys, the course's test)",
        description="Play lesson ID (or a lesson file) step by step, asking each question on the terminal. "
                    "A task attempt is judged against the lesson's solution, run from the same start in a "
                    "fresh kernel your code never ran in. "
                    "With --auto, answer every question with its computed key and run every solution; "
                    "exit status 1 if any check fails. " + AUTO_TRUSTS,
        epilog=exit_codes("0 the lesson was finished (with --auto: every step passed)",
                          "1 it was left unfinished (with --auto: some step failed)",
                          USAGE_EXIT + " (no such lesson, --from out of range)",
                          INTERRUPTED_EXIT))
    parser.add_argument("lesson", metavar="ID", help="a lesson id (see `gradrepl lessons`) or a .md file")
    parser.add_argument("--auto", action="store_true",
                        help="answer with the computed keys; fail on any check (trusts the lesson's code, see above)")
    parser.add_argument("--json", action="store_true", help="one JSON event per line on stdout")
    parser.add_argument("--from", dest="start", type=int, default=None, metavar="STEP",
                        help="start at step STEP (the steps before are replayed, not shown); "
                             "without it a lesson goes on where you stopped (in play or learn)")
    parser.add_argument("--lessons", metavar="DIR", help="the course folder (default: the shipped lessons/)")
    add_kernel_options(parser, step_timeout=30.0)


def find_lesson(name: str, folder: str | None) -> Lesson:
    """A lesson by id or by path; a lesson with problems is a usage error that lists them."""
    from gradrepl.errors import UsageError

    if name.endswith(".md") or Path(name).is_file():
        try:
            return load_lesson(name)
        except LessonFormatError as exc:
            raise UsageError(f"the lesson has problems:\n{exc}") from None
    course = load_course(folder)
    lesson = course.get(name)
    if lesson is None:
        broken = [str(p) for p in course.problems if Path(p.path).stem.endswith(name)]
        detail = ("\n" + "\n".join(broken)) if broken else ""
        known = ", ".join(lesson.id for lesson in course.lessons)
        raise UsageError(f"no lesson {name!r} (lessons: {known}){detail}")
    return lesson


def run(args: argparse.Namespace) -> int:
    from gradrepl.errors import UsageError

    lesson = find_lesson(args.lesson, args.lessons)
    if args.start is not None and not 0 <= args.start < len(lesson.steps):
        raise UsageError(f"--from: the lesson has steps 0 to {len(lesson.steps) - 1}")
    return run_async(_play(lesson, args))


async def _play(lesson: Lesson, args: argparse.Namespace) -> int:
    from gradrepl.session import Session
    from gradrepl.session.steps import Door
    from gradrepl.tutor.answerers import KeyAnswerer
    from gradrepl.tutor.keeper import ProgressKeeper
    from gradrepl.tutor.keys import KeyKernel
    from gradrepl.tutor.lesson_run import LessonRun

    out = sys.stderr if args.json else sys.stdout
    view = TextView(out)
    emit = _json_line if args.json else view.show
    # --auto is the course's test: it neither reads nor changes the learner's progress.
    keeper = None if args.auto else ProgressKeeper()
    if args.auto:
        print(f"gradrepl: {AUTO_TRUSTS}", file=sys.stderr if args.json else out)
    try:
        progress = await keeper.lesson(lesson.id, lesson.version) if keeper else None
        for notice in keeper.take_notices() if keeper else []:
            print(f"gradrepl: {notice}", file=sys.stderr)
        async with Session(kernel_options(args)) as session:
            if not args.json:  # %at, %tensors and %graph fit the terminal, as in the plain REPL
                session.width = shutil.get_terminal_size().columns
            # The learner's kernel is the key kernel too; play renders steps from the events, so its
            # door reports to no one.
            door = Door(session)

            async def console(source: str) -> None:  # the %commands a lesson asks the learner to type
                refused = refused_at_a_question(source)
                if refused:
                    view.say(f"  {refused}")
                    return
                view.step(await door.execute(source))

            answerer = KeyAnswerer() if args.auto else TerminalAnswerer(out, console)
            # A learner sees the options in a new order each time; --auto keeps one order for reproducible logs.
            seed = "" if args.auto else secrets.token_hex(4)
            run = LessonRun(lesson, door, KeyKernel(door, owned=False), emit, progress=progress,
                            recorder=keeper, shuffle_seed=seed, auto=args.auto)
            if args.start is None:
                _say_where(run, view)
            summary = await run.play(answerer, args.start)
    finally:
        if keeper is not None:
            keeper.close()
    return 0 if (summary.ok if args.auto else summary.finished) else 1


# The console commands a question prompt runs: those a lesson asks for, which show what is there and run no
# code of the learner's (a %time there ran it in the lesson's kernel, and what it patched stayed for later cells).
SHOWN_AT_A_QUESTION = ("%graph", "%tensors", "%help", "%at")


def refused_at_a_question(source: str) -> str:
    """Why a %command typed at a question prompt does not run ("" when it runs)."""
    name, _, arg = source.strip().partition(" ")
    arg = arg.strip()
    if name in SHOWN_AT_A_QUESTION or name == "%trace" and arg and not magic_names.runs_statement(source):
        return ""
    what = "%trace with a statement runs it" if name == "%trace" else f"{visible(name)} runs code or changes the kernel"
    return (f"{what}, which a question prompt does not: only %graph, %trace NAME, %tensors, %help and %at "
            "run here (they show what is there); put code in the answer, or try it after the lesson")


def _say_where(run, view: TextView) -> None:
    """Where a learner goes on: the stored step (a finished lesson is taken again from its start)."""
    if run.again:
        view.say("You finished this lesson before: taking it again from the start.")
    elif run.index:
        view.say(f"Going on at step {run.index + 1} of {len(run.lesson.steps)} "
                 "(the steps before are replayed, not shown).")


def _json_line(event) -> None:
    if event.type not in QUIET_EVENTS:
        emit_json(event.to_json())


class TextView:
    """Lesson events as plain text on the terminal."""

    def __init__(self, out):
        self.out = out

    def show(self, event: Event) -> None:
        handler = getattr(self, f"_{event.type}", None)
        if handler:
            handler(event)
            self.out.flush()

    def say(self, text: str = "") -> None:
        print(visible(text), file=self.out)
        self.out.flush()

    def _lesson(self, event: Opened) -> None:
        self.say(f"== {event.lesson.title} ({event.lesson.id}) ==")

    def _prose(self, event: Prose) -> None:
        self.say()
        self.say(event.text)

    def _cell(self, event: CellRan) -> None:
        self.say()
        self._code(event.source)
        self._result(event.result)

    def _question(self, event: Asked) -> None:
        question = event.question
        self.say()
        self.say(f"? {question.prompt}")
        if question.code:
            self._code(question.code)
        if question.starter:
            self.say("  This code has a bug: it is in the prompt below, fix it there" if sys.stdin.isatty()
                     else "  This code has a bug; enter it fixed:")
            self._code(question.starter)
        for n, index in enumerate(event.order, 1):
            self.say(f"  {n}. {question.options[index].text}")
        if precision_words(question):
            self.say(f"  ({precision_words(question)})")
        self.say(f"  {how_to_answer(question, COMMANDS_HELP)}")
        if question.type == "task":
            self.say(f"  ({CELL_HOW})")

    def _hint(self, event: Hinted) -> None:
        self.say(f"  hint {event.n}: {event.text}" if event.text else
                 "  No more hints: type 'skip' to see the solution.")

    def _notice(self, event: Notice) -> None:
        self.say(f"  {event.text}")

    def _grade(self, event: Graded) -> None:
        for step in event.grade.steps:
            self._result(step)
        mark = "right" if event.grade.correct else "try again" if event.grade.retry else "not right"
        self.say(f"  [{mark}] {event.grade.feedback}")

    def _reveal(self, event: Revealed) -> None:
        for step in event.steps:
            if event.skipped and step.source:
                self._code(step.source)
            self._result(step)
        if "\n" in event.expected.strip():
            self.say("  answer:")
            self._code(event.expected)
        else:
            self.say(f"  answer: {event.expected}")

    def _problem(self, event: LessonProblem) -> None:
        print(visible(f"lesson problem: {event.message}"), file=sys.stderr)

    def _summary(self, event: Summary) -> None:
        self.say()
        self.say(summary_words(event))

    def step(self, result: StepResult) -> None:
        """A step the learner ran at the console (a %command)."""
        self._result(result)
        self.out.flush()

    def _code(self, source: str) -> None:
        for n, line in enumerate(source.rstrip("\n").splitlines()):
            # A blank line inside a cell is a continuation, as Python's prompt shows it ("...").
            self.say((("... " if n and (line[:1] in (" ", "\t") or not line.strip()) else ">>> ") + line).rstrip())

    def _result(self, step: StepResult) -> None:
        # The views' renderer, as `run` prints a step (a help page too), without the tensor table.
        text = step_text(step, tables=False)
        if text:
            self.say(text)


def summary_words(summary: Summary) -> str:
    """The last line of a playback: first-try right, right after help, and skipped, each counted."""
    state = "finished" if summary.finished else "stopped"
    words = (f"{state}: {summary.questions} question(s): {summary.first_try} right at the first try, "
             f"{summary.after_help} right after hints or wrong tries, {summary.skipped} skipped")
    if summary.not_read:
        words += (f"; {summary.not_read} answer{'s' if summary.not_read > 1 else ''} that could not be read "
                  "(asked again, not counted as a try)")
    if summary.failed:
        words += f"; failed: {', '.join(summary.failed)}"
    return words


