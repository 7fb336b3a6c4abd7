"""`gradrepl quiz --plain`: the quiz as prompts in a plain terminal.

Answers are read with prompt_toolkit (a terminal, or `create_pipe_input()` in
tests); when stdin is a pipe, lines are read as they come so a quiz can be
scripted. Output is plain text. Every answer is saved before its result is
printed, so Ctrl-D or Ctrl-C at any prompt loses nothing answered.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Protocol, TextIO

from prompt_toolkit import PromptSession

from gradrepl.tutor.asking import BLANK_WORDS, FIELD_LABELS, command, read_fields, read_typed
from gradrepl.tutor.lesson import Question
from gradrepl.tutor.quiz import QuizResult, QuizRun, QuizSummary, due_in_words


class Reader(Protocol):
    async def read(self, prompt: str) -> str:
        """One line typed by the learner; EOFError (Ctrl-D) or KeyboardInterrupt (Ctrl-C) to stop."""


class PromptReader:
    """Lines from prompt_toolkit: a terminal by default, any input/output for tests."""

    def __init__(self, input=None, output=None):
        self.session: PromptSession = PromptSession(input=input, output=output)

    async def read(self, prompt: str) -> str:
        return await self.session.prompt_async(prompt)


class LineReader:
    """Lines from a pipe, echoed so the transcript reads like a terminal session."""

    def __init__(self, stream: TextIO = sys.stdin, out: TextIO = sys.stdout):
        self.stream = stream
        self.out = out

    async def read(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = await asyncio.get_running_loop().run_in_executor(None, self.stream.readline)
        if not line:
            self.out.write("\n")
            raise EOFError
        self.out.write(line if line.endswith("\n") else line + "\n")
        return line.rstrip("\r\n")


def default_reader() -> Reader:
    """prompt_toolkit on a terminal, plain lines on a pipe."""
    return PromptReader() if sys.stdin.isatty() else LineReader()


async def play_quiz(run: QuizRun, reader: Reader, out: TextIO = sys.stdout) -> QuizSummary:
    """Ask every question of the run, show each result, and end with the summary."""
    say = _printer(out)
    plan = run.plan
    say(f"Quiz: {run.total} question{'s' if run.total != 1 else ''} "
        f"({plan.due} due for review, {plan.new} new). "
        "Type ? for a hint; Ctrl-D stops (answers so far are saved).")
    stopped = False
    while (question := run.next_question()) is not None:
        say("")
        say(f"[{run.position}/{run.total}] {question.uid}")
        say(question_text(question, run.order(question)))
        try:
            result = await _answered(run, question, reader, say)
        except (EOFError, KeyboardInterrupt):
            stopped = True
            break
        say(result_text(result, run.spaced.now()))
    summary = run.summary()
    say("")
    if stopped:
        say(f"Stopped after {summary.asked} of {run.total}; your answers so far are saved.")
    say(summary_text(summary))
    return summary


async def _answered(run: QuizRun, question: Question, reader: Reader, say) -> QuizResult:
    """Read and grade answers until one is in the form asked for (one in another form is not counted)."""
    while True:
        result = await run.answer(await _read_answer(run, question, reader, say))
        if not result.retry:
            return result
        say(result.feedback)


async def _read_answer(run: QuizRun, question: Question, reader: Reader, say):
    """Read one answer in the form grading takes (tutor/asking.py's rules), handling hints on the way."""
    if question.type == "predict_state":
        values = {name: await _read_line(run, reader, say, f"  {FIELD_LABELS[name]}> ") for name in question.fields}
        return read_fields(question, values).value
    prompt = {"choice": "answer (number)> ", "task": "code> "}.get(question.type, "answer> ")
    while True:
        typed = read_typed(question, await _read_line(run, reader, say, prompt), run.order(question))
        if typed.kind == "answer":
            return typed.value
        say(typed.words)


async def _read_line(run: QuizRun, reader: Reader, say, prompt: str) -> str:
    """A non-empty line that is not a hint request."""
    while True:
        typed = await reader.read(prompt)
        if command(typed) == "hint":
            hint = run.hint()
            say(f"Hint: {hint}" if hint else "No more hints for this one.")
        elif typed.strip():
            return typed.strip()
        else:
            say(BLANK_WORDS)


def question_text(question: Question, order: list[int]) -> str:
    """The question as shown: prompt, its code, and the options numbered in the order shown."""
    parts = [question.prompt]
    code = question.quiz_code
    if code:
        parts.append("\n".join("    " + line for line in code.splitlines()))
    if question.type == "choice":
        parts.append("\n".join(f"  {n}) {question.options[i].text}" for n, i in enumerate(order, 1)))
    if question.type == "predict_state":
        parts.append(f"Say each field of {question.ask}:")
    return "\n".join(parts)


def result_text(result: QuizResult, now) -> str:
    """What the learner reads after answering: verdict, feedback, the key, next review."""
    mark = "✓" if result.correct else "✗"
    lines = [f"{mark} {result.word.capitalize()}. {result.feedback}".rstrip()]
    if result.explanation:
        lines.append(f"  From the lesson: {result.explanation}")
    if not result.correct:
        lines.append(f"  The answer: {result.expected}")
    elif result.hinted:
        lines.append("  Right after a hint: it comes back a little sooner.")
    lines.append(f"  Next review {due_in_words(result.due, now)}.")
    return "\n".join(lines)


def summary_text(summary: QuizSummary) -> str:
    """The end of a quiz: score, what to review, when the next reviews are due."""
    hinted = f" ({summary.hinted} after a hint)" if summary.hinted else ""
    lines = [f"Score: {summary.score} right{hinted}."]
    if summary.to_review:
        lines.append("To review:")
        lines.extend(f"  - {r.question.uid}: {r.question.prompt.splitlines()[0]} -> {r.expected}"
                     for r in summary.to_review)
    if summary.next_due is not None:
        lines.append(f"Next review due {due_in_words(summary.next_due, summary.now)}.")
    return "\n".join(lines)


def _printer(out: TextIO):
    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()
    return say
