"""Pictures made of text characters: sparklines, a larger column plot, bars and heat strips.

Readable without colour: height, length and shade are the characters themselves
(eighth blocks ▁▂▃▄▅▆▇█ and ▏▎▍▌▋▊▉, shades ' ░▒▓█'), so every face prints them as they are
and a face that colours only adds style. Pure functions of numbers; no torch.
"""

from __future__ import annotations

import math

from gradrepl.views.numbers import number_text

LEVELS = "▁▂▃▄▅▆▇█"          # a sparkline's heights, lowest first
EIGHTHS = " ▁▂▃▄▅▆▇"          # a plot column's top cell, by the eighths it is filled
PARTS = " ▏▎▍▌▋▊▉"            # a bar's last cell, by the eighths it is filled
SHADES = " ░▒▓█"              # a heat strip's cell: blank is 0, █ the largest size
MISSING = "·"                 # a value that is no finite number (nan, inf, None)


def finite(value) -> float | None:
    """A value as a float, or None when it is no finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def flat(values) -> list:
    """Nested lists of numbers (a summary's "values") as one list, row after row."""
    if isinstance(values, list):
        return [item for inner in values for item in flat(inner)]
    return [values]


def buckets(values: list, count: int) -> list[float | None]:
    """`values` squeezed into `count` cells, each the mean of the finite values falling in it."""
    if len(values) <= count:
        return [finite(value) for value in values]
    out = []
    for index in range(count):
        part = [finite(v) for v in values[index * len(values) // count:(index + 1) * len(values) // count]]
        kept = [v for v in part if v is not None]
        out.append(sum(kept) / len(kept) if kept else None)
    return out


def sparkline(values: list, width: int | None = None) -> str:
    """One character per value (squeezed to `width`), its height the value between the smallest and largest."""
    cells = buckets(values, width) if width else [finite(value) for value in values]
    known = [v for v in cells if v is not None]
    if not known:
        return MISSING * len(cells)
    low, high = min(known), max(known)
    top = len(LEVELS) - 1
    return "".join(MISSING if v is None else LEVELS[round((v - low) / (high - low) * top) if high > low else top // 2]
                   for v in cells)


def bar(fraction: float, width: int) -> str:
    """A horizontal bar `width` cells long when full, in eighths of a cell; anything above 0 shows."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    if fraction > 0 and eighths == 0:
        eighths = 1
    full, part = divmod(eighths, 8)
    return ("█" * full + (PARTS[part] if part else "")).ljust(width)


def shade(size: float, largest: float) -> str:
    """A heat cell: ' ' for 0, then ░ ▒ ▓ █ up to the largest size."""
    if largest <= 0 or size <= 0:
        return SHADES[0]
    return SHADES[max(1, math.ceil(size / largest * (len(SHADES) - 1)))]


def heat_strip(values, width: int = 64) -> str:
    """The sizes |v| of a tensor's values as shades, row after row (rows of a 2-D one parted by '┊')."""
    rows = values if isinstance(values, list) and values and all(isinstance(row, list) for row in values) else [values]
    sizes = [[abs(v) if (v := finite(item)) is not None else None for item in flat(row)] for row in rows]
    largest = max((s for row in sizes for s in row if s is not None), default=0.0)
    drawn = ["".join(MISSING if s is None else shade(s, largest) for s in row) for row in sizes]
    strip = "┊".join(drawn)
    return strip if len(strip) <= width else strip[:width - 1] + "…"


def column_plot(values: list, width: int, height: int) -> list[str]:
    """Rows of a column chart, top row first: each column's height is its value, the smallest a sliver."""
    cells = buckets(values, width)
    repeat = max(1, min(4, width // max(1, len(cells))))  # a few points get wider columns
    known = [v for v in cells if v is not None]
    low, high = (min(known), max(known)) if known else (0.0, 0.0)
    total = height * 8
    heights = []
    for v in cells:
        if v is None:
            heights.append(None)
        else:
            heights.append(1 + round((v - low) / (high - low) * (total - 1)) if high > low else total // 2)
    rows = []
    for row in range(height):
        floor = (height - 1 - row) * 8  # eighths below this row
        line = ""
        for filled in heights:
            if filled is None:
                cell = MISSING if row == height - 1 else " "
            else:
                cell = "█" if filled >= floor + 8 else EIGHTHS[max(0, filled - floor)]
            line += cell * repeat
        rows.append(line)
    return rows


def plot(values: list, labels: tuple[str, str], width: int, height: int = 8) -> list[str]:
    """A column chart with its largest and smallest value on the left axis and the first and last
    point's labels (steps, indexes) under it; `width` counts every column of the picture."""
    known = [v for v in map(finite, values) if v is not None]
    top = number_text(max(known)) if known else "?"
    bottom = number_text(min(known)) if known else "?"
    axis = max(len(top), len(bottom))
    columns = column_plot(values, max(4, width - axis - 3), height)
    lines = []
    for index, row in enumerate(columns):
        label = top if index == 0 else bottom if index == height - 1 else ""
        lines.append(f"{label:>{axis}} ┤{row}".rstrip())
    span = len(columns[0]) if columns else 0
    lines.append(" " * axis + " └" + "─" * span)
    first, last = labels
    gap = max(1, span - len(first) - len(last))
    lines.append(" " * (axis + 2) + (first + " " * gap + last if last != first else first))
    return lines
