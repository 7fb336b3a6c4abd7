"""`gradrepl check EXPR --at x=2,y=3 [--json]`: calculus, autograd and a central difference, side by side.

The expression is parsed and differentiated in a kernel (sympy and torch live
there); this module only parses --at, asks the kernel, and prints.

Without --at it prints the symbolic derivatives at once, from a sympy-only kernel
(kernel/symbolic_kernel.py, sandboxed as every kernel: no torch import); on a
terminal it then asks for a point for the numeric check, else it says which --at
to give.

Exit status: 0 every derivative agrees, 1 some disagree or none could be
compared (no finite derivative at the point: 1/x or sqrt(x) at 0), 2 the
expression or --at cannot be parsed, is not allowed, is too large to evaluate,
or no point was given, 3 no kernel could run the check.
"""

from __future__ import annotations

import argparse
import math
import sys

from gradrepl.commands.common import add_kernel_options, emit_json, kernel_options, run_async
from gradrepl.terminal_text import visible

EXIT_AGREE, EXIT_DISAGREE, EXIT_BAD_INPUT, EXIT_NO_KERNEL = 0, 1, 2, 3
# The memory limit under which both kernels check x**2 (sympy, and torch's crosscheck with the full kernel's
# 16 MiB reserve: about 35 and 50 MiB here), rounded up; tests/commands/test_check_without_point.py runs it.
CHECKER_NEEDS_MIB = 64
EXIT_CODES = ("Exit status: 0 every derivative agrees; 1 some disagree, or none could be compared (no finite "
              "derivative at the point, as 1/x or sqrt(x) at x=0); 2 bad, refused or too large input, or no point "
              "given where none can be asked for; 3 no kernel could run the check.")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "check", help="compare a formula's symbolic derivative with autograd and a central difference",
        description="Differentiate EXPR with sympy, evaluate the derivative at a point, and compare it with "
                    "what autograd computes (float64) and a float64 central difference. EXPR may use numbers, "
                    "variables, + - * / ** (or ^), unary minus, pi, and the functions sin cos tan asin acos atan "
                    "sinh cosh tanh exp log sqrt abs sigmoid relu; a number before a name multiplies (3x). "
                    "Without --at, the symbolic derivatives are printed and a point is asked for.",
        epilog=EXIT_CODES)
    parser.add_argument("expr", metavar="EXPR", help='the formula, e.g. "x**2 + 3*x"')
    parser.add_argument("--at", metavar="POINT", default="",
                        help="the point, as name=value pairs separated by commas, e.g. x=2,y=3")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    add_kernel_options(parser)


def parse_point(text: str) -> dict[str, float]:
    """'x=2,y=-0.5' -> {'x': 2.0, 'y': -0.5}; ValueError naming the bad part otherwise."""
    point: dict[str, float] = {}
    if not text.strip():
        return point
    for part in text.split(","):
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise ValueError(f"'{part.strip()}' is not name=value (write --at x=2,y=3)")
        if not name.isidentifier():
            raise ValueError(f"'{name}' is not a variable name")
        if name in point:
            raise ValueError(f"{name} is given twice")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{name}={value}: '{value}' is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"{name}={value}: the value must be a finite number")
        point[name] = number
    return point


def run(args: argparse.Namespace) -> int:
    from gradrepl.errors import UsageError

    try:
        point = parse_point(args.at)
    except ValueError as exc:
        raise UsageError(f"--at: {exc}") from None
    options = kernel_options(args, one_shot=True)
    if point:
        from gradrepl.client import launch

        launch.start_zygote_early()  # the arguments are good: torch imports while asyncio does
    return run_async(_check(args.expr, point, args.json, options))


async def _check(expr: str, point: dict[str, float], as_json: bool, options) -> int:
    """At a point: one full kernel (torch) compares the three derivatives. Without one: a sympy-only kernel,
    sandboxed as the full one is, gives the symbolic derivatives at once (no torch import); a point the
    learner then types (on a terminal) is checked by a full kernel, started as the question is asked."""
    from gradrepl.client.kernel_client import KernelDied

    try:
        if not point:
            reply = await _asked(_symbolic(options), expr, {})
            if reply.data.get("needs_point") == [] and not reply.error:  # a constant: no point, but torch
                return _report(await _asked(options, expr, {}), as_json)
            code = _report(reply, as_json)
            if code is not None:
                return code
            point = await _ask_point(reply.data["needs_point"], as_json)
            if point is None:
                return EXIT_BAD_INPUT
        return _report(await _asked(options, expr, point), as_json)
    except KernelDied as died:
        return _no_kernel(died.reason)


