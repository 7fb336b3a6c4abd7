"""`gradrepl --plain`: a prompt_toolkit REPL over a Session.

After each step it prints the tensors that changed. The input runs when the
statement is complete (gradrepl.completeness), like the Python prompt, but with
highlighting, auto-indent, persistent history, a completion menu from the
kernel's namespace and a pager for help.
"""

from __future__ import annotations

import asyncio
import pydoc
import re
import shutil
import signal
import sys
import textwrap

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import History as PromptHistory
from prompt_toolkit.lexers import PygmentsLexer
from pygments.lexers.python import PythonLexer

from gradrepl.history import History, default_path
from gradrepl.client.options import KernelOptions
from gradrepl.protocol.messages import StepResult
from gradrepl.plain.key_bindings import HistoryWalk, key_bindings
from gradrepl.plain.terminal import terminal_input
from gradrepl.session import Session, leaving
from gradrepl.session.state import said_once
from gradrepl.terminal_text import visible
from gradrepl.views.steps import display_text, step_text

_COMPLETABLE_BEFORE = re.compile(r"[A-Za-z0-9_.]$")  # what the TUI's input completes after too
BUSY_AFTER = 0.4  # seconds a step runs before the busy line shows (a quick step shows none)
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
# Lines of prose gradrepl adds to a step's text, wrapped at word boundaries (code and output never are).
_PROSE = re.compile(r"^(  why: |  note: |  ! |  removed: )")

BANNER = ("gradrepl — a torch REPL that shows autograd's state after every step.\n"
          "%help lists commands; obj? shows help; Ctrl-C interrupts; Ctrl-D or exit quits.")


class KernelCompleter(Completer):
    """Completion answered by the kernel (jedi over the live namespace), each with its kind or signature."""

    def __init__(self, session: Session):
        self.session = session

    async def get_completions_async(self, document, complete_event):
        if not complete_event.completion_requested and not _COMPLETABLE_BEFORE.search(document.text_before_cursor):
            return  # while typing, a menu only after a name or a dot: never every builtin on a blank indent
        cursor = document.cursor_position
        for found in await self.session.complete(document.text, cursor):
            yield Completion(found.text, start_position=found.start - cursor,
                             display_meta=found.signature or found.kind)

    def get_completions(self, document, complete_event):
        return iter(())  # completion needs the kernel, so only the async path answers


def print_result(result: StepResult, width: int | None = None, before: dict | None = None) -> None:
    """The step's text; a help page goes to the pager (plain printing when there is no terminal).
    `before`: the session's grads_before (a .grad a second backward added to says what it added)."""
    help_page = result.display if isinstance(result.display, dict) else None
    if help_page:
        result.display = None
    text = step_text(result, width, before=before)
    if text:
        print(wrap_prose(text, width), flush=True)
    if help_page:
        pydoc.pager(display_text(help_page))  # kernel text: made visible where the client decoded it


def wrap_prose(text: str, width: int | None) -> str:
    """gradrepl's own sentences (why:, note:, !) wrapped at word boundaries to the terminal's width, their
    continuation under their first word; everything else (code, tracebacks, output, tables) as it is."""
    if not width:
        return text
    lines = []
    for line in text.split("\n"):
        lead = _PROSE.match(line)
        if lead and len(line) > width:
            lines += textwrap.wrap(line, width, subsequent_indent=" " * len(lead.group(1)),
                                   break_on_hyphens=False, break_long_words=False)
        else:
            lines.append(line)
    return "\n".join(lines)


async def busy_line(number: int | None, out=None) -> None:
    """While a step runs (after BUSY_AFTER), one line that says so and how to stop it; erased when the
    step ends (this task is cancelled). Only on a terminal."""
    out = out or sys.stdout
    if not out.isatty():
        return
    await asyncio.sleep(BUSY_AFTER)
    shown = False
    what = f"running In [{number}]" if number is not None else "working"
    try:
        for tick in range(1 << 62):
            out.write(f"\r{SPINNER[tick % len(SPINNER)]} {what}… Ctrl-C interrupts")
            out.flush()
            shown = True
            await asyncio.sleep(0.1)
    finally:
        if shown:
            out.write("\r\x1b[2K")
            out.flush()


def in_prompt(number: int) -> str:
    """IPython's prompt: the number the next step takes (`Cell In[N]`, `%at N`); magics take none."""
    return f"In [{number}]: "


def continuation(width: int, line_number: int, wrap_count: int) -> str:
    """IPython's `   ...: ` under the prompt, as wide as it."""
    return "...: ".rjust(width)


