"""Run every benchmark in this folder, one after another, printing their figures.

`--quick` is passed on: small sizes, to check that every benchmark still runs (make bench-quick).
Exits non-zero when any benchmark fails, so a broken benchmark fails `make test`.
Run from the repository's root: `python -m benchmarks.run_all [--quick]`.
"""

import subprocess
import sys
import time
from pathlib import Path

here = Path(__file__).parent
flags = [arg for arg in sys.argv[1:] if arg == "--quick"]
failed = []
for script in sorted(here.glob("bench_*.py")):
    print(f"== {script.name}", flush=True)
    started = time.perf_counter()
    if subprocess.run([sys.executable, "-m", f"benchmarks.{script.stem}", *flags], cwd=here.parent).returncode:
        failed.append(script.name)
    print(f"   ({time.perf_counter() - started:.1f} s)", flush=True)
if failed:
    print(f"benchmarks that failed: {', '.join(failed)}", file=sys.stderr)
sys.exit(1 if failed else 0)
