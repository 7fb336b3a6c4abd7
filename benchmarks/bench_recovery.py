"""Recovery time for each fault the sandbox contains (issue 3's report).

For every fault: the wall time from the moment the fault is set off (the step is
sent, or Ctrl-C / Kill is pressed for a step that is already running) until the
learner's next step (``6 * 7``) has come back with its answer. Also: what
hardening a fresh kernel costs (``sandbox.apply`` in a forked child).

Run: .venv/bin/python -m benchmarks.bench_recovery [--repeat N] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import statistics
import tempfile
import time

from gradrepl.client.options import KernelOptions
from gradrepl.host.budgets import parse_size
from gradrepl.kernel.sandbox import Policy, apply
from gradrepl.session import Session

from benchmarks.timing import QUICK

# name -> (source of the faulting step, what the learner does while it runs: None, "interrupt", "kill", "sigkill")
FAULTS = {
    "runaway Python loop (Ctrl-C)": ("while True:\n    pass", "interrupt"),
    "C call ignoring SIGINT (Ctrl-C ladder)": (
        "import ctypes, signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\n"
        "ctypes.CDLL(None).sleep(600)", "interrupt"),
    "long torch op (Kill)": ("torch.linalg.matrix_power(torch.rand(3000, 3000, dtype=torch.float64), 2**40 - 1)", "kill"),
    "kernel SIGKILLed from outside": ("import time\ntime.sleep(600)", "sigkill"),
    "memory bomb, small allocations (1G)": ("def bomb():\n    hoard = []\n    while True:\n        hoard.append([0] * 1000)\nbomb()", None),
    "memory bomb, tensors (1G)": ("def bomb():\n    hoard = []\n    while True:\n        hoard.append(torch.ones(1 << 20))\nbomb()", None),
    "one huge allocation": ("torch.empty(1 << 42, dtype=torch.uint8)", None),
    "segfault": ("import ctypes\nctypes.string_at(0)", None),
    "os._exit": ("import os\nos._exit(3)", None),
    "sys.exit": ("import sys\nsys.exit(1)", None),
    "100 MB print": ("print('x' * 100_000_000)", None),
    "100 MB on raw fd 1": ("import os\nfor _ in range(100):\n    os.write(1, b'y' * 1_000_000)", None),
    "fork bomb": ("import os\nwhile True:\n    os.fork()", None),
    "connect to a loopback listener": ("import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=10)", None),
    "write outside scratch": ("open('/tmp/gradrepl-bench-escape.txt', 'w').write('x')", None),
}
QUICK_FAULTS = ("runaway Python loop (Ctrl-C)", "segfault", "os._exit", "write outside scratch")


async def recover_once(session: Session, source: str, action: str | None) -> tuple[float, str]:
    """Seconds from setting off the fault to the next step's answer, and how the fault ended."""
    task = asyncio.create_task(session.execute(source))
    if action:
        while session.state != "busy":
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.3)
    started = time.perf_counter()
    if action == "interrupt":
        await session.interrupt()
    elif action == "kill":
        await session.kill()
    elif action == "sigkill":
        os.kill(session.kernel_info["pid"], signal.SIGKILL)
    result = await task
    after = await session.execute("6 * 7")
    elapsed = time.perf_counter() - started
    if after.result != "42":
        raise RuntimeError(f"no recovery after {source!r}: {after}")
    outcome = "kernel replaced" if result.kernel_event else (result.error.type if result.error else "ok")
    return elapsed, outcome


def sandbox_cost(repeat: int) -> list[float]:
    """Milliseconds ``apply`` takes in a freshly forked child."""
    times = []
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(repeat):
            read_fd, write_fd = os.pipe()
            pid = os.fork()
            if pid == 0:
                started = time.perf_counter()
                apply(Policy(parse_size("1G"), False, scratch, None))
                os.write(write_fd, f"{(time.perf_counter() - started) * 1000:.3f}".encode())
                os._exit(0)
            os.close(write_fd)
            times.append(float(os.read(read_fd, 64)))
            os.close(read_fd)
            os.waitpid(pid, 0)
    return times


async def main(repeat: int) -> None:
    cost = sandbox_cost(max(repeat, 5))
    print(f"sandbox.apply in a fresh process: median {statistics.median(cost):.1f} ms over {len(cost)} runs\n")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        async with Session(KernelOptions(memory_limit=parse_size("1G"))) as session:
            active = [name for name, layer in session.sandbox.items() if layer["active"]]
            print(f"layers active: {', '.join(active)}")
            print(f"kernel start: {session.kernel_info['startup_ms']} ms ({session.kernel_info['mode']} mode)\n")
            print(f"{'fault':<42} {'outcome':<18} {'median s':>9} {'max s':>7}")
            for name, (source, action) in FAULTS.items():
                if QUICK and name not in QUICK_FAULTS:
                    continue
                runs = [await recover_once(session, source.replace("{port}", str(port)), action)
                        for _ in range(repeat)]
                seconds = [elapsed for elapsed, _ in runs]
                print(f"{name:<42} {runs[-1][1]:<18} {statistics.median(seconds):>9.3f} {max(seconds):>7.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per fault (default 3)")
    parser.add_argument("--quick", action="store_true", help=f"one run each of {len(QUICK_FAULTS)} faults")
    options = parser.parse_args()
    asyncio.run(main(1 if options.quick else options.repeat))
