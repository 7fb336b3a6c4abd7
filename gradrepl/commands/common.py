"""Options shared by every command that starts a kernel, and helpers to drive one."""

from __future__ import annotations

import argparse
import os
import sys

from gradrepl.client.options import KernelOptions


USAGE_EXIT = "2 usage errors (bad arguments, a file that cannot be read), said in one line"
INTERRUPTED_EXIT = "130 stopped by Ctrl-C"


def exit_codes(*meanings: str) -> str:
    """The `--help` epilog every command ends with: each exit status it may return, in words."""
    return "Exit status: " + "; ".join(meanings) + "."


def add_kernel_options(parser: argparse.ArgumentParser, step_timeout: float | None = None,
                       top_level: bool = False) -> None:
    """Sandbox flags. A subcommand's copy must not overwrite what was given before the command."""
    default = None if top_level else argparse.SUPPRESS
    group = parser.add_argument_group("sandbox")
    group.add_argument("--memory-limit", metavar="SIZE", default=default,
                       help="memory the kernel may use, e.g. 2G or 512M (default: min(4G, half of RAM))")
    group.add_argument("--disk-limit", metavar="SIZE", default=default,
                       help="total size of the kernel's scratch folder, e.g. 256M (default: min(1G, RAM/8))")
    group.add_argument("--allow-network", action="store_true", default=False if top_level else argparse.SUPPRESS,
                       help="let learner code open network connections")
    group.add_argument("--workspace", metavar="DIR", default=default,
                       help="one more folder learner code may write to")
    group.add_argument("--readable", metavar="DIR", action="append", default=[] if top_level else argparse.SUPPRESS,
                       help="one more folder learner code may read (repeatable); `run` reads the script's own")
    if step_timeout is not None:
        group.add_argument("--step-timeout", metavar="S", type=float, default=step_timeout,
                           help=f"interrupt a step that runs longer than S seconds (default {step_timeout:g})")


def kernel_options(args: argparse.Namespace, *, one_shot: bool = False, script: str | None = None,
                   argv: tuple[str, ...] = ()) -> KernelOptions:
    """Turn parsed flags into KernelOptions; bad values raise UsageError. A `one_shot` command (one kernel,
    never restarted: run, trace, check, doctor) skips warming the zygote for restarts, which would only
    compete with its work. A `script` (run, trace) is run as `python FILE ARGV` would run it: its
    folder is readable (see script_folder), its current folder, and first on its sys.path."""
    from gradrepl.errors import UsageError
    from gradrepl.host.budgets import parse_size

    sizes = {}
    for flag in ("memory_limit", "disk_limit"):
        if getattr(args, flag, None):
            try:
                sizes[flag] = parse_size(getattr(args, flag))
            except ValueError as exc:
                raise UsageError(f"--{flag.replace('_', '-')}: {exc}") from None
    timeout = getattr(args, "step_timeout", None)
    if timeout is not None and timeout <= 0:
        raise UsageError("--step-timeout must be a positive number of seconds")
    workspace = getattr(args, "workspace", None)
    if workspace:
        if not os.path.isdir(workspace):
            raise UsageError(f"--workspace: {workspace} is not a folder")
        workspace = os.path.abspath(workspace)
        from gradrepl.host.import_path import unsafe_to_write

        # Code written there would run outside the sandbox (in the zygote, in the next gradrepl).
        if why := unsafe_to_write(workspace):
            raise UsageError(f"--workspace: {why}")
    readable = [_readable_folder(folder) for folder in getattr(args, "readable", None) or ()]
    if script:
        script = os.path.abspath(script)
        readable += script_folder(script, workspace, readable)
    return KernelOptions(memory_limit=sizes.get("memory_limit"), disk_limit=sizes.get("disk_limit"),
                         allow_network=getattr(args, "allow_network", False), readable=tuple(readable),
                         workspace=workspace, step_timeout=timeout, warm_later=not one_shot,
                         script=script, argv=tuple(argv))


def _readable_folder(folder: str) -> str:
    from gradrepl.errors import UsageError

    if not os.path.isdir(folder):
        raise UsageError(f"--readable: {folder} is not a folder")
    if holds_home(folder):
        raise UsageError(f"--readable: {HOLDS_HOME.format(folder=folder)}; name a folder that holds only "
                         "what the script should read")
    return os.path.abspath(folder)


HOLDS_HOME = "{folder} holds your home folder, so the script cannot read the files in it (they would include every secret there)"


def holds_home(folder: str) -> bool:
    """Whether `folder` is or holds the home folder: $HOME, or the account's own home, which $HOME
    may have been pointed away from (both real paths)."""
    import pwd

    homes = {os.path.expanduser("~")}
    try:
        homes.add(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:  # a uid with no account entry (a container's): $HOME is all there is
        pass
    real = os.path.realpath(folder)
    return any(os.path.commonpath([os.path.realpath(home), real]) == real for home in homes if home)


def script_folder(script: str, workspace: str | None, readable: list[str]) -> list[str]:
    """The script's folder, read as `python FILE` reads it (data files, sibling modules), unless it
    is readable already or holds the home folder (~/.ssh and every other secret there): a script
    there is told how to read its files."""
    folder = os.path.dirname(script)
    real = os.path.realpath(folder)
    if any(os.path.realpath(given) == real for given in [workspace, *readable] if given):
        return []
    if holds_home(folder):
        from gradrepl.terminal_text import visible

        print(visible(f"gradrepl: {HOLDS_HOME.format(folder=folder)}; put the script and its files in a folder "
                      "of their own, or name one with --readable DIR"), file=sys.stderr)
        return []
    return [folder]


def emit_json(obj: dict) -> None:
    """One self-contained JSON object per line, flushed so a pipe reader sees it at once; no control
    character in it raw (terminal_text.json_line), since a terminal may be what reads it."""
    from gradrepl.terminal_text import json_line

    emit_line(json_line(obj))


def emit_line(text: str) -> None:
    """One line already encoded as emit_json would have, flushed."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


from gradrepl.scripts import read_source  # noqa: E402,F401  (lessons, stats read through it)


def open_store():
    """The progress store, its notices said on stderr; a store that cannot be opened is a usage error."""
    from gradrepl.errors import UsageError
    from gradrepl.tutor.progress import ProgressStore, StoreError

    try:
        store = ProgressStore.open()
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"the progress folder {exc.filename or ''} cannot be created ({exc.strerror or exc}); "
                         "set GRADREPL_HOME to a folder you can write") from None
    for notice in store.notices:
        print(f"gradrepl: {notice}", file=sys.stderr)
    return store


def run_async(coro) -> int:
    import asyncio  # here: a command that runs no coroutine (lessons, stats) skips its import

    return asyncio.run(coro)
