"""Options shared by every command that starts a kernel, and helpers to drive one."""

from __future__ import annotations

import argparse
import asyncio
import sys

from gradrepl.kernel.options import KernelOptions


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
    if step_timeout is not None:
        group.add_argument("--step-timeout", metavar="S", type=float, default=step_timeout,
                           help=f"interrupt a step that runs longer than S seconds (default {step_timeout:g})")


def kernel_options(args: argparse.Namespace, *, one_shot: bool = False) -> KernelOptions:
    """Turn parsed flags into KernelOptions; bad values raise UsageError. A `one_shot` command (one kernel,
    never restarted: run, trace, check, doctor) skips warming the zygote for restarts, which would only
    compete with its work."""
    from gradrepl.errors import UsageError
    from gradrepl.kernel.sandbox import parse_size

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
        import os

        if not os.path.isdir(workspace):
            raise UsageError(f"--workspace: {workspace} is not a folder")
        workspace = os.path.abspath(workspace)
        from gradrepl.kernel.import_path import overlapping

        # Code written there would be imported outside the sandbox (by the zygote, by the next gradrepl).
        if shadowed := overlapping(workspace):
            real = os.path.realpath(workspace)
            relation = "holds" if os.path.commonpath([shadowed[0], real]) == real else "lies in"
            raise UsageError(f"--workspace: {workspace} {relation} {shadowed[0]}, a folder Python imports "
                             "gradrepl or its libraries from, so learner code could plant code there that runs "
                             "outside the sandbox; give a folder of its own")
    return KernelOptions(memory_limit=sizes.get("memory_limit"), disk_limit=sizes.get("disk_limit"),
                         allow_network=getattr(args, "allow_network", False),
                         workspace=workspace, step_timeout=timeout, warm_later=not one_shot)


def emit_json(obj: dict) -> None:
    """One self-contained JSON object per line, flushed so a pipe reader sees it at once; no control
    character in it raw (terminal_text.json_line), since a terminal may be what reads it."""
    from gradrepl.terminal_text import json_line

    emit_line(json_line(obj))


def emit_line(text: str) -> None:
    """One line already encoded as emit_json would have, flushed."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


MAX_SOURCE_BYTES = 16 << 20   # a script, lesson or export bigger than this is refused, never read whole


def read_source(path: str) -> str:
    """A script or lesson file as text; unreadable, oversized or non-UTF-8 files are usage errors."""
    from gradrepl.errors import UsageError

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a folder, not a file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise UsageError(f"{path}: larger than {MAX_SOURCE_BYTES >> 20} MiB, too large to be a script or lesson")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x}); "
                         "save it as UTF-8") from None


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
    return asyncio.run(coro)
