"""What a learner types in `gradrepl play`: answers, and code cells of several lines.

An answer to a task is a cell, as at a notebook's prompt: typed or pasted over
several lines and ended by an empty line (or Esc Enter, at once). On a terminal
prompt_toolkit edits it, pre-filled with the exercise's starter code to fix (or the
last attempt, to correct); from a pipe, lines are read up to an empty line or the
end of input. A line starting with `%` is a console command the lesson asks for
(`%graph loss`): it runs in the learner's kernel and the question is asked again; at a task's prompt,
a `%time STMT` line (a magic that runs its statement) is an attempt, judged as that statement.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

from gradrepl.session import magic_names
from gradrepl.tutor.answerers import Response, Turn
from gradrepl.tutor.asking import BLANK_WORDS, Typed, command, field_label, read_fields, read_typed

OFFERED = ("skip", "quit")
CELL_HOW = "type or paste your code over several lines; an empty line (or Esc Enter) submits it"
Console = Callable[[str], Awaitable[None]]


def is_console(line: str) -> bool:
    """A `%magic` line: for the console, never an answer."""
    return line.lstrip().startswith("%")


class TerminalAnswerer:
    """Asks on the terminal (prompt_toolkit) or reads a pipe; EOF means quit."""

    def __init__(self, out, console: Console | None = None, tty: bool | None = None) -> None:
        self.out = out
        self.console = console
        self.tty = sys.stdin.isatty() if tty is None else tty
        self._prompts: dict[bool, object] = {}  # prompt_toolkit sessions (lines, cells), made on first use
        self._last: dict[str, str] = {}  # question uid -> the last attempt, offered again to edit

    async def respond(self, turn: Turn) -> Response:
        question = turn.question
        while True:
            if question.type == "predict_state":
                typed = await self._fields(question)
            elif question.type == "task":
                typed = await self._cell(self._last.get(question.uid, question.starter))
                if typed.kind == "answer":
                    self._last[question.uid] = typed.value
            else:
                line = await self._line("answer> ")
                typed = Typed("quit") if line is None else Typed("console", line.strip()) if is_console(line) \
                    else read_typed(question, line, turn.order, OFFERED)
            if typed.kind == "console":
                await self._run_console(typed.value)
                continue
            if typed.kind != "again":
                return Response(typed.kind, typed.value)
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
            if is_console(line):
                return Typed("console", line.strip())
            values[name] = line
        return read_fields(question, values)

    async def _cell(self, starter: str) -> Typed:
        """One attempt: every line up to an empty one (a command or a %line alone is taken at once)."""
        text = await (self._edit_cell(starter) if self.tty else self._piped_cell())
        if text is None:
            return Typed("quit")
        first = text.strip()
        if "\n" not in first:
            asked = command(first, OFFERED)
            if asked:
                return Typed(asked)
            if is_console(first) and not magic_names.runs_statement(first):  # %time STMT: an attempt
                return Typed("console", first)
        if not first:
            return Typed("again", words=BLANK_WORDS)
        return Typed("answer", text.strip("\n"))

    async def _piped_cell(self) -> str | None:
        lines: list[str] = []
        while True:
            line = await self._line(">>> " if not lines else "... ")
            if line is None:
                return "\n".join(lines) if lines else None
            if not lines and (command(line, OFFERED) or is_console(line)):
                return line
            if not line.strip():
                if lines:
                    return "\n".join(lines)
                return ""
            lines.append(line)

    async def _edit_cell(self, starter: str) -> str | None:
        from prompt_toolkit.key_binding import KeyBindings

        bindings = KeyBindings()

        @bindings.add("enter")
        def _enter(event) -> None:
            buffer = event.current_buffer
            text = buffer.text
            at_end = buffer.cursor_position == len(text)
            line = buffer.document.current_line
            alone = "\n" not in text.strip() and (command(text, OFFERED) or is_console(text))
            if at_end and (alone or (not line.strip() and text.strip())):
                buffer.validate_and_handle()
            else:
                buffer.insert_text("\n")

        @bindings.add("escape", "enter")
        def _submit(event) -> None:
            event.current_buffer.validate_and_handle()

        try:
            return await self._session(cell=True).prompt_async(
                ">>> ", multiline=True, default=starter.rstrip("\n"), key_bindings=bindings,
                prompt_continuation=lambda width, line_number, wrap_count: "... ")
        except EOFError:
            return None
        except KeyboardInterrupt:
            return ""

    async def _line(self, prompt: str) -> str | None:
        if self.tty:
            try:
                return await self._session().prompt_async(prompt)
            except EOFError:
                return None
            except KeyboardInterrupt:
                return ""
        self.out.write(prompt)
        self.out.flush()
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line:
            self.out.write("\n")
            return None
        self.out.write(line)  # echo piped input so a transcript reads like a session
        return line.rstrip("\n")

    def _session(self, cell: bool = False):
        """The prompt_toolkit session for one-line answers, or (``cell``) the one for code cells: two, since
        a session keeps the last prompt's settings as its defaults (a cell's multi-line Enter made the next
        answer need a second Enter)."""
        if cell not in self._prompts:
            from prompt_toolkit import PromptSession

            self._prompts[cell] = PromptSession()
        return self._prompts[cell]

    async def _run_console(self, source: str) -> None:
        if self.console is None:
            self.out.write("  (no console here)\n")
            return
        await self.console(source)
