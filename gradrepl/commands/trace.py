"""`gradrepl trace FILE NAME`: run a script as `run` does, then preview backward from NAME node by node."""

from __future__ import annotations

import argparse
import sys

from gradrepl.commands.common import (add_kernel_options, emit_json, exit_codes, INTERRUPTED_EXIT, kernel_options,
                                     run_async, USAGE_EXIT)
from gradrepl.errors import UsageError
from gradrepl.terminal_text import visible
from gradrepl.views.numbers import shape_text
from gradrepl.views.trace import trace_text


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "trace", help="run a script, then list the backward pass from one tensor node by node",
        description="Run FILE one top-level statement at a time in a sandboxed kernel, then preview backward "
                    "from tensor NAME: every autograd node in the order the engine ran it, with the gradients "
                    "arriving and leaving. No .grad changes and the graph is kept.",
        epilog=exit_codes("0 the backward pass was listed",
                          "1 the script failed before NAME could be traced, or the kernel was lost",
                          USAGE_EXIT + " (no such file, a syntax error, no tensor NAME: the names the script left are listed)",
                          INTERRUPTED_EXIT))
    parser.add_argument("file", metavar="FILE", help="a Python script")
    parser.add_argument("name", metavar="NAME", help="a tensor the script leaves alive, e.g. loss")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per line: trace, one per node, summary")
    add_kernel_options(parser, step_timeout=30.0)


def run(args: argparse.Namespace) -> int:
    from gradrepl.commands.run import read_steps

    return run_async(_trace(args, read_steps(args.file), kernel_options(args, one_shot=True, script=args.file)))


async def _trace(args, steps: list[tuple[int, str]], options) -> int:
    from gradrepl.session import Session

    async with Session(options) as session:
        # The script path, as `run` takes it (no REPL help or magics; lines and __file__ the script's).
        ran = 0
        async for result in session.replay(steps, args.file, stop_on_error=True, shadows=False):
            line = steps[ran][0]
            ran += 1
            if result.error or result.kernel_event:
                _stopped(args.file, line, result)
                return 1
        if words := _untraceable(args, session.tensors):
            raise UsageError(words)
        reply = await session.trace(args.name)
    if reply.lost:
        print(f"gradrepl: {visible(reply.error)}", file=sys.stderr)
        return 1
    if reply.error:
        raise UsageError(visible(reply.error))  # a tensor, but no graph to trace: the kernel's words say why
    trace = reply.data["trace"]
    if not args.json:
        print(trace_text(trace))
        return 0
    emit_json({"type": "trace", "root": args.name})
    for node in trace["nodes"]:
        emit_json({"type": "node", **node})
    summary = {"type": "summary", "nodes": len(trace["nodes"])}
    if trace.get("note"):
        summary["note"] = trace["note"]
    emit_json(summary)
    return 0


def _stopped(path: str, line: int, result) -> None:
    """A step that failed or ran out of time: what and why (the why-line `run` prints), in CLI words."""
    error = result.error
    print(visible(f"gradrepl: {path}:{line}: {error.type}: {error.message}" if error else f"gradrepl: {path}:{line}"),
          file=sys.stderr)
    why = result.kernel_event or (error.explanation if error else None)
    if why:
        print(visible(f"  why: {why}"), file=sys.stderr)
    print("the script stopped there, so there is nothing to trace", file=sys.stderr)


def _untraceable(args, tensors: dict[str, dict]) -> str | None:
    """Why NAME cannot be traced, said for the command line (the kernel's words are the REPL's), or None."""
    row = tensors.get(args.name) or next((row for row in tensors.values() if args.name in row.get("aliases", ())),
                                         None)
    if row is None:
        names = list(tensors)
        if not names:
            return f"{args.file} leaves no live tensors, so there is no {args.name!r} to trace"
        shown = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
        return f"{args.file} leaves no tensor named {args.name!r}; it has: {shown}"
    shape = row.get("shape") or []
    if any(size != 1 for size in shape):
        return (f"{args.name} has shape {shape_text(shape)}, not one number: backward needs a scalar to start from. Trace a "
                f"sum instead: add `s = {args.name}.sum()` to {args.file} and run `gradrepl trace {args.file} s`")
    return None
