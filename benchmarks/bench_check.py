"""How long a symbolic check takes, and what the shadow mode costs every step.

Prints measured figures (milliseconds, medians of repeated runs) for:
  1. expression mode in a warm kernel process: a new expression, and the same one again;
  2. `%check` on the seed example and on a linear-regression loss;
  3. the shadow TorchFunctionMode's overhead on ops it ignores (big tensors, no grad)
     and on ops it traces (small tensors that require grad);
  4. `gradrepl check`'s round trip through a real kernel (Session.check_expr), warm;
  5. `gradrepl check EXPR` from the command line, cold: without --at (the sympy-only kernel, no torch)
     beside `python -c "import sympy"`, `python -c "import torch"` and the full check with --at, as ratios.
Target: a typical warm check well under 50 ms; without --at, close to importing sympy, far from torch.

Run: .venv/bin/python -m benchmarks.bench_check [--quick]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time

import torch

from gradrepl.kernel.symbolic import crosscheck, derivatives, expr
from gradrepl.kernel.symbolic.checks import check_expression, check_tensor, recording

from benchmarks import timing
from benchmarks.timing import pick

TYPICAL = ["x**2 + 3*x", "sin(x)*exp(y)", "sigmoid(w*x + b)", "tanh(x)**2 + log(x)", "x**x"]


def median_ms(work, repeat: int = 20) -> float:
    return timing.median_ms(work, pick(repeat, 2))


def forget_caches() -> None:
    expr._cache.clear()
    derivatives._derivative.cache_clear()
    crosscheck.torch_function.cache_clear()


def point_for(text: str) -> dict[str, float]:
    return {str(v): 0.7 + 0.3 * i for i, v in enumerate(expr.parse(text).variables)}


def expression_mode() -> None:
    print("1. expression mode (kernel side, warm process)")
    check_expression("x**3 + 1", {"x": 1.0})  # first call pays sympy's own warm-up
    for text in TYPICAL:
        point = point_for(text)

        def fresh():
            forget_caches()
            check_expression(text, point)

        new = median_ms(fresh, repeat=10)
        again = median_ms(lambda: check_expression(text, point))
        print(f"   {text:<22} new expression {new:7.2f} ms   same again {again:6.2f} ms")


def live_mode() -> None:
    print("2. %check (kernel side)")
    ns = {"torch": torch}
    with recording():
        exec("x = torch.tensor(2.0, requires_grad=True)\ny = x ** 2 + 3 * x\ny.backward()\n"
             "xs = torch.linspace(0, 1, 8)\ny_true = 3 * xs + 2\n"
             "w = torch.randn(1, requires_grad=True)\nb = torch.zeros(1, requires_grad=True)\n"
             "loss = ((w * xs + b - y_true) ** 2).mean()\nloss.backward()", ns)
    for name in ("y", "loss"):
        check_tensor(ns, name, ns.get)
        print(f"   %check {name:<5} {median_ms(lambda: check_tensor(ns, name, ns.get)):7.2f} ms")


def mode_overhead() -> None:
    print("3. shadow mode overhead per step (100 ops)")
    big = torch.randn(1000, requires_grad=True)
    plain = torch.randn(8)
    small = torch.randn(4, requires_grad=True)

    def ops(t):
        def run():
            y = t
            for _ in range(25):
                y = (y * 1.01 + 0.5).tanh() - 0.1
        return run

    for label, tensor in (("1000 elements, requires grad (ignored)", big),
                          ("8 elements, no grad (ignored)", plain),
                          ("4 elements, requires grad (traced)", small)):
        without = median_ms(ops(tensor))

        def with_mode(run=ops(tensor)):
            with recording():
                run()

        with_it = median_ms(with_mode)
        print(f"   {label:<40} {without:6.2f} ms -> {with_it:6.2f} ms  (x{with_it / without:.1f})")


def training_loop() -> None:
    print("   the seed's linear regression, 8 points, 50 training steps (all traced):")
    source = ("w = torch.randn(1, requires_grad=True)\nb = torch.zeros(1, requires_grad=True)\n"
              "for _ in range(50):\n"
              "    loss = ((w * xs + b - ys) ** 2).mean()\n    loss.backward()\n"
              "    with torch.no_grad():\n        w -= 0.1 * w.grad\n        b -= 0.1 * b.grad\n"
              "    w.grad = None\n    b.grad = None\n")
    ns = {"torch": torch, "xs": torch.linspace(0, 1, 8), "ys": 3 * torch.linspace(0, 1, 8) + 2}
    without = median_ms(lambda: exec(source, ns), repeat=5)

    def with_mode():
        with recording():
            exec(source, ns)

    with_it = median_ms(with_mode, repeat=5)
    print(f"   {'':<40} {without:6.2f} ms -> {with_it:6.2f} ms  (x{with_it / without:.1f})")


async def kernel_round_trip() -> None:
    from gradrepl.session import Session

    print("4. Session.check_expr through a real kernel")
    session = Session()
    start = time.perf_counter()
    await session.start()
    print(f"   kernel start {1000 * (time.perf_counter() - start):.0f} ms")
    try:
        first = time.perf_counter()
        await session.check_expr("x**3 + 1", {"x": 1.0})
        print(f"   first check (cold sympy) {1000 * (time.perf_counter() - first):.1f} ms")
        times = []
        for i in range(pick(20, 3)):
            start = time.perf_counter()
            result = await session.check_expr(f"x**2 + {i + 3}*x", {"x": 2.0})
            times.append((time.perf_counter() - start) * 1000)
            assert result.ok and result.data["agree"], result
        print(f"   warm check of a new expression: median {statistics.median(times):.2f} ms, "
              f"max {max(times):.2f} ms (target < 50 ms)")
    finally:
        await session.close()


def command_line() -> None:
    """Cold processes, each run side by side in turn (a machine's load shifts all of them alike)."""
    print("5. the command, cold (median wall time of whole processes)")
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    sympy_, torch_ = "python -c 'import sympy'", "python -c 'import torch'"
    without, full = "gradrepl check 'x**2 + 3*x'", "gradrepl check 'x**2 + 3*x' --at x=2"
    commands = {
        sympy_: [sys.executable, "-c", "import sympy"],
        torch_: [sys.executable, "-c", "import torch"],
        without: [sys.executable, "-m", "gradrepl", "check", "x**2 + 3*x"],
        full: [sys.executable, "-m", "gradrepl", "check", "x**2 + 3*x", "--at", "x=2"],
    }
    runs: dict[str, list[float]] = {label: [] for label in commands}
    for _ in range(pick(5, 1)):
        for label, argv in commands.items():
            runs[label].extend(timing.times_ms(lambda argv=argv: subprocess.run(argv, env=env, **quiet), 1))
    ms = {label: statistics.median(times) for label, times in runs.items()}
    for label, value in ms.items():
        print(f"   {label:<40} {value:7.0f} ms")
    print(f"   without --at: x{ms[without] / ms[sympy_]:.2f} importing sympy, x{ms[without] / ms[torch_]:.2f} "
          f"importing torch, x{ms[without] / ms[full]:.2f} the full check")


if __name__ == "__main__":
    command_line()
    expression_mode()
    live_mode()
    mode_overhead()
    training_loop()
    asyncio.run(kernel_round_trip())
