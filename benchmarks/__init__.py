"""Side-by-side speed measurements; run them as modules: `python -m benchmarks.run_all [--quick]`."""
