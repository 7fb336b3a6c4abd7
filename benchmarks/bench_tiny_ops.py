"""A loop of tiny ops, each line an assignment: what stamping each node with its statement costs (issue 25).

Every assignment and expression statement of a step is followed by a mark of
torch's node counter (kernel/inspect/made_by.py), so this loop is that cost's
worst case: scalar tensors (each op a few microseconds), seven statements an
iteration. It runs
under plain `python`, under `gradrepl run` and typed as one step of a session,
and in this process compiled with and without the marks (the marks' own cost,
apart from the panel's and the watches' around a step). Goal (issue 28): at most
1.10x plain python.

Run: .venv/bin/python -m benchmarks.bench_tiny_ops [--quick] [--cpu]  (--cpu: benchmarks/timing.py)
"""

from __future__ import annotations

import ast
import contextlib
import io

from benchmarks.bench_step import side_by_side
from benchmarks.timing import clock_name, loop_clock, pick

LOOP = """\
import time
import torch

x = torch.tensor(1.5, requires_grad=True)
w = torch.tensor(0.5, requires_grad=True)
started = time.perf_counter()
for _ in range({iterations}):
    a = x * w
    b = a.sin()
    c = b * b + a
    loss = c.exp()
    loss.backward()
    with torch.no_grad():
        w -= 0.001 * w.grad
    w.grad = None
    x.grad = None
print(f"loop took {{time.perf_counter() - started:.6f}} s, loss {{loss.item():.6f}}")
"""


def stamped_alone(code: str, runs: int) -> tuple[float, float]:
    """The loop exec'd here as compiled plainly and as a step is (marks added), alternately: the fastest run
    of each (the machine's other work only ever adds time, so the minimum is each side's own cost)."""
    from gradrepl.kernel.inspect import made_by

    made_by.install()
    code = loop_clock(code)
    plain = compile(code, "<loop>", "exec")
    stamped = compile(made_by.instrument(ast.parse(code), code), "<loop>", "exec")
    times: dict = {plain: [], stamped: []}
    for _ in range(runs):
        for compiled in (plain, stamped):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compiled, {})
            times[compiled].append(float(out.getvalue().split()[2]))
    return min(times[plain]), min(times[stamped])


def main() -> None:
    iterations, runs = pick(3000, 200), pick(5, 1)
    code = LOOP.format(iterations=iterations)
    alone, with_stamps = stamped_alone(code, 3 * runs)
    print(f"in one process, marks alone (fastest of {3 * runs}): {alone:.3f} s plainly compiled, {with_stamps:.3f} s with marks "
          f"(ratio {with_stamps / alone:.2f}x)")
    figures = side_by_side(code, runs)
    print(f"tiny-op loop, {iterations:,} iterations of 7 statements, timed by the script, {clock_name()} (median of {runs}): {figures}")


if __name__ == "__main__":
    main()
