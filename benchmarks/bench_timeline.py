"""What seeing autograd costs, side by side with not seeing it (issue 16).

1. Timeline memory over a real 1,000-step session (bench_kernel's learner-like
   cycle): the deltas the timeline keeps, against keeping a copy of the whole
   table after every step. Also the timeline's bytes per step, which must not
   grow with the session's length (measured at 250, 500 and 1,000 steps).
2. `%at N` in the middle of that session, against one plain step's round trip.
3. `%trace NAME` (hooks on every node, summaries of every gradient) against
   `torch.autograd.grad` on the same two-layer network, in the kernel process.
4. Inspector.step() while tensors hold graphs (their saved bytes are measured
   again each step, since backward frees them without touching the tensor),
   against the same table with no graph held.

Run: .venv/bin/python -m benchmarks.bench_timeline
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections import deque

from benchmarks.bench_kernel import session_statements
from benchmarks.timing import median_ms

from gradrepl.session import Session


def deep_size(obj, seen: set | None = None) -> int:
    """Bytes of an object and everything it holds (each object counted once)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    if isinstance(obj, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in obj.items())
    elif isinstance(obj, (list, tuple, set, frozenset, deque)):
        size += sum(deep_size(item, seen) for item in obj)
    elif hasattr(obj, "__dict__"):
        size += deep_size(vars(obj), seen)
    elif hasattr(obj, "__slots__"):
        size += sum(deep_size(getattr(obj, s), seen) for s in obj.__slots__ if hasattr(obj, s))
    return size


async def timeline_memory() -> None:
    statements = session_statements(1000)
    full_copies = 0
    marks = {}
    step_ms = []
    async with Session() as session:
        for index, source in enumerate(statements, 1):
            started = time.perf_counter()
            await session.execute(source)
            step_ms.append((time.perf_counter() - started) * 1000)
            full_copies += deep_size(list(session.tensors.values()))
            if index in (250, 500, 1000):
                marks[index] = deep_size(session.timeline)
        middle = session.timeline.steps[len(session.timeline.steps) // 2][0]
        at_ms = []
        for _ in range(20):
            started = time.perf_counter()
            await session.execute(f"%at {middle}")
            at_ms.append((time.perf_counter() - started) * 1000)
    kept = marks[1000]
    print(f"1. timeline after 1,000 steps: {kept / 1024:,.0f} KiB of deltas vs {full_copies / 1024:,.0f} KiB "
          f"for a full table per step  ->  {kept / full_copies:.2f}x")
    print("   bytes per step: " + ", ".join(f"{marks[n] / n:,.0f} at {n}" for n in sorted(marks)))
    step, at = statistics.median(step_ms), statistics.median(at_ms)
    print(f"2. %at {middle}: {at:.2f} ms median vs {step:.2f} ms for a plain step  ->  {at / step:.2f}x")


def trace_cost() -> None:
    import torch
    from torch import nn

    from gradrepl.kernel.inspect.trace import preview

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.Tanh(), nn.Linear(128, 1))
    loss = model(torch.randn(256, 64)).pow(2).mean()
    params = list(model.parameters())
    names = {id(p): f"p{i}" for i, p in enumerate(params)}

    plain = median_ms(lambda: torch.autograd.grad(loss, params, retain_graph=True), 200)
    traced = median_ms(lambda: preview(loss, "loss", names), 200)
    print(f"3. %trace loss (two layers, batch 256): {traced:.3f} ms vs {plain:.3f} ms for autograd.grad  ->  "
          f"{traced / plain:.2f}x")


def saved_recheck_cost() -> None:
    import torch
    from torch import nn

    from gradrepl.kernel.inspect import Inspector

    torch.set_num_threads(1)
    model = nn.Sequential(*[layer for _ in range(8) for layer in (nn.Linear(32, 32), nn.Tanh())])
    batch = torch.randn(16, 32)

    def step_ms(namespace: dict) -> float:
        inspector = Inspector()
        inspector.step(namespace)
        return median_ms(lambda: inspector.step(namespace), 300)

    holding = {"model": model, **{f"out{i}": model(batch).sum() for i in range(5)}}
    with torch.no_grad():
        idle = {"model": model, **{f"out{i}": model(batch).sum() for i in range(5)}}
    held, free = step_ms(holding), step_ms(idle)
    print(f"4. step() with 5 results holding 17-node graphs: {held:.3f} ms vs {free:.3f} ms with none  ->  "
          f"{held / free:.2f}x")


def main() -> None:
    asyncio.run(timeline_memory())
    trace_cost()
    saved_recheck_cost()


if __name__ == "__main__":
    main()
