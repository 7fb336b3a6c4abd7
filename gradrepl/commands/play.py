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
import asyncio
import secrets
import sys
from pathlib import Path

from gradrepl.commands.common import add_kernel_options, emit_json, kernel_options, run_async
from gradrepl.completeness import is_complete
from gradrepl.kernel.protocol import StepResult
from gradrepl.terminal_text import visible
from gradrepl.tutor.asking import (
    BLANK_WORDS,
    Typed,
    command,
    field_label,
    how_to_answer,
    read_fields,
    read_typed,
)
from gradrepl.tutor.lesson import Lesson, LessonFormatError, load_course, load_lesson
from gradrepl.tutor.lesson_run import (
    Asked,
    CellRan,
    Event,
    Graded,
    Hinted,
    LessonProblem,
    Notice,
    Opened,
    Prose,
    Reply,
    Revealed,
    Summary,
    Turn,
)
from gradrepl.tutor.progress import lesson_state

COMMANDS_HELP = "type ? or 'hint' for a hint, 'skip' to see the answer, 'quit' to stop"
OFFERED = ("skip", "quit")
QUIET_EVENTS = ("live_step", "key")  # the panel's and the engine's own: not part of the transcript
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
                    "exit status 1 if any check fails. " + AUTO_TRUSTS)
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
    from gradrepl.tutor.keeper import ProgressKeeper
    from gradrepl.tutor.keys import KeyKernel
    from gradrepl.tutor.lesson_run import KeyAnswerer, LessonRun

    out = sys.stderr if args.json else sys.stdout
    view = TextView(out)
    emit = _json_line if args.json else view.show
    answerer = KeyAnswerer() if args.auto else TerminalAnswerer(out)
    # --auto is the course's test: it neither reads nor changes the learner's progress.
    keeper = None if args.auto else ProgressKeeper()
    if args.auto:
        print(f"gradrepl: {AUTO_TRUSTS}", file=sys.stderr if args.json else out)
    try:
        progress = await keeper.lesson(lesson.id, lesson.version) if keeper else None
        for notice in keeper.take_notices() if keeper else []:
            print(f"gradrepl: {notice}", file=sys.stderr)
        start = args.start
        if progress is not None and start is None:
            start = _resume_point(lesson, progress, view)
        async with Session(kernel_options(args)) as session:
            # A learner sees the options in a new order each time; --auto keeps one order for reproducible logs.
            seed = "" if args.auto else secrets.token_hex(4)
            run = LessonRun(lesson, session, KeyKernel(session, owned=False), emit, progress=progress,
                            recorder=keeper, shuffle_seed=seed, auto=args.auto)
            summary = await run.play(answerer, start or 0)
    finally:
        if keeper is not None:
            keeper.close()
    return 0 if (summary.ok if args.auto else summary.finished) else 1


def _resume_point(lesson: Lesson, progress, view: TextView) -> int:
    """Where a learner goes on: the stored step; a finished lesson is played again from its start."""
    if lesson_state(progress, len(lesson.steps)) == "done":
        progress.finished.clear()
        progress.hints.clear()
        view.say("You finished this lesson before: playing it again from the start.")
        return 0
    if progress.current_step:
        view.say(f"Going on at step {progress.current_step + 1} of {len(lesson.steps)} "
                 "(the steps before are replayed, not shown).")
    return progress.current_step


def _json_line(event) -> None:
    if event.type not in QUIET_EVENTS:
        emit_json(event.to_json())


class TerminalAnswerer:
    """Asks on the terminal (or reads a pipe): one line per answer; EOF means quit."""

    def __init__(self, out):
        self.out = out

    async def reply(self, turn: Turn) -> Reply:
        question = turn.question
        while True:
            if question.type == "predict_state":
                typed = await self._fields(question)
            elif question.type == "task":
                typed = await self._code()
            else:
                line = await self._line("answer> ")
                typed = Typed("quit") if line is None else read_typed(question, line, turn.order, OFFERED)
            if typed.kind != "again":
                return Reply(typed.kind, typed.value)
            self.out.write(f"  {typed.words}\n")

    async def _fields(self, question) -> Typed:
        values = {}
        for name in question.fields:
            line = await self._line(f"  {field_label(question, name)}> ")
            if line is None:
                return Typed("quit")
            asked = command(line, OFFERED)
            if asked:
                return Typed(asked)
            values[name] = line
        return read_fields(question, values)

    async def _code(self) -> Typed:
        """One attempt: a complete line, or lines that end with a blank line (a block, or a whole
        solution of several statements), as `gradrepl.completeness` says."""
        lines: list[str] = []
        while True:
            line = await self._line(">>> " if not lines else "... ")
            if line is None:
                return Typed("quit") if not lines else Typed("answer", "\n".join(lines))
            if not lines:
                asked = command(line, OFFERED)
                if asked:
                    return Typed(asked)
                if not line.strip():
                    return Typed("again", words=BLANK_WORDS)
            lines.append(line)
            source = "\n".join(lines)
            if (len(lines) == 1 and is_complete(source)) or (not line.strip() and is_complete(source + "\n")):
                return Typed("answer", source.strip("\n"))

    async def _line(self, prompt: str) -> str | None:
        self.out.write(prompt)
        self.out.flush()
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            self.out.write("\n")
            return None
        if not sys.stdin.isatty():
            self.out.write(line)  # echo piped input so a transcript reads like a session
        return line.rstrip("\n")


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
            self.say("  This code has a bug; enter it fixed:")
            self._code(question.starter)
        for n, index in enumerate(event.order, 1):
            self.say(f"  {n}. {question.options[index].text}")
        if question.tolerance is not None and question.type == "numeric":
            self.say(f"  (within ±{question.tolerance:g})")
        self.say(f"  {how_to_answer(question, COMMANDS_HELP)}")

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
        print(f"lesson problem: {event.message}", file=sys.stderr)

    def _summary(self, event: Summary) -> None:
        self.say()
        self.say(summary_words(event))

    def _code(self, source: str) -> None:
        for n, line in enumerate(source.rstrip("\n").splitlines()):
            self.say(("... " if n and line[:1] in (" ", "\t") else ">>> ") + line)

    def _result(self, step: StepResult) -> None:
        for text in (step.stdout, step.display, step.result):
            if text:
                self.say(text.rstrip("\n"))
        if step.error:
            self.say(f"{step.error.type}: {step.error.message}")
            if step.error.explanation:
                self.say(f"  ({step.error.explanation})")


def summary_words(summary: Summary) -> str:
    """The last line of a playback: first-try right, right after help, and skipped, each counted."""
    state = "finished" if summary.finished else "stopped"
    words = (f"{state}: {summary.questions} question(s): {summary.first_try} right at the first try, "
             f"{summary.after_help} right after hints or wrong tries, {summary.skipped} skipped")
    if summary.failed:
        words += f"; failed: {', '.join(summary.failed)}"
    return words


