"""`gradrepl trace FILE NAME`: run a script as `run` does, then preview backward from NAME node by node."""

from __future__ import annotations

import argparse
import sys

from gradrepl.commands.common import add_kernel_options, emit_json, kernel_options, run_async
from gradrepl.errors import UsageError
from gradrepl.trace_views import trace_text


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "trace", help="run a script, then list the backward pass from one tensor node by node",
        description="Run FILE one top-level statement at a time in a sandboxed kernel, then preview backward "
                    "from tensor NAME: every autograd node in the order the engine ran it, with the gradients "
                    "arriving and leaving. No .grad changes and the graph is kept.")
    parser.add_argument("file", metavar="FILE", help="a Python script")
    parser.add_argument("name", metavar="NAME", help="a tensor the script leaves alive, e.g. loss")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per line: trace, one per node, summary")
    add_kernel_options(parser, step_timeout=30.0)


def run(args: argparse.Namespace) -> int:
    from gradrepl.commands.run import read_steps

    return run_async(_trace(args, read_steps(args.file), kernel_options(args, one_shot=True)))


async def _trace(args, steps: list[tuple[int, str]], options) -> int:
    from gradrepl.session import Session

    async with Session(options) as session:
        for line, text in steps:
            result = await session.execute(text)
            if result.error:
                print(f"gradrepl: {args.file}:{line}: {result.error.type}: {result.error.message}\n"
                      "the script stopped there, so there is nothing to trace", file=sys.stderr)
                return 1
        reply = await session.trace(args.name)
    if reply.lost:
        print(f"gradrepl: {reply.error}", file=sys.stderr)
        return 1
    if reply.error:
        raise UsageError(reply.error)
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
