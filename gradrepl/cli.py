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
)
# Commands that start a kernel at once (as the tutor does with no command): their zygote starts first thing.
KERNEL_FIRST = {None, "run", "check", "play", "learn", "doctor"}
VALUE_FLAGS = {"--memory-limit", "--disk-limit", "--workspace"}  # top-level flags followed by a value
HELP_FLAGS = ("-h", "--help", "--version")


def build_parser(only: str | None = None) -> tuple[argparse.ArgumentParser, dict]:
    """The parser, with every command's subparser, or only command `only`'s: a command's module may
    import much (lessons, the store), and a command needs none of the others'."""
    parser = argparse.ArgumentParser(
        prog="gradrepl",
        description="A terminal tutor for PyTorch autograd. With no command, opens the tutor.",
    )
    parser.add_argument("--version", action="version", version=f"gradrepl {__version__}")
    parser.add_argument("--plain", action="store_true", help="use the plain prompt_toolkit REPL instead of the TUI")
    from gradrepl.commands.common import add_kernel_options

    add_kernel_options(parser, top_level=True)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = {}
    for name in [only] if only in COMMANDS else COMMANDS:
        module = importlib.import_module(f"gradrepl.commands.{name}")
        module.register(subparsers)
        modules[name] = module
    return parser, modules


def main(argv: list[str] | None = None) -> int:
    from gradrepl.kernel import launch

    if _starts_a_kernel(sys.argv[1:] if argv is None else argv):
        launch.start_zygote_early()  # torch imports in the zygote while we parse, import and read
    try:
        return _main(argv)
    finally:
        launch.discard_early_zygote()
        if argv is None:  # the process is about to end: its last collections then skip every object (~20 ms)
            gc.freeze()


def _starts_a_kernel(argv: list[str]) -> bool:
    """Whether these arguments run a command in KERNEL_FIRST (read without argparse: it is not built yet)."""
    if any(arg in HELP_FLAGS for arg in argv):
        return False
    return _command_word(argv) in KERNEL_FIRST


def _command_word(argv: list[str]) -> str | None:
    """The first word that is not a top-level flag or its value (None: none, or a help flag comes first)."""
    words = iter(argv)
    for arg in words:
        if arg in HELP_FLAGS:
            return None
        if arg in VALUE_FLAGS:
            next(words, None)
        elif not arg.startswith("-"):
            return arg
    return None


def _main(argv: list[str] | None) -> int:
    parser, modules = build_parser(_command_word(sys.argv[1:] if argv is None else argv))
    args = parser.parse_args(argv)
    try:
        if args.command is None:
            return _interactive(args)
        return modules[args.command].run(args)
    except UsageError as exc:
        print(f"gradrepl: error: {exc}", file=sys.stderr)
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
