"""Code inside a step at torch's own pace (issue 15, section 1).

A small-tensor training loop (four scalar parameters, a 200-point input, 1,500
iterations) times itself; the same script runs under plain `python` and under
`gradrepl run` (the loop is one step, with the accumulation watch and the
inspector around it), and as one step typed in a session, as the TUI and the
plain REPL run it (the shadow recorder too: `run` records none, a script has no
%check). A second loop trains an nn.Sequential with SGD (momentum) and
zero_grad(), a third one with Adam and `p.grad = None` by hand, a fourth 64 trivial backward passes beside
20,000 rows with retained grads (the .grad origin watch, per pass). Goal: at most 1.10x plain python for each.

Run: .venv/bin/python -m benchmarks.bench_step [--quick] [--cpu]  (--cpu: benchmarks/timing.py)
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.timing import clock_name, loop_clock, pick

GRADREPL = Path(sys.executable).with_name("gradrepl")
LOOP = """\
import time
import torch

xs = torch.linspace(-1, 1, 200)
ys = 0.5 * xs**3 - xs + 0.2
a, b, c, d = (torch.zeros((), requires_grad=True) for _ in range(4))
started = time.perf_counter()
for _ in range({iterations}):
    pred = a * xs**3 + b * xs**2 + c * xs + d
    loss = ((pred - ys) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= 0.1 * p.grad
            p.grad = None
print(f"loop took {{time.perf_counter() - started:.6f}} s, loss {{loss.item():.6f}}")
"""
# The same with nn.Module forward passes, an optimizer with momentum and zero_grad(): the small
# matmuls and tanh are where MKL's threading showed (a loaded machine ran this 9-28x python's time).
MODULE_LOOP = """\
import time
import torch

torch.manual_seed(0)
xs = torch.randn(64, 4)
ys = xs.sum(1, keepdim=True)
net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
started = time.perf_counter()
for _ in range({iterations}):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(net(xs), ys)
    loss.backward()
    opt.step()
print(f"loop took {{time.perf_counter() - started:.6f}} s, loss {{loss.item():.6f}}")
"""
# Adam's per-parameter state and foreach kernels, with the gradients dropped by hand (`.grad = None`
# for each parameter, the write hook's entry point) rather than by zero_grad().
ADAM_LOOP = """\
import time
import torch

torch.manual_seed(0)
xs = torch.randn(64, 4)
ys = xs.sum(1, keepdim=True)
net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
opt = torch.optim.Adam(net.parameters(), lr=0.01)
started = time.perf_counter()
for _ in range({iterations}):
    loss = torch.nn.functional.mse_loss(net(xs), ys)
    loss.backward()
    opt.step()
    for p in net.parameters():
        p.grad = None
print(f"loop took {{time.perf_counter() - started:.6f}} s, loss {{loss.item():.6f}}")
"""
# Backward passes beside many rows whose .grad a pass could write (20,000 retained non-leaf grads): each
# pass is watched for the .grad it moves (kernel/inspect/grad_origin.py), by what its graph reaches, so
# its cost is the graph's, not the rows' (the 64 passes cost 4.9 s when every row was noted around each).
RETAINED_LOOP = """\
import time
import torch

w = torch.ones(16, requires_grad=True)
hs = [w * 1 for _ in range(20_000)]
for h in hs:
    h.retain_grad()
sum(h.sum() for h in hs).backward()
z = torch.ones(2, requires_grad=True)
if True:
    started = time.perf_counter()
    for _ in range({iterations}):
        loss = z.sum()
        loss.backward()
    print(f"loop took {{time.perf_counter() - started:.6f}} s, loss {{loss.item():.6f}}")
"""
TIMED = re.compile(r"loop took ([0-9.]+) s, loss ([0-9.]+)")


def timed(command: list[str]) -> tuple[float, str]:
    """The loop's own time and final loss, as the script printed them."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    found = TIMED.search(done.stdout)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"{command} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return float(found.group(1)), found.group(2)


def typed(code: str) -> tuple[float, str]:
    """The loop as one step of a session (a kernel of its own), as the TUI runs what a learner types."""
    from gradrepl.session import Session

    async def once() -> str:
        async with Session() as session:
            result = await session.execute(code)
        return result.stdout + (result.error.message if result.error else "")

    out = asyncio.run(once())
    found = TIMED.search(out)
    if found is None:
        raise RuntimeError(f"the typed loop failed:\n{out[-2000:]}")
    return float(found.group(1)), found.group(2)


def side_by_side(code: str, runs: int) -> str:
    """The loop in `code` under python, `gradrepl run` and typed in a session, interleaved `runs` times:
    each side's median and its ratio to python (the losses must agree)."""
    code = loop_clock(code)
    with tempfile.NamedTemporaryFile("w", suffix=".py") as script:
        script.write(code)
        script.flush()
        plain, ours, in_session = [], [], []
        for _ in range(runs):  # interleaved, so a busy moment of the machine hits every side
            seconds, plain_loss = timed([sys.executable, script.name])
            plain.append(seconds)
            seconds, our_loss = timed([str(GRADREPL), "run", script.name])
            ours.append(seconds)
            seconds, typed_loss = typed(code)
            in_session.append(seconds)
    if not plain_loss == our_loss == typed_loss:
        raise RuntimeError(f"the loop ended with loss {our_loss} in gradrepl run, {typed_loss} typed, "
                           f"but {plain_loss} in python")
    base = statistics.median(plain)
    return (f"python {base:.3f} s, gradrepl run {statistics.median(ours):.3f} s "
            f"(ratio {statistics.median(ours) / base:.2f}x), typed in a session {statistics.median(in_session):.3f} s "
            f"(ratio {statistics.median(in_session) / base:.2f}x) (goal <= 1.10x)")


@contextlib.contextmanager
def busy_beside(count: int = 2):
    """`count` CPU-bound processes running beside the block, as on a newcomer's loaded laptop."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def main() -> None:
    iterations, runs = pick(1500, 150), pick(5, 1)
    figures = side_by_side(LOOP.format(iterations=iterations), runs)
    print(f"training loop, {iterations:,} iterations, timed by the script, {clock_name()} (median of {runs}): {figures}")
    figures = side_by_side(MODULE_LOOP.format(iterations=iterations), runs)
    print(f"nn.Module + SGD(momentum) loop, {iterations:,} iterations (median of {runs}): {figures}")
    figures = side_by_side(ADAM_LOOP.format(iterations=iterations), runs)
    print(f"nn.Module + Adam, p.grad = None loop, {iterations:,} iterations (median of {runs}): {figures}")
    figures = side_by_side(RETAINED_LOOP.format(iterations=64), runs)
    print(f"64 backward passes beside 20,000 retained non-leaf grads (median of {runs}): {figures}")
    # Beside two busy processes, as on a newcomer's loaded laptop: OpenMP's idle threads spin against them
    # (python's and the kernel's alike); OMP_WAIT_POLICY=PASSIVE helped here 10-35x but cost a quiet machine
    # 2.4x on the loop above, so the kernel keeps python's default and this line watches the loaded case.
    with busy_beside(2):
        figures = side_by_side(MODULE_LOOP.format(iterations=iterations // 5), runs)
    print(f"nn.Module + SGD(momentum) loop beside two busy processes, {iterations // 5:,} iterations "
          f"(median of {runs}): {figures}")


if __name__ == "__main__":
    main()