def _symbolic(options):
    """The options for the sympy-only kernel: spawned (no zygote: that imports torch), with the same sandbox."""
    import dataclasses

    from gradrepl.client.options import SYMBOLIC_KERNEL

    return dataclasses.replace(options, spawn=True, kernel_module=SYMBOLIC_KERNEL)


async def _asked(options, expr: str, point: dict[str, float]):
    """The check of `expr` at `point` by a kernel started with `options` for it, closed after."""
    from gradrepl.session import Session

    session = Session(options)
    try:
        await session.start()
        return await session.check_expr(expr, point)
    finally:
        await session.close()


def _report(reply, as_json: bool) -> int | None:
    """Print a check's reply; its exit status, or None when it holds only the derivatives (no point)."""
    from gradrepl.views.check import render_check

    if reply.exhausted == "memory" and reply.code != "expression_memory":  # before it reached the expression
        return _report_checker_memory()
    if reply.exhausted:
        return _report_exhausted(reply.exhausted)
    if reply.lost or (reply.error and "error" not in reply.data):
        return _no_kernel(reply.reason or reply.error or "the kernel gave no answer")  # not the REPL's restart words
    if as_json and reply.data:
        emit_json(reply.data)
    if reply.error:  # the kernel read the input and refused it, in words
        where = f" at column {reply.column}" if reply.column else ""
        print(f"gradrepl check: {visible(reply.error)}{where}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not reply.data:
        return _no_kernel("the kernel gave no answer")
    if "needs_point" in reply.data:
        if not as_json:
            print(derivatives_text(reply.data), flush=True)
        return None
    if not as_json:
        print(render_check(reply.data))
    if not _compared(reply.data):
        print("gradrepl check: no derivative is finite at this point, so nothing could be compared",
              file=sys.stderr)
        return EXIT_DISAGREE
    return EXIT_AGREE if reply.data["agree"] else EXIT_DISAGREE


def derivatives_text(data: dict) -> str:
    """`f = x**2 + 3*x` and `d/dx = 2*x + 3`, one line per variable (kernel text: visible already)."""
    return "\n".join([f"f = {data['formula']}"] + [f"d/d{name} = {text}" for name, text in data["derivatives"].items()])


async def _ask_point(names: list[str], as_json: bool) -> dict[str, float] | None:
    """A point for the numeric check, asked for on a terminal; None (said on stderr) when none came."""
    import asyncio

    example = ",".join(f"{name}=1" for name in names)
    if as_json or not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(f"gradrepl check: for the numeric check give a point, e.g. --at {example}", file=sys.stderr)
        return None
    from gradrepl.client import launch

    launch.start_zygote_early()  # torch imports while the learner types the point
    while True:
        try:
            text = await asyncio.to_thread(input, f"point for the numeric check (e.g. {example}; Enter to stop): ")
        except EOFError:
            text = ""
        if not text.strip():
            return None
        try:
            return parse_point(text)
        except ValueError as exc:
            print(f"  {exc}")


def _report_exhausted(what: str) -> int:
    print(f"gradrepl check: the expression is too large to evaluate (the kernel ran out of {what}); "
          "try a smaller one" + (" or raise --memory-limit" if what == "memory" else ""), file=sys.stderr)
    return EXIT_BAD_INPUT


def _report_checker_memory() -> int:
    print("gradrepl check: the memory limit is too small for the checker (the kernel ran out of memory before "
          f"it could check the expression): it needs roughly {CHECKER_NEEDS_MIB} MiB, e.g. --memory-limit "
          f"{CHECKER_NEEDS_MIB}M", file=sys.stderr)
    return EXIT_BAD_INPUT


def _no_kernel(reason: str) -> int:
    from gradrepl.client.deaths import OUT_OF_MEMORY

    if OUT_OF_MEMORY in reason.lower():  # the sympy-only kernel's exit: out of memory before any reply
        return _report_checker_memory()
    print(f"gradrepl check: no kernel could run the check: {visible(reason)}", file=sys.stderr)
    return EXIT_NO_KERNEL


def _compared(result: dict) -> bool:
    """Whether some derivative could be compared: its symbolic value and autograd's are finite there
    (1/x and sqrt(x) at 0 have none, though f or a difference quotient may be finite)."""
    grads = result.get("grads", {})
    return not grads or any(grad.get("agree") is not None for grad in grads.values())  # a constant: nothing to compare
