"""What every benchmark shares: full or --quick sizes, and the median of repeated timings.

Full sizes by default; small ones with --quick, so `make bench-quick` (run by `make test`) shows
every benchmark still runs. The figures are informational either way: nothing here asserts a time.
Benchmarks run as modules from the repository's root (`python -m benchmarks.bench_step`).
`--cpu` (bench_step, bench_tiny_ops): a loop times itself by its main thread's CPU time instead of the
wall clock. On a machine other work keeps busy, wall figures of one loop varied 3x run to run; CPU time
varied a few percent at load 4-5 (more at load 8: caches and cores are shared too), so a per-call cost of
ours shows. It leaves out torch's worker threads and the
waits for a core, which the wall clock (the default, what a learner sees) keeps.
"""

import statistics
import sys
import time

QUICK = "--quick" in sys.argv[1:]
CPU = "--cpu" in sys.argv[1:]


def pick(full, quick):
    """`full` for a real measurement, `quick` under --quick."""
    return quick if QUICK else full


def times_ms(work, runs: int) -> list[float]:
    """Wall time of each of `runs` calls of `work`, in milliseconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append((time.perf_counter() - started) * 1000)
    return times


def median_ms(work, runs: int) -> float:
    """The median wall time of `runs` calls of `work`, in milliseconds."""
    return statistics.median(times_ms(work, runs))


def loop_clock(code: str) -> str:
    """A self-timing loop's code on the clock asked for: its `time.perf_counter()` calls become
    `time.thread_time()` under --cpu."""
    return code.replace("time.perf_counter()", "time.thread_time()") if CPU else code


def clock_name() -> str:
    return "main-thread CPU time" if CPU else "wall time"
