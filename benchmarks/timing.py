"""What every benchmark shares: full or --quick sizes, and the median of repeated timings.

Full sizes by default; small ones with --quick, so `make bench-quick` (run by `make test`) shows
every benchmark still runs. The figures are informational either way: nothing here asserts a time.
Benchmarks run as modules from the repository's root (`python -m benchmarks.bench_step`).
"""

import statistics
import sys
import time

QUICK = "--quick" in sys.argv[1:]


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
