"""Kernel speed, side by side with a Jupyter kernel (issue 2's and issue 15's targets).

1. Replay a 1,000-step session with inspection after every step (`gradrepl run FILE`, the whole
   process) against a Jupyter kernel (ipykernel via jupyter_client: kernel start, the same
   statements cell by cell without inspection, shutdown). Goal: gradrepl <= 0.25x Jupyter's wall time.
2. 10,000 live tensors, one changed per step: median step round trip. Target <= 2 ms.
3. A new kernel after a crash. Target <= 50 ms.

Run: .venv/bin/python -m benchmarks.bench_kernel [--quick]  (needs the `bench` extra: make bench)
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gradrepl.client.options import KernelOptions
from gradrepl.session import Session

from benchmarks.timing import pick

GRADREPL = Path(sys.executable).with_name("gradrepl")


def session_statements(n: int = 1000) -> list[str]:
    """A learner-like session: create, compute, backward, inspect, zero, repeat."""
    cycle = [
        "x = torch.randn(4, requires_grad=True)",
        "w = torch.randn(4, 4, requires_grad=True)",
        "y = (w @ x).tanh()",
        "loss = (y ** 2).sum()",
        "loss.backward()",
        "x.grad",
        "with torch.no_grad():\n    w -= 0.1 * w.grad",
        "w.grad.zero_()",
        "xs = [torch.randn(3) for _ in range(5)]",
        "total = sum(t.sum() for t in xs)",
    ]
    return [cycle[i % len(cycle)] for i in range(n)]


def gradrepl_replay(statements: list[str]) -> float:
    """Wall time of `gradrepl run` on the statements as a script: process start to exit."""
    with tempfile.NamedTemporaryFile("w", suffix=".py") as script:
        script.write("\n".join(statements) + "\n")
        script.flush()
        started = time.perf_counter()
        done = subprocess.run([str(GRADREPL), "run", "--json", script.name], stdout=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"gradrepl run failed ({done.returncode}): {done.stdout[-2000:]}")
    return elapsed


def jupyter_replay(statements: list[str]) -> float:
    """Wall time of a Jupyter kernel doing the same: start, import torch, one cell each, shut down."""
    from jupyter_client.manager import start_new_kernel

    started = time.perf_counter()
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive("import torch", timeout=60)
        for source in statements:
            reply = client.execute_interactive(source, timeout=60, output_hook=lambda msg: None)
            assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return time.perf_counter() - started


def _runs(times: list[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in times)


async def many_live_tensors(n: int = 10_000, steps: int = 200) -> list[float]:
    async with Session(KernelOptions()) as session:
        await session.execute(f"xs = [torch.zeros(3) for _ in range({n})]")
        times = []
        for i in range(steps):
            started = time.perf_counter()
            result = await session.execute(f"xs[{i % n}].add_(1)")
            times.append((time.perf_counter() - started) * 1000)
            assert [row["name"] for row in result.tensors] == [f"xs[{i % n}]"]
        return times


async def crash_recovery(trials: int = 10) -> list[float]:
    async with Session(KernelOptions()) as session:
        times = []
        for _ in range(trials):
            result = await session.execute("import os\nos._exit(1)")
            assert result.kernel_event
            times.append(session.client.kernel.started_ms)
        return times


def main() -> None:
    statements = session_statements(pick(1000, 50))
    runs = pick(3, 1)
    ours = [gradrepl_replay(statements) for _ in range(runs)]
    short = [gradrepl_replay(statements[:10]) for _ in range(runs)]  # the cold start, nearly all of it
    theirs = [jupyter_replay(statements) for _ in range(runs)]
    ours_s, short_s, theirs_s = map(statistics.median, (ours, short, theirs))
    print(f"{len(statements):,}-step replay, whole process (median of {runs}): gradrepl run {ours_s:.2f} s "
          f"({_runs(ours)}), Jupyter {theirs_s:.2f} s ({_runs(theirs)}), ratio {ours_s / theirs_s:.2f}x "
          f"(goal <= 0.25x, moonshot 0.2x)")
    print(f"  gradrepl run of its first 10 steps: {short_s:.2f} s ({_runs(short)}), so about "
          f"{(ours_s - short_s) / (len(statements) - 10) * 1000:.2f} ms per further step")
    for n in pick((100, 1_000, 10_000), (100, 1_000)):
        times = asyncio.run(many_live_tensors(n, pick(100, 10)))
        print(f"{n:>6} live tensors, one changed per step: median {statistics.median(times):.2f} ms, "
              f"p90 {sorted(times)[int(len(times) * 0.9)]:.2f} ms (target <= 2 ms at 10,000)")
    recovery = asyncio.run(crash_recovery(pick(10, 2)))
    print(f"new kernel after a crash: median {statistics.median(recovery):.1f} ms, "
          f"max {max(recovery):.1f} ms (target <= 50 ms)")


if __name__ == "__main__":
    main()