async def repl(session: Session, prompt: PromptSession) -> int:
    loop = asyncio.get_running_loop()
    print(BANNER)
    print("starting the kernel (importing torch)…", end="", flush=True)
    await session.start()
    active = [name for name, layer in session.sandbox.items() if layer.get("active")]
    print(f"\rkernel ready: torch {session.kernel_info['torch']} imported, with nn and F "
          f"(pid {session.kernel_info['pid']}); sandbox: {', '.join(active) or 'none'}")
    warming = asyncio.ensure_future(session.warm_completion())  # the first Tab then finds jedi ready
    try:
        return await _read_and_run(session, prompt, loop)
    finally:
        warming.cancel()  # a quick quit: the warm-up's reply is not waited for


async def _read_and_run(session: Session, prompt: PromptSession, loop) -> int:
    """Prompt, run, print, until the learner leaves."""
    while True:
        try:
            text = await prompt.prompt_async(in_prompt(session.step + 1))
        except KeyboardInterrupt:
            continue  # Ctrl-C at the prompt clears the line
        except EOFError:  # Ctrl-D, or the terminal went away (the question then reads EOF too)
            if await confirmed(prompt, session, leaving.QUIT, eof_means_yes=True):
                return 0
            continue
        if not text.strip():
            continue
        if leaving.is_exit(text):
            return 0
        magic = leaving.loses_namespace(text)
        if magic is not None and not await confirmed(prompt, session, leaving.LOSES[magic]):
            print("Nothing was changed.")
            continue
        session.width = shutil.get_terminal_size().columns
        # While a step runs, Ctrl-C interrupts it instead of killing gradrepl.
        loop.add_signal_handler(signal.SIGINT, lambda: asyncio.ensure_future(session.interrupt()))
        number = session.next_number(text)
        busy = asyncio.ensure_future(busy_line(number))
        try:
            result = await session.execute(text)
        except Exception as exc:  # the session itself failed (a fresh kernel that cannot start): not the learner's
            print(visible(f"The step could not run: {type(exc).__name__}: {exc}\n"
                          "Your input history is kept; the next step tries to start a kernel again "
                          "(`gradrepl doctor` says what is missing)."), flush=True)
            continue
        finally:
            busy.cancel()
            await asyncio.gather(busy, return_exceptions=True)  # the busy line is erased before any output
            loop.remove_signal_handler(signal.SIGINT)
        print_result(said_once(result), session.width, session.grads_before)


async def confirmed(prompt: PromptSession, session: Session, asked: leaving.Asked,
                    eof_means_yes: bool = False) -> bool:
    """Yes at once when the namespace holds nothing of the learner's; else a y/N question naming what
    would be lost. Ctrl-D at a quit question leaves (Ctrl-D twice), Ctrl-C says no."""
    names = await leaving.names_to_lose(session)
    if not leaving.worth_asking(names):
        return True
    width = shutil.get_terminal_size().columns
    question_text = leaving.question(asked, names, list(session.tensors))
    print("\n".join(textwrap.fill(line, width) for line in question_text.splitlines()), flush=True)
    question = PromptSession(input=prompt.input, output=prompt.output)
    try:
        reply = await question.prompt_async(f"{asked.yes}? [y/N] ")
    except EOFError:
        return eof_means_yes
    except KeyboardInterrupt:
        return False
    return reply.strip().lower() in ("y", "yes")


class SharedHistory(PromptHistory):
    """prompt_toolkit's view of the history file the TUI writes too."""

    def __init__(self, history: History):
        super().__init__()
        self.history = history

    def load_history_strings(self):
        return reversed(self.history.entries)  # prompt_toolkit wants the newest first

    def store_string(self, string: str) -> None:
        self.history.add(string)


def build_prompt(session: Session, **io) -> PromptSession:
    """The input: multi-line, highlighted, a completion menu that narrows as you type, shared history."""
    search = HistoryWalk()
    return PromptSession(
        multiline=True, key_bindings=key_bindings(search), lexer=PygmentsLexer(PythonLexer),
        history=SharedHistory(History(default_path())), completer=KernelCompleter(session),
        complete_while_typing=True, enable_history_search=search.enabled, prompt_continuation=continuation, **io)


def run_repl(options: KernelOptions) -> int:
    """Run until Ctrl-D, or until the terminal goes away (EOF/EIO on input, or SIGHUP); then the
    kernel, its zygote and the scratch folder are cleaned up."""
    session = Session(options)
    prompt = build_prompt(session, input=terminal_input())

    async def main() -> int:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGHUP, asyncio.current_task().cancel)
        try:
            return await repl(session, prompt)
        except asyncio.CancelledError:
            return 129  # hung up: 128 + SIGHUP, as a shell reports it
        except OSError:  # writing to a terminal that is gone
            return 1
        finally:
            await session.close()

    return asyncio.run(main())
