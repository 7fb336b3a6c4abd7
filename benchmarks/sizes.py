"""Full sizes by default; small ones with --quick, so `make bench-quick` (run by `make test`) shows
every benchmark still runs. The figures are informational either way: nothing here asserts a time."""

import sys

QUICK = "--quick" in sys.argv[1:]


def pick(full, quick):
    """`full` for a real measurement, `quick` under --quick."""
    return quick if QUICK else full
