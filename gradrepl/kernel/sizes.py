"""Byte counts in words, for the kernel's own texts (%graph) and every frontend."""


def format_bytes(count: int | None) -> str:
    """1536 -> '1.5 KB'; sizes a learner reads at a glance (powers of 1024)."""
    units = ("B", "KB", "MB", "GB", "TB")
    size, unit = float(count or 0), 0
    while size >= 1024 and unit < len(units) - 1:
        size /= 1024
        unit += 1
    return f"{int(size)} B" if unit == 0 else f"{size:.1f} {units[unit]}"
