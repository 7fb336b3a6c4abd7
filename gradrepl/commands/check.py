"""`gradrepl check EXPR --at x=2,y=3 [--json]`: calculus, autograd and a central difference, side by side.

The expression is parsed and differentiated in a kernel (sympy and torch live
there); this module only parses --at, asks the kernel, and prints.

Exit status: 0 every derivative agrees, 1 some disagree or no value is finite
(nothing could be compared), 2 the expression or --at cannot be parsed, is not
allowed, or is too large to evaluate, 3 no kernel could run the check.
"""

from __future__ import annotations

import argparse
import math
import sys

from gradrepl.commands.common import add_kernel_options, emit_json, kernel_options, run_async

EXIT_AGREE, EXIT_DISAGREE, EXIT_BAD_INPUT, EXIT_NO_KERNEL = 0, 1, 2, 3


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "check", help="compare a formula's symbolic derivative with autograd and a central difference",
        description="Differentiate EXPR with sympy, evaluate the derivative at a point, and compare it with "
                    "what autograd computes (float64) and a float64 central difference. EXPR may use numbers, "
                    "variables, + - * / ** (or ^), unary minus, pi, and the functions sin cos tan asin acos atan "
                    "sinh cosh tanh exp log sqrt abs sigmoid relu; a number before a name multiplies (3x). "
                    "Exit status: 0 all agree, 1 some disagree or nothing finite to compare, "
                    "2 bad or too large input, 3 no kernel.")
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
    return run_async(_check(args.expr, point, args.json, options))


async def _check(expr: str, point: dict[str, float], as_json: bool, options) -> int:
    from gradrepl.kernel.client import KernelDied
    from gradrepl.kernel.symbolic.ops import render_check  # text only: imports neither sympy nor torch
    from gradrepl.session import Session

    session = Session(options)
    try:
        await session.start()
        reply = await session.check_expr(expr, point)
    except KernelDied as died:
        return _no_kernel(died.reason)
    finally:
        await session.close()
    if reply.exhausted:
        print(f"gradrepl check: the expression is too large to evaluate (the kernel ran out of {reply.exhausted}); "
              "try a smaller one", file=sys.stderr)
        return EXIT_BAD_INPUT
    if reply.lost or (reply.error and "error" not in reply.data):
        return _no_kernel(reply.error or "the kernel gave no answer")
    if as_json and reply.data:
        emit_json(reply.data)
    if reply.error:  # the kernel read the input and refused it, in words
        where = f" at column {reply.column}" if reply.column else ""
        print(f"gradrepl check: {reply.error}{where}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not reply.data:
        return _no_kernel("the kernel gave no answer")
    if not as_json:
        print(render_check(reply.data))
    if not _any_finite(reply.data):
        print("gradrepl check: no value is finite at this point, so nothing could be compared", file=sys.stderr)
        return EXIT_DISAGREE
    return EXIT_AGREE if reply.data["agree"] else EXIT_DISAGREE


def _no_kernel(reason: str) -> int:
    print(f"gradrepl check: no kernel could run the check: {reason}", file=sys.stderr)
    return EXIT_NO_KERNEL


def _any_finite(result: dict) -> bool:
    values = [result.get("value")] + [value for grad in result.get("grads", {}).values()
                                      for value in (grad.get("symbolic_value"), grad.get("autograd"),
                                                    grad.get("numeric"))]
    return any(isinstance(value, (int, float)) and math.isfinite(value) for value in values)
