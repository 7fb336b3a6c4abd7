"""TUI speed: time to first frame, and Enter -> the panel painting the step, with 1 and 1,001 live tensors.

The panel should cost what changed, not what is alive: Enter on `k += 1` until k's
new value is on screen is measured with 1 live tensor and with 1,001, side by side,
in a real terminal (tmux) and in-process (Pilot). The ratio is the figure (goal <= 1.5x,
aim 1.2x); absolute times depend on the machine.

Run: .venv/bin/python benchmarks/bench_tui.py [--quick]  (needs tmux for the terminal figures)
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gradrepl.history import History  # noqa: E402
from gradrepl.tui.app import GradReplApp  # noqa: E402
from gradrepl.tui.console.code_input import CodeInput  # noqa: E402
from gradrepl.tui.messages import PanelUpdated, StepFinished  # noqa: E402
from gradrepl.tui.tensors.tensor_table import TensorTable  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sizes.py beside this file, however it is run
from sizes import pick  # noqa: E402

MANY = "ts = [torch.randn(4, requires_grad=True) for _ in range(1000)]"
RUNS = pick(7, 2)


class Terminal:
    """gradrepl in a detached tmux session on a private server."""

    def __init__(self, width: int = 150, height: int = 45) -> None:
        self.name = f"bench-{uuid.uuid4().hex[:6]}"
        self.tmux = ["tmux", "-L", self.name]
        home = tempfile.mkdtemp()
        subprocess.run([*self.tmux, "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                        f"env GRADREPL_HOME={home} {ROOT / '.venv/bin/gradrepl'}"], check=True)

    def screen(self) -> str:
        return subprocess.run([*self.tmux, "capture-pane", "-p", "-t", self.name],
                              capture_output=True, text=True).stdout

    def wait(self, predicate, timeout: float = 60) -> float:
        """Poll the screen until `predicate(screen)`; the time it took."""
        start = time.perf_counter()
        while not predicate(self.screen()):
            if time.perf_counter() - start > timeout:
                raise TimeoutError(self.screen())
            time.sleep(0.002)
        return time.perf_counter() - start

    def run(self, source: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, "-l", source], check=True)
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, "Enter"], check=True)

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


def first_frame(runs: int = pick(3, 1)) -> None:
    """Spawn `gradrepl` in tmux; poll the screen until the first frame, then until the kernel is idle."""
    frames, readies = [], []
    for _ in range(runs):
        start = time.perf_counter()
        term = Terminal()
        try:
            term.wait(lambda s: "console" in s and "tensors" in s)
            frames.append(time.perf_counter() - start)
            term.wait(lambda s: "● idle" in s)
            readies.append(time.perf_counter() - start)
        finally:
            term.close()
    print(f"first frame (process start -> screen painted): median {1000 * statistics.median(frames):.0f} ms "
          f"(runs: {', '.join(f'{1000 * f:.0f}' for f in frames)})")
    print(f"kernel ready (process start -> '● idle'):       median {1000 * statistics.median(readies):.0f} ms")
    torch_import = statistics.median(_torch_import() for _ in range(runs))
    print(f"  kernel idle - python -c 'import torch' ({1000 * torch_import:.0f} ms): "
          f"{1000 * (statistics.median(readies) - torch_import):+.0f} ms (goal <= +300 ms; first frame goal <= 300 ms)")


def _torch_import() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - started


def k_painted(value: int):
    pattern = re.compile(rf"●\s+k\s.*\s{value}\s")
    return lambda screen: pattern.search(screen) is not None


def enter_to_painted_in_tmux() -> None:
    """Enter on `k += 1` until k's new value is on screen, with 1 and then 1,001 live tensors."""
    term = Terminal()
    try:
        term.wait(lambda s: "● idle" in s)
        term.run("k = torch.tensor(0)")
        term.wait(k_painted(0))
        medians = {}
        value = 0
        for live in (1, 1001):
            if live > 1:
                term.run(MANY)
                term.wait(lambda s: "ts[999]" in s)
            times = []
            for _ in range(RUNS):
                value += 1
                start = time.perf_counter()
                term.run("k += 1")
                term.wait(k_painted(value))
                times.append(time.perf_counter() - start)
                time.sleep(0.05)
            medians[live] = statistics.median(times)
            print(f"tmux: Enter on `k += 1` -> k painted, {live:>5,} live: median {1000 * medians[live]:.0f} ms "
                  f"(runs: {', '.join(f'{1000 * t:.0f}' for t in times)})")
        print(f"tmux: ratio 1,001 / 1 live tensors: {medians[1001] / medians[1]:.2f}x (goal <= 1.5x, aim 1.2x)")
    finally:
        term.close()


async def enter_to_painted_in_process() -> None:
    """The same in Pilot: Enter -> the panel's message -> painted, with 1 and 1,001 live tensors."""
    events: list[tuple[float, object]] = []
    app = GradReplApp(history=History(None))
    async with app.run_test(size=(150, 45), message_hook=lambda m: events.append((time.perf_counter(), m))) as pilot:
        while app.kernel_state != "idle":
            await pilot.pause(0.05)
        medians = {}
        for live, setup in ((1, "k = torch.tensor(0)"), (1001, MANY)):
            await _step(pilot, events, setup)
            totals, panels = [], []
            for _ in range(RUNS):
                total, panel = await _step(pilot, events, "k += 1")
                totals.append(total)
                panels.append(panel)
            medians[live] = statistics.median(totals)
            print(f"pilot: Enter -> painted, {live:>5,} live ({len(app.query_one(TensorTable).names)} rows): "
                  f"median {1000 * medians[live]:.1f} ms [step finished -> painted {1000 * statistics.median(panels):.1f} ms]")
        print(f"pilot: ratio 1,001 / 1 live tensors: {medians[1001] / medians[1]:.2f}x")
        await app.session.close()


async def _step(pilot, events: list, source: str) -> tuple[float, float]:
    """Run one step as typed; (Enter -> painted, step finished -> painted) in seconds."""
    pilot.app.query_one(CodeInput).load_text(source)
    events.clear()
    start = time.perf_counter()
    await pilot.press("enter")
    while not any(isinstance(m, PanelUpdated) for _, m in events):
        await pilot.pause(0.001)
    await pilot.pause()  # let the compositor paint
    painted = time.perf_counter()
    finished_at = next(t for t, m in events if isinstance(m, StepFinished))
    return painted - start, painted - finished_at


if __name__ == "__main__":
    if shutil.which("tmux") is None:
        print("tmux figures: skipped (no tmux)")
    else:
        first_frame()
        enter_to_painted_in_tmux()
    asyncio.run(enter_to_painted_in_process())
