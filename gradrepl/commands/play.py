"""`gradrepl play ID`: a lesson in the terminal, headless.

Without --auto it prints each step and asks each question on stdin (piped
input works: one answer per line). With --auto every question is answered by
its own computed key and every task by its solution: exit status 1 if any
check fails, which makes it the course's own test.
"""

from __future__ import annotations

import argparse
import asyncio
import codeop
import secrets
import sys
from pathlib import Path

from gradrepl.commands.common import add_kernel_options, emit_json, kernel_options, run_async
from gradrepl.tutor.lesson import Lesson, LessonFormatError, load_course, load_lesson
from gradrepl.tutor.player import Asked, KeyAnswerer, LessonPlayer, Reply

COMMANDS_HELP = "type 'hint' for a hint, 'skip' to see the answer, 'quit' to stop"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "play", help="play a lesson in the terminal (--auto: answer with the keys, the course's test)",
        description="Play lesson ID (or a lesson file) step by step, asking each question on the terminal. "
                    "With --auto, answer every question with its computed key and run every solution; "
                    "exit status 1 if any check fails.")
    parser.add_argument("lesson", metavar="ID", help="a lesson id (see `gradrepl lessons`) or a .md file")
    parser.add_argument("--auto", action="store_true", help="answer with the computed keys; fail on any check")
    parser.add_argument("--json", action="store_true", help="one JSON event per line on stdout")
    parser.add_argument("--from", dest="start", type=int, default=0, metavar="STEP",
                        help="resume at step STEP (the steps before are replayed, not shown)")
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
    if not 0 <= args.start <= len(lesson.steps):
        raise UsageError(f"--from: the lesson has steps 0 to {len(lesson.steps)}")
    return run_async(_play(lesson, args))


async def _play(lesson: Lesson, args: argparse.Namespace) -> int:
    from gradrepl.session import Session

    out = sys.stderr if args.json else sys.stdout
    emit = emit_json if args.json else TextView(out).show
    answerer = KeyAnswerer() if args.auto else TerminalAnswerer(out)
    async with Session(kernel_options(args)) as session:
        # A learner sees the options in a new order each time; --auto keeps one order for reproducible logs.
        seed = "" if args.auto else secrets.token_hex(4)
        player = LessonPlayer(lesson, session, answerer, emit, auto=args.auto, shuffle_seed=seed)
        summary = await player.run(args.start)
    return 0 if (summary.ok if args.auto else summary.finished) else 1


class TerminalAnswerer:
    """Asks on the terminal (or reads a pipe): one line per answer; EOF means quit."""

    def __init__(self, out):
        self.out = out

    async def reply(self, asked: Asked) -> Reply:
        question = asked.question
        if question.type == "predict_state":
            return await self._fields(asked)
        if question.type == "task":
            return await self._code()
        line = await self._line("answer> ")
        if line is None:
            return Reply("quit")
        command = _command(line)
        if command:
            return command
        if question.type == "choice":
            return Reply("answer", _choice(line, asked.order))
        return Reply("answer", line)

    async def _fields(self, asked: Asked) -> Reply:
        answers = {}
        for name in asked.question.fields:
            line = await self._line(f"  {name}> ")
            if line is None:
                return Reply("quit")
            command = _command(line)
            if command:
                return command
            answers[name] = line
        return Reply("answer", answers)

    async def _code(self) -> Reply:
        """One attempt: a line, or a block that goes on until a blank line when Python says it is open."""
        lines: list[str] = []
        while True:
            line = await self._line(">>> " if not lines else "... ")
            if line is None:
                return Reply("quit") if not lines else Reply("answer", "\n".join(lines))
            if not lines and _command(line):
                return _command(line)
            lines.append(line)
            source = "\n".join(lines)
            if not line.strip() or not _incomplete(source):
                return Reply("answer", source.strip("\n"))

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


def _command(line: str) -> Reply | None:
    word = line.strip().lower()
    return Reply(word) if word in ("hint", "skip", "quit") else None


def _choice(line: str, order: list[int]) -> int | str:
    """A number as shown (1-based, in the shuffled order) or the option's text."""
    text = line.strip().rstrip(".)")
    if text.isdigit() and 1 <= int(text) <= len(order):
        return order[int(text) - 1]
    return line.strip()


def _incomplete(source: str) -> bool:
    try:
        return codeop.compile_command(source, "<answer>", "exec") is None
    except (SyntaxError, ValueError, OverflowError):
        return False  # a syntax error is the kernel's to explain


class TextView:
    """Player events as plain text on the terminal."""

    def __init__(self, out):
        self.out = out

    def show(self, event: dict) -> None:
        handler = getattr(self, f"_{event['type']}", None)
        if handler:
            handler(event)
            self.out.flush()

    def _print(self, text: str = "") -> None:
        print(text, file=self.out)

    def _lesson(self, event: dict) -> None:
        self._print(f"== {event['title']} ({event['id']}) ==")

    def _prose(self, event: dict) -> None:
        self._print()
        self._print(event["text"])

    def _cell(self, event: dict) -> None:
        self._print()
        self._code(event["source"])
        self._result(event["result"])

    def _question(self, event: dict) -> None:
        self._print()
        self._print(f"? {event['prompt']}")
        if event.get("code"):
            self._code(event["code"])
        for n, option in enumerate(event.get("options", []), 1):
            self._print(f"  {n}. {option['text']}")
        if event.get("tolerance") is not None and event["question_type"] == "numeric":
            self._print(f"  (within ±{event['tolerance']:g})")
        kinds = {"choice": "the option's number", "predict": "a value, None, or 'raises SomeError'",
                 "numeric": "a number", "derive": f"a formula in {event.get('variable', 'x')}",
                 "predict_state": "each field in turn", "task": "code; it runs in the kernel"}
        self._print(f"  (answer with {kinds[event['question_type']]}; {COMMANDS_HELP})")

    def _hint(self, event: dict) -> None:
        self._print(f"  hint {event['n']}: {event['text']}")

    def _notice(self, event: dict) -> None:
        self._print(f"  {event['text']}")

    def _grade(self, event: dict) -> None:
        for step in event.get("steps", []):
            self._result(step)
        mark = "right" if event["correct"] else "try again" if event.get("retry") else "not right"
        self._print(f"  [{mark}] {event['feedback']}")

    def _reveal(self, event: dict) -> None:
        for step in event.get("steps", []):
            if event["skipped"] and step.get("source"):
                self._code(step["source"])
            self._result(step)
        if "\n" in event["expected"].strip():
            self._print("  answer:")
            self._code(event["expected"])
        else:
            self._print(f"  answer: {event['expected']}")

    def _problem(self, event: dict) -> None:
        print(f"lesson problem: {event['message']}", file=sys.stderr)

    def _summary(self, event: dict) -> None:
        self._print()
        state = "finished" if event["finished"] else "stopped"
        self._print(f"{state}: {event['correct']} of {event['questions']} right, {event['skipped']} skipped"
                    + (f", failed: {', '.join(event['failed'])}" if event["failed"] else ""))

    def _code(self, source: str) -> None:
        for n, line in enumerate(source.rstrip("\n").splitlines()):
            self._print(("... " if n and line[:1] in (" ", "\t") else ">>> ") + line)

    def _result(self, step: dict) -> None:
        for text in (step.get("stdout"), step.get("display"), step.get("result")):
            if text:
                self._print(text.rstrip("\n"))
        if step.get("error"):
            error = step["error"]
            self._print(f"{error['type']}: {error['message']}")
            if error.get("explanation"):
                self._print(f"  ({error['explanation']})")
