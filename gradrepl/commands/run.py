"""`gradrepl run FILE`: replay a script step by step in the sandboxed kernel."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import replace

from gradrepl import __version__
from gradrepl.commands.common import add_kernel_options, emit_json, emit_line, kernel_options, run_async
from gradrepl.protocol.messages import PROTOCOL_VERSION, StepResult
from gradrepl.scripts import read_steps, split_steps  # noqa: F401  (split_steps: tests, trace)
from gradrepl.terminal_text import json_line, visible
from gradrepl.views.steps import step_text


# The kernel runs the script: a step can read the steps sent ahead of it from the kernel's input and write
# their replies itself. The sandbox bounds what a script does to the machine, not what it says of itself.
PROMISE = ("Exit status: 0 when no step reported an error, 1 when one did, 2 for usage errors, 130 when Ctrl-C "
           "stopped it (it says at which step), and n when the script calls sys.exit(n) (the steps after it do "
           "not run). The script "
           "reports on itself: its code runs in the kernel, where a step can read the steps sent after it "
           "and answer them in the kernel's name, so the exit status and the output are only as honest as "
           "the script. The sandbox limits what a script can do to this machine, not what it says; the exit "
           "status is not a grade of code you do not trust.")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run", help="replay a script step by step, with the autograd state after each step",
        description="Run FILE one top-level statement at a time in a sandboxed kernel and report, after "
                    "each step, its output, errors (explained) and the tensors that changed.",
        epilog=PROMISE)
    parser.add_argument("file", metavar="FILE", help="a Python script, run as `python FILE ARGS` runs it: its "
                        "folder is its current folder, readable, and first on its import path")
    parser.add_argument("args", metavar="ARGS", nargs="*", help="the script's arguments (sys.argv[1:]), after --")
    parser.add_argument("--json", action="store_true", help="one JSON object per line (session, steps, summary)")
    parser.add_argument("--results", action="store_true",
                        help="also show the value of each step that is an expression, as the REPL does "
                             "(python prints none)")
    parser.add_argument("--stop-on-error", action="store_true", help="stop at the first step that raises")
    add_kernel_options(parser, step_timeout=30.0)


def run(args: argparse.Namespace) -> int:
    steps = read_steps(args.file)
    options = kernel_options(args, one_shot=True, script=args.file, argv=tuple(args.args))
    return run_async(_replay(args, steps, options))


async def _replay(args, steps, options) -> int:
    from gradrepl.session import Session

    started = time.perf_counter()
    errors = 0
    ran = 0
    exited: tuple[int, int] | None = None  # (status, line) of the script's sys.exit()
    async with Session(options) as session:
        header = {"type": "session", "gradrepl": __version__, "protocol": PROTOCOL_VERSION, "file": args.file,
                  "steps": len(steps), "kernel": session.kernel_info, "sandbox": session.sandbox}
        if args.json:
            emit_json(header)
        else:
            _print_header(header)
        lines = StepLines()
        try:
            # No shadow formulas: a script has no %check to use them.
            async for result in session.replay(steps, args.file, args.stop_on_error, shadows=False):
                line = steps[ran][0]
                ran += 1
                if args.json:
                    emit_line(lines.line(result, line, session.tensors))
                else:
                    _print_step(result, line, args.results, session.grads_before)
                if result.error:
                    errors += 1
                if result.exit_status is not None:
                    exited = (result.exit_status, line)
        except (asyncio.CancelledError, KeyboardInterrupt):  # Ctrl-C: asyncio.run cancels us, then exits 130
            print(stopped_words(args.file, steps, ran), file=sys.stderr, flush=True)
            raise
    summary = {"type": "summary", "steps": ran, "errors": errors, "skipped": len(steps) - ran,
               "duration_ms": round((time.perf_counter() - started) * 1000, 1)}
    if exited:
        summary["exit_status"] = exited[0]
    if args.json:
        emit_json(summary)
    else:
        if exited:
            print(f"\nthe script called sys.exit() at line {exited[1]}: exit status {exited[0]}")
        print(f"\n{ran} steps, {errors} with errors" + (f", {summary['skipped']} not run" if summary["skipped"] else "")
              + f" ({summary['duration_ms'] / 1000:.2f} s)")
    if exited:
        return exited[0]
    return 1 if errors else 0


def stopped_words(path: str, steps: list[tuple[int, str]], ran: int) -> str:
    """Where Ctrl-C stopped the script: the step that was running (or about to), and what did not run."""
    if ran >= len(steps):
        return f"gradrepl run: stopped by Ctrl-C after the last step of {visible(path)}"
    line, code = steps[ran]
    first = code.splitlines()[0] if code else ""
    later = len(steps) - ran - 1
    return (f"gradrepl run: stopped by Ctrl-C at step {ran + 1} of {len(steps)} ({visible(path)}, line {line}: "
            f"{visible(first[:60])}); {ran} step{'s' if ran != 1 else ''} had finished"
            + (f", {later} after it did not run" if later else ""))


class StepLines:
    """The `--json` line of each step: every live tensor is in every line, each row with its changed
    flag, yet a row is encoded once. Rows are the session's: a changed tensor gets a new row, and the
    only change made to a row in place is its changed flag going off."""

    def __init__(self) -> None:
        self._encoded: dict[str, tuple[dict, str, str]] = {}  # name -> (row, its JSON around "changed")

    def line(self, result: StepResult, line: int, tensors: dict[str, dict]) -> str:
        data = result.to_json()
        data["line"] = line
        before, after = _around(data, "tensors")
        for name in self._encoded.keys() - tensors.keys():
            del self._encoded[name]
        return before + "[" + ", ".join(map(self._row, tensors.values())) + "]" + after

    def _row(self, row: dict) -> str:
        cached = self._encoded.get(row["name"])
        if cached is None or cached[0] is not row:
            cached = self._encoded[row["name"]] = (row, *_around(row, "changed"))
        return cached[1] + ("true" if row["changed"] else "false") + cached[2]


def _around(data: dict, key: str) -> tuple[str, str]:
    """The JSON of `data` (as emit_json writes it) before and after the value of `key`."""
    keys = list(data)
    at = keys.index(key)
    head = json_line({name: data[name] for name in keys[:at]})[1:-1]
    tail = json_line({name: data[name] for name in keys[at + 1:]})[1:-1]
    return "{" + (head + ", " if head else "") + json.dumps(key) + ": ", (", " + tail if tail else "") + "}"


def _print_header(header: dict) -> None:
    layers = header["sandbox"]
    active = [name for name, layer in layers.items() if layer.get("active")]
    missing = [name for name, layer in layers.items() if not layer.get("active")]
    # The file's name is anyone's (a download's), the layers' names the kernel's: neither reaches the terminal raw.
    print(visible(f"gradrepl {header['gradrepl']} · {header['file']} · {header['steps']} steps · "
                  f"kernel pid {header['kernel']['pid']} ({header['kernel']['mode']})"))
    print(visible(f"sandbox: {', '.join(active) or 'none'} active" + (f"; missing: {', '.join(missing)}" if missing else "")))


def _print_step(result: StepResult, line: int, results: bool, before: dict | None = None) -> None:
    print(f"\n── step {result.step} · line {line} · {result.duration_ms:.1f} ms " + "─" * 20)
    print(visible("\n".join(("... " if index else ">>> ") + source_line
                             for index, source_line in enumerate(result.source.splitlines()))))
    text = step_text(result if results else replace(result, result=None), before=before)  # python echoes no value
    if text:
        print(text)
