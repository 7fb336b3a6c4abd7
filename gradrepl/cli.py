"""The `gradrepl` command line: a thin argparse layer over gradrepl/commands/.

No torch, no sympy here: commands start a kernel process for that.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

from gradrepl import __version__
from gradrepl.errors import UsageError

# Each name is a module in gradrepl/commands/ with register() and run().
COMMANDS = (
    "run",
    "trace",
    "check",
    "lessons",
    "play",
    "lint",
    "learn",
    "quiz",
    "stats",
    "doctor",
    "serve",
)
# Commands that start a kernel at once (as the tutor does with no command): their zygote starts first thing.
# `check` starts its own once its arguments are read: a usage error then never imports torch.
KERNEL_FIRST = {None, "run", "play", "learn", "doctor"}
# Commands that open the tutor's TUI: the collector waits until its first frame is on screen.
TUI_FIRST = {None, "learn"}
VALUE_FLAGS = {"--memory-limit", "--disk-limit", "--workspace"}  # top-level flags followed by a value
HELP_FLAGS = ("-h", "--help", "--version")


def build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, dict]:
    """The parser for `argv`. Only the command being run is imported and registered (a command's module
    may import the course, the quiz, ...); help, or a word that is no command, registers them all."""
    parser = argparse.ArgumentParser(
        prog="gradrepl",
        description="A terminal tutor for PyTorch autograd. With no command, opens the tutor.",
        epilog="Exit status (the tutor, --plain): 0 you left; 1 the terminal could no longer be written; "
               "2 usage errors; 129 the terminal went away (hang-up). Each command's --help gives its own.",
    )
    parser.add_argument("--version", action="version", version=f"gradrepl {__version__}")
    parser.add_argument("--plain", action="store_true", help="use the plain prompt_toolkit REPL instead of the TUI")
    from gradrepl.commands.common import add_kernel_options

    add_kernel_options(parser, top_level=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = {}
    for name in _commands_to_register(argv):
        module = importlib.import_module(f"gradrepl.commands.{name}")
        module.register(subparsers)
        modules[name] = module
    return parser, modules


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if _opens_the_tui(words):
        # Start-up builds modules, classes and widgets that all stay alive: a collection finds nothing
        # to free and costs tens of ms before the first frame. The TUI turns it back on after that frame.
        gc.disable()
    launch = None  # the client's launcher, imported only by a command that starts a kernel (lessons need none)
    if _starts_a_kernel(words):
        from gradrepl.client import launch

        launch.start_zygote_early()  # torch imports in the zygote while we parse, import and read
    try:
        return _main(words)
    finally:
        if launch is not None:
            launch.discard_early_zygote()
        if argv is None:  # the process is about to end: its last collections then skip every object (~20 ms)
            gc.freeze()


def _starts_a_kernel(argv: list[str]) -> bool:
    """Whether these arguments run a command in KERNEL_FIRST (read without argparse: it is not built yet)."""
    if any(arg in HELP_FLAGS for arg in argv):
        return False
    return _command_word(argv) in KERNEL_FIRST


def _opens_the_tui(argv: list[str]) -> bool:
    if any(arg in HELP_FLAGS for arg in argv):
        return False
    word = _command_word(argv)
    return word in TUI_FIRST and not (word is None and "--plain" in argv)


def _command_word(argv: list[str]) -> str | None:
    """The first word that is neither a flag nor a flag's value: the command argparse will find."""
    words = iter(argv)
    for arg in words:
        if arg in VALUE_FLAGS:
            next(words, None)
        elif not arg.startswith("-"):
            return arg
    return None


def _commands_to_register(argv: list[str]) -> tuple[str, ...]:
    word = _command_word(argv)
    before_word = argv[:argv.index(word)] if word is not None else argv
    if any(arg in ("-h", "--help") for arg in before_word):
        return COMMANDS  # the top-level help lists every command
    if word is None:
        return ()
    return (word,) if word in COMMANDS else COMMANDS  # argparse's "invalid choice" names them all


def _main(argv: list[str]) -> int:
    parser, modules = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        if args.command is None:
            return _interactive(args)
        return modules[args.command].run(args)
    except UsageError as exc:
        from gradrepl.terminal_text import visible

        print(f"gradrepl: error: {visible(str(exc))}", file=sys.stderr)  # it may name a file, made by anyone
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `gradrepl lessons | head`: the reader left, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _interactive(args: argparse.Namespace) -> int:
    from gradrepl.commands.common import kernel_options

    options = kernel_options(args)
    if args.plain:
        from gradrepl.plain.repl import run_repl

        return run_repl(options)
    from gradrepl.tui.app import run_app

    return run_app(options)


if __name__ == "__main__":
    sys.exit(main())
