"""`gradrepl --plain`: a prompt_toolkit REPL over a Session.

After each step it prints the tensors that changed. The input runs when the
statement is complete (gradrepl.completeness), like the Python prompt, but with
highlighting, auto-indent, persistent history, a completion menu from the
kernel's namespace and a pager for help.
"""

from __future__ import annotations

import asyncio
import pydoc
import shutil
import signal

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import History as PromptHistory
from prompt_toolkit.lexers import PygmentsLexer
from pygments.lexers.python import PythonLexer

from gradrepl.history import History, default_path
from gradrepl.kernel.options import KernelOptions
from gradrepl.kernel.protocol import StepResult
from gradrepl.plain.keys import HistorySearch, key_bindings
from gradrepl.plain.terminal import terminal_input
from gradrepl.session import Session
from gradrepl.textviews import display_text, step_text

BANNER = ("gradrepl — a torch REPL that shows autograd's state after every step.\n"
          "%help lists commands; obj? shows help; Ctrl-C interrupts; Ctrl-D quits.")


class KernelCompleter(Completer):
    """Completion answered by the kernel (jedi over the live namespace), each with its kind or signature."""

    def __init__(self, session: Session):
        self.session = session

    async def get_completions_async(self, document, complete_event):
        cursor = document.cursor_position
        for found in await self.session.complete(document.text, cursor):
            yield Completion(found.text, start_position=found.start - cursor,
                             display_meta=found.signature or found.kind)

    def get_completions(self, document, complete_event):
        return iter(())  # completion needs the kernel, so only the async path answers


def print_result(result: StepResult, width: int | None = None) -> None:
    """The step's text; a help page goes to the pager (plain printing when there is no terminal)."""
    help_page = result.display if isinstance(result.display, dict) else None
    if help_page:
        result.display = None
    text = step_text(result, width)
    if text:
        print(text, flush=True)
    if help_page:
        pydoc.pager(display_text(help_page))  # kernel text: made visible where the client decoded it


async def repl(session: Session, prompt: PromptSession) -> int:
    loop = asyncio.get_running_loop()
    print(BANNER)
    print("starting the kernel (importing torch)…", end="", flush=True)
    await session.start()
    active = [name for name, layer in session.sandbox.items() if layer.get("active")]
    print(f"\rkernel ready: torch {session.kernel_info['torch']} imported, with nn and F "
          f"(pid {session.kernel_info['pid']}); sandbox: {', '.join(active) or 'none'}")
    while True:
        try:
            text = await prompt.prompt_async(f"[{session.step + 1}]: ")
        except KeyboardInterrupt:
            continue  # Ctrl-C at the prompt clears the line
        except EOFError:
            return 0  # Ctrl-D, or the terminal went away
        if not text.strip():
            continue
        session.width = shutil.get_terminal_size().columns
        # While a step runs, Ctrl-C interrupts it instead of killing gradrepl.
        loop.add_signal_handler(signal.SIGINT, lambda: asyncio.ensure_future(session.interrupt()))
        try:
            result = await session.execute(text)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        print_result(result, session.width)


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
    search = HistorySearch()
    return PromptSession(
        multiline=True, key_bindings=key_bindings(search), lexer=PygmentsLexer(PythonLexer),
        history=SharedHistory(History(default_path())), completer=KernelCompleter(session),
        complete_while_typing=True, enable_history_search=search.enabled, **io)


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
