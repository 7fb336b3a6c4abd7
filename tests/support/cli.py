"""gradrepl's command line as a learner's shell runs it: in a subprocess, from the checkout, with a timeout
that is a safety net on a loaded machine."""

from __future__ import annotations

import json
import subprocess

from tests.support.paths import GRADREPL, ROOT


def gradrepl(*args: str, timeout: float = 120, **options) -> subprocess.CompletedProcess:
    """`gradrepl ARGS` run to its end, its output as text."""
    return subprocess.run([*GRADREPL, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT, **options)


def lint(*args: str, timeout: float = 110) -> subprocess.CompletedProcess:
    return gradrepl("lint", *args, timeout=timeout)


def run_json(*args, timeout=120):
    proc = subprocess.run([*GRADREPL, "run", "--json", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    return proc, lines


def steps(lines):
    return [line for line in lines if line["type"] == "step"]
