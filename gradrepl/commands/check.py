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
    return run_async(_check(args.expr, point, args.json, kernel_options(args)))


async def _check(expr: str, point: dict[str, float], as_json: bool, options) -> int:
    from gradrepl.kernel.client import KernelDied
    from gradrepl.session import Session
    from gradrepl.kernel.symbolic.ops import render_check  # text only: imports neither sympy nor torch

    session = Session(options)
    try:
        await session.start()
        reply = await session.client.request("check_expr", expr=expr, point=point)
        result = reply.get("check") or _failure(reply)
    except KernelDied as died:
        result = {"kernel_error": died.reason}
    finally:
        await session.close()
    if "kernel_error" in result or not isinstance(result.get("error", {}), dict) or not result:
        reason = result.get("kernel_error") or result.get("error") or "the kernel gave no answer"
        print(f"gradrepl check: no kernel could run the check: {reason}", file=sys.stderr)
        return EXIT_NO_KERNEL
    if "error" in result:
        if as_json:
            emit_json(result)
        error = result["error"]
        where = f" at column {error['column']}" if error.get("column") else ""
        print(f"gradrepl check: {error['message']}{where}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if as_json:
        emit_json(result)
    else:
        print(render_check(result))
    if not _any_finite(result):
        print("gradrepl check: no value is finite at this point, so nothing could be compared", file=sys.stderr)
        return EXIT_DISAGREE
    return EXIT_AGREE if result["agree"] else EXIT_DISAGREE


def _failure(reply: dict) -> dict:
    """A kernel that could not answer: running out of memory or time means the input is too large."""
    error = reply.get("error")
    kind = error.get("type") if isinstance(error, dict) else None
    if kind == "MemoryError" or (isinstance(error, str) and "gave up" in error):
        return {"error": {"message": "the expression is too large to evaluate (the kernel ran out of "
                                     f"{'memory' if kind else 'time'}); try a smaller one"}}
    message = error.get("message") if isinstance(error, dict) else error
    return {"kernel_error": message or "the kernel gave no answer"}


def _any_finite(result: dict) -> bool:
    values = [result.get("value")] + [value for grad in result.get("grads", {}).values()
                                      for value in (grad.get("symbolic_value"), grad.get("autograd"),
                                                    grad.get("numeric"))]
    return any(isinstance(value, (int, float)) and math.isfinite(value) for value in values)
