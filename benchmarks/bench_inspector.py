"""How long Inspector.step() takes as the number of live tensors grows.

Tensors live in one list ``xs``; each step changes one of them in place
(``xs[5].add_(1)``), the case the design budgets at 2 ms for 10,000 tensors.
Also measured: a step that changes nothing, a step that rebinds a top-level
name to a new tensor, one that appends a tensor to ``xs``, tensors that all
require grad, and a write through ``.data`` (found by the class-level hooks of
kernel/inspect/writes.py, not by a version counter). Prints wall-clock median and p90 and the median CPU time of the
calling thread (steadier when other processes share the machine).

    .venv/bin/python -m benchmarks.bench_inspector [--quick]
"""

from __future__ import annotations

import statistics
import time

import torch
from torch import nn

from gradrepl.kernel.inspect import Inspector

from benchmarks.timing import pick

STEPS = pick(300, 5)
COUNTS = pick((100, 1_000, 10_000), (100, 1_000))


def measure(namespace: dict, code: str | None, steps: int = STEPS) -> tuple[float, float, float]:
    """Median and p90 wall time and median CPU time of step() in ms, running ``code`` before each step (untimed).

    CPU time (this thread only) shows the cost without the noise of a busy machine.
    """
    inspector = Inspector()
    inspector.step(namespace)
    compiled = None if code is None else compile(code, "<bench>", "exec")
    times, cpu = [], []
    for _ in range(steps):
        if compiled is not None:
            exec(compiled, namespace)
        start, start_cpu = time.perf_counter(), time.thread_time()
        inspector.step(namespace)
        cpu.append((time.thread_time() - start_cpu) * 1e3)
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)], statistics.median(cpu)


def fresh(count: int, requires_grad: bool = False) -> dict:
    namespace = {"torch": torch, "nn": nn}
    exec(f"xs = [torch.randn(3, requires_grad={requires_grad}) for _ in range({count})]", namespace)
    return namespace


def main() -> None:
    torch.set_num_threads(1)  # measure the inspector, not a thread pool waking up on a busy machine
    print(f"torch {torch.__version__}, {STEPS} steps each; ms per step() as wall median / wall p90 / CPU median")
    print(f"{'live tensors':>12}  {'one add_':>22}  {'no change':>22}  {'new name':>22}  {'append':>22}  "
          f"{'all require grad, one add_':>26}  {'one .data write':>22}")
    for count in COUNTS:
        one = measure(fresh(count), "xs[5].add_(1)")
        none = measure(fresh(count), None)
        new = measure(fresh(count), "y = torch.ones(2)")  # rebinding y: one new tensor per step
        grown = measure(fresh(count), "xs.append(torch.ones(3))")
        grads = measure(fresh(count, requires_grad=True), "with torch.no_grad():\n    xs[5].add_(1)")
        data = measure(fresh(count, requires_grad=True), "xs[5].data.add_(1)")
        cells = [f"{m:6.3f} / {p:6.3f} / {c:6.3f}" for m, p, c in (one, none, new, grown, grads, data)]
        print(f"{count:>12,}  " + "  ".join(f"{c:>22}" for c in cells[:4]) + f"  {cells[4]:>26}  {cells[5]:>22}")


if __name__ == "__main__":
    main()
