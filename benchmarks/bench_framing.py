"""Output framing is linear: cutting 10x more learner output after a lone sentinel prefix costs ~10x, not 100x.

The client's OutputPipe scans each chunk as it arrives; a forged, unterminated sentinel
prefix followed by a flood used to be rescanned on every chunk (quadratic). Side by side:
the same flood at two sizes, and the ratio of their times against the ratio of their sizes.
"""

from __future__ import annotations

import time

from gradrepl.client.pipes import OutputPipe

CHUNK = 1 << 16


def scan_seconds(megabytes: int) -> float:
    pipe = OutputPipe(-1, "0123456789abcdef")
    chunk = b"z" * CHUNK
    started = time.perf_counter()
    pipe.buffer += pipe.prefix
    pipe._scan()
    for _ in range(megabytes * (1 << 20) // CHUNK):
        pipe.buffer += chunk
        pipe._scan()
    pipe.buffer += pipe.prefix + b"1\x1e\n"
    pipe._scan()
    elapsed = time.perf_counter() - started
    assert 1 in pipe.finished
    return elapsed


def main() -> None:
    small, large = 8, 80
    best = {size: min(scan_seconds(size) for _ in range(3)) for size in (small, large)}
    ratio = best[large] / best[small]
    print(f"{'flood after a lone prefix':<32} {'seconds':>9}")
    for size, seconds in best.items():
        print(f"{size:>4} MB{'':<25} {seconds:>9.3f}")
    print(f"time ratio {ratio:.1f} for a size ratio of {large // small} (linear ~{large // small}, quadratic ~"
          f"{(large // small) ** 2})")


if __name__ == "__main__":
    main()
