"""A kernel's default budgets, from this machine's RAM. Only `os`: the zygote is launched with them
before the frontend has imported anything else (launch.py)."""

from __future__ import annotations

import os

GiB = 1 << 30


def _ram() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def default_disk_limit() -> int:
    """min(1 GiB, an eighth of this machine's RAM): scratch is a tmpfs, so it lives in memory."""
    ram = _ram()
    return GiB if ram is None else max(16 << 20, min(GiB, ram // 8))


def default_memory_limit() -> int:
    """min(4 GiB, half of this machine's RAM)."""
    ram = _ram()
    return 4 * GiB if ram is None else min(4 * GiB, ram // 2)
