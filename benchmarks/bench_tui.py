"""TUI speed: time to first frame, and Enter -> panel showing the step with 1,000 live tensors.

Run: .venv/bin/python benchmarks/bench_tui.py [--quick]  (needs tmux for the first-frame figure)
"""

from __future__ import annotations

import asyncio
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

from gradrepl.tui.app import GradReplApp  # noqa: E402
from gradrepl.tui.console.code_input import CodeInput  # noqa: E402
from gradrepl.history import History  # noqa: E402
from gradrepl.tui.messages import PanelUpdated, StepFinished  # noqa: E402
from gradrepl.tui.tensors.tensor_table import TensorTable  # noqa: E402
from sizes import pick  # noqa: E402

MANY = "ts = [torch.randn(4, requires_grad=True) for _ in range(1000)]"
FEW_CHANGE = "(ts[0] * ts[1] + ts[2]).sum().backward()"


def first_frame(runs: int = pick(3, 1)) -> None:
    """Spawn `gradrepl` in tmux; poll the screen until the first frame, then until the kernel is idle."""
    if shutil.which("tmux") is None:
        print("first frame: skipped (no tmux)")
        return
    frames, readies = [], []
    for _ in range(runs):
        name = f"bench-{uuid.uuid4().hex[:6]}"
        home = tempfile.mkdtemp()
        start = time.perf_counter()
        tmux = ["tmux", "-L", name]  # a private server: nobody else's sessions in the way
        subprocess.run([*tmux, "new-session", "-d", "-s", name, "-x", "150", "-y", "45",
                        f"env GRADREPL_HOME={home} {ROOT / '.venv/bin/gradrepl'}"], check=True)
        frame = ready = None
        try:
            while ready is None and time.perf_counter() - start < 60:
                screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", name],
                                        capture_output=True, text=True).stdout
                now = time.perf_counter() - start
                if frame is None and "console" in screen and "tensors" in screen:
                    frame = now
                if "● idle" in screen:
                    ready = now
                time.sleep(0.005)
        finally:
            subprocess.run([*tmux, "kill-server"], capture_output=True)
        frames.append(frame)
        readies.append(ready)
    print(f"first frame (process start -> screen painted): median {1000 * statistics.median(frames):.0f} ms "
          f"(runs: {', '.join(f'{1000 * f:.0f}' for f in frames)})")
    print(f"kernel ready (process start -> '● idle'):       median {1000 * statistics.median(readies):.0f} ms")
    print(f"  so the first frame comes {1000 * (statistics.median(readies) - statistics.median(frames)):.0f} ms "
          "before torch is ready")
    torch_import = statistics.median(_torch_import() for _ in range(runs))
    print(f"  kernel idle - python -c 'import torch' ({1000 * torch_import:.0f} ms): "
          f"{1000 * (statistics.median(readies) - torch_import):+.0f} ms (goal <= +300 ms; first frame goal <= 300 ms)")


def _torch_import() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - started


async def enter_to_panel(runs: int = pick(5, 1)) -> None:
    """With 1,000 live tensors, press Enter on a step that changes a few; time until the panel shows it."""
    events: list[tuple[float, object]] = []
    app = GradReplApp(history=History(None))
    async with app.run_test(size=(150, 45), message_hook=lambda m: events.append((time.perf_counter(), m))) as pilot:
        while app.kernel_state != "idle":
            await pilot.pause(0.05)
        totals, kernels, panels = [], [], []
        for i in range(runs + 1):
            source = MANY if i == 0 else FEW_CHANGE
            app.query_one(CodeInput).load_text(source)
            events.clear()
            start = time.perf_counter()
            await pilot.press("enter")
            while not any(isinstance(m, PanelUpdated) for _, m in events):
                await pilot.pause(0.001)
            await pilot.pause()  # let the compositor paint the patched cells
            painted = time.perf_counter()
            finished_at, finished = next((t, m) for t, m in events if isinstance(m, StepFinished))
            if i == 0:
                print(f"1,000 tensors created: {len(app.query_one(TensorTable).names)} rows, "
                      f"Enter -> panel {1000 * (painted - start):.0f} ms")
                continue
            totals.append(painted - start)
            kernels.append(finished.result.duration_ms / 1000)
            panels.append(painted - finished_at)
        changed = next(m for _, m in events if isinstance(m, PanelUpdated)).changed
        print(f"Enter -> panel shows the step (1,000 live, {len(changed)} changed): "
              f"median {1000 * statistics.median(totals):.1f} ms "
              f"[kernel exec {1000 * statistics.median(kernels):.1f} ms, "
              f"message -> painted {1000 * statistics.median(panels):.1f} ms]")

        table = app.query_one(TensorTable)
        rows = [table.rows_by_name[name] for name in table.names]
        patch_1000 = await _patch_three(pilot, table, rows)
        start = time.perf_counter()
        table.clear()
        table._cells.clear()
        table.rows_by_name.clear()
        table.apply_step(rows, [])
        await pilot.pause()
        rebuild = time.perf_counter() - start
        table.apply_step([], [row["name"] for row in rows[45:]])
        await pilot.pause()
        patch_45 = await _patch_three(pilot, table, rows)
        print(f"panel patch of 3 rows: {1000 * patch_1000:.1f} ms with 1,000 live, {1000 * patch_45:.1f} ms with 45 "
              f"live (a screenful); clear-and-rebuild of 1,000 rows {1000 * rebuild:.1f} ms "
              f"({rebuild / patch_1000:.0f}x the patch)")
        await app.session.close()


async def _patch_three(pilot, table: TensorTable, rows: list[dict], runs: int = pick(5, 1)) -> float:
    """Median time to patch (and paint) three rows whose .grad changed."""
    times = []
    for run in range(runs):
        changed = [dict(row, grad={"shape": [4], "values": [float(run)] * 4}) for row in rows[:3]]
        start = time.perf_counter()
        table.apply_step(changed, [])
        await pilot.pause()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


if __name__ == "__main__":
    first_frame()
    asyncio.run(enter_to_panel())
