"""Cold start no slower than importing torch (issue 15, section 2). Each command is a new process.

1. `gradrepl run` of a 10-statement script vs plain `python` running it. Goal: at most 1.15x.
2. `gradrepl check "x**2 + 3*x" --at x=2` vs `python -c "import torch, sympy"`. Goal: at most 1.2x.
3. Answers that need no kernel (`--version`, `lessons`, `check` with a usage error): each under 0.3 s on a quiet
   machine, shown beside `python -c pass` (the interpreter's own start; they never import torch, which
   tests/commands/test_habits.py checks).
(The TUI's first frame and kernel-idle times are in bench_tui.py.)

Run: .venv/bin/python -m benchmarks.bench_startup [--quick]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.timing import pick

GRADREPL = Path(sys.executable).with_name("gradrepl")
SCRIPT = """\
import torch
x = torch.tensor(2.0, requires_grad=True)
w = torch.randn(3, requires_grad=True)
y = x ** 2 + 3 * x
loss = (w * y).sum()
loss.backward()
print(x.grad, w.grad)
with torch.no_grad():
    w -= 0.1 * w.grad
print(w)
"""


QUICK_ANSWERS = (["--version"], ["lessons"], ["check", "x**2", "--at", "x=two"], ["check", "x**2", "--at", "x"])


def wall(command: list[str], status: int = 0) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300)
    elapsed = time.perf_counter() - started
    if done.returncode != status:
        raise RuntimeError(f"{command} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def side_by_side(label: str, ours: list[str], theirs: list[str], goal: float, runs: int) -> None:
    wall(ours), wall(theirs)  # one untimed run each: files in the page cache, as on a machine in use
    times_ours, times_theirs = [], []
    for _ in range(runs):  # interleaved, so a busy moment hits both sides
        times_ours.append(wall(ours))
        times_theirs.append(wall(theirs))
    a, b = statistics.median(times_ours), statistics.median(times_theirs)
    print(f"{label}: {a:.2f} s vs {b:.2f} s (medians of {runs}), ratio {a / b:.2f}x (goal <= {goal:.2f}x)")


def quick_answers(runs: int) -> None:
    """Best of `runs` (interleaved with `python -c pass`): what a quiet machine gives."""
    floor = [sys.executable, "-c", "pass"]
    for argv in QUICK_ANSWERS:
        status = 2 if argv[0] == "check" else 0
        ours, theirs = [], []
        wall([str(GRADREPL), *argv], status)  # untimed: bytecode and page cache
        for _ in range(runs):
            ours.append(wall([str(GRADREPL), *argv], status))
            theirs.append(wall(floor))
        print(f"gradrepl {' '.join(argv)}: best {1000 * min(ours):.0f} ms, median {1000 * statistics.median(ours):.0f} ms "
              f"(goal < 300 ms); python -c pass best {1000 * min(theirs):.0f} ms; ratio {min(ours) / min(theirs):.2f}x")


def main() -> None:
    runs = pick(7, 1)
    with tempfile.NamedTemporaryFile("w", suffix=".py") as script:
        script.write(SCRIPT)
        script.flush()
        side_by_side("gradrepl run of a 10-statement script vs python", [str(GRADREPL), "run", script.name],
                     [sys.executable, script.name], 1.15, runs)
    side_by_side('gradrepl check "x**2 + 3*x" --at x=2 vs python -c "import torch, sympy"',
                 [str(GRADREPL), "check", "x**2 + 3*x", "--at", "x=2"],
                 [sys.executable, "-c", "import torch, sympy"], 1.2, runs)
    quick_answers(pick(9, 1))


if __name__ == "__main__":
    main()
