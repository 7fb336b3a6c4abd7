"""`gradrepl --plain`: a prompt_toolkit REPL over a Session.

After each step it prints the tensors that changed. The input runs when the
statement is complete (codeop), like the Python prompt, but with highlighting,
auto-indent, persistent history and completion from the kernel's namespace.
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.history import History as PromptHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.lexers import PygmentsLexer
from pygments.lexers.python import PythonLexer

from gradrepl.completeness import is_complete, next_indent
from gradrepl.history import History, default_path
from gradrepl.kernel.protocol import StepResult
from gradrepl.session import Session
from gradrepl.textviews import step_text

BANNER = ("gradrepl — a torch REPL that shows autograd's state after every step.\n"
          "torch, nn and F are imported. %help lists commands; Ctrl-C interrupts; Ctrl-D quits.")


class KernelCompleter(Completer):
    """Tab completion answered by the kernel (jedi over the live namespace)."""

    def __init__(self, session: Session):
        self.session = session

    async def get_completions_async(self, document, complete_event):
        cursor = document.cursor_position
        for found in await self.session.complete(document.text, cursor):
            yield Completion(found.text, start_position=found.start - cursor,
                             display_meta=found.signature or found.kind)

    def get_completions(self, document, complete_event):
        return iter(())  # completion needs the kernel, so only the async path answers


def key_bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("enter")
    def _(event):
        buffer = event.current_buffer
        if is_complete(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n" + next_indent(buffer.document.text_before_cursor))

    return bindings


def print_result(result: StepResult) -> None:
    text = step_text(result)
    if text:
        print(text, flush=True)


async def repl(session: Session, prompt: PromptSession) -> int:
    loop = asyncio.get_running_loop()
    print(BANNER)
    print("starting the kernel (importing torch)…", end="", flush=True)
    await session.start()
    active = [name for name, layer in session.sandbox.items() if layer.get("active")]
    print(f"\rkernel ready (pid {session.kernel_info['pid']}); sandbox: {', '.join(active) or 'none'}")
    while True:
        try:
            text = await prompt.prompt_async(f"[{session.step + 1}]: ")
        except KeyboardInterrupt:
            continue  # Ctrl-C at the prompt clears the line
        except EOFError:
            return 0
        if not text.strip():
            continue
        # While a step runs, Ctrl-C interrupts it instead of killing gradrepl.
        loop.add_signal_handler(signal.SIGINT, lambda: asyncio.ensure_future(session.interrupt()))
        try:
            result = await session.execute(text)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        print_result(result)


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
    """The input line: multi-line, highlighted, with the shared history from the user data dir."""
    return PromptSession(
        multiline=True, key_bindings=key_bindings(), lexer=PygmentsLexer(PythonLexer),
        history=SharedHistory(History(default_path())), completer=KernelCompleter(session),
        complete_while_typing=False, **io)


def run_repl(args: argparse.Namespace) -> int:
    from gradrepl.commands.common import kernel_options

    session = Session(kernel_options(args))
    prompt = build_prompt(session)

    async def main() -> int:
        try:
            return await repl(session, prompt)
        finally:
            await session.close()

    return asyncio.run(main())
