"""A kernel's budgets: the defaults, from this machine's RAM, and sizes as the flags give them. Only
`os` and `re`: the zygote is launched with them before the frontend has imported anything else
(client/launch.py)."""

from __future__ import annotations

import os
import re

GiB = 1 << 30
_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*(?:([kmgt])(?:i?b)?|b)?", re.IGNORECASE)


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


def parse_size(text: str) -> int:
    """A size such as "2G", "512M", "1.5g", "800000" or "64KiB" -> bytes (powers of 1024)."""
    match = _SIZE.fullmatch(text.strip())
    if not match:
        raise ValueError(f"invalid size {text!r}: use a number with an optional unit K, M, G or T, e.g. 2G or 512M")
    value = float(match.group(1)) * _SIZE_UNITS[(match.group(2) or "").lower()]
    if value < 1:
        raise ValueError(f"invalid size {text!r}: must be at least one byte")
    return int(value)


BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")  # powers of 1024, named so: what parse_size reads


def size_text(count: int | None) -> str:
    """1536 -> '1.5 KiB': the one byte notation of the panel, the views and the sandbox's report."""
    size, unit = float(count or 0), 0
    while size >= 1024 and unit < len(BYTE_UNITS) - 1:
        size /= 1024
        unit += 1
    return f"{int(size)} B" if unit == 0 else f"{size:.1f} {BYTE_UNITS[unit]}"
