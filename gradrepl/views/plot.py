"""`%plot NAME` and the details' sparkline in words: a number's history across steps, or the numbers a
list or tensor holds, drawn with views/pictures.py's characters."""

from __future__ import annotations

from gradrepl.views.numbers import number_text
from gradrepl.views.pictures import plot, sparkline

PLOT_WIDTH = 64     # columns of a plot when the console's width is not known
PLOT_HEIGHT = 6     # rows of columns: with its words, a plot fits 80x24's console
SPARK_WIDTH = 24    # characters of a sparkline
STEP, INDEX = "  (step)", "  (index)"  # what the labels under a plot count
ONE_STEP = "a loop leaves one point a step: losses.append(loss.item())"


def history_plot_text(name: str, points: list[tuple[int, float]], width: int | None = None) -> str:
    """`%plot loss`: the value after each step that changed it, oldest first."""
    steps = [step for step, _ in points]
    values = [value for _, value in points]
    span = f"step {steps[0]}" if len(steps) == 1 else f"steps {steps[0]} to {steps[-1]}"
    lines = [f"{name} by step ({span}, last {number_text(values[-1])})"]
    lines += plot(values, (str(steps[0]), str(steps[-1])), room(width, STEP), PLOT_HEIGHT)
    lines[-1] += STEP
    lines.append(ONE_STEP)
    return "\n".join(lines)


def room(width: int | None, unit: str) -> int:
    """The plot's columns: the console's width (at most PLOT_WIDTH), leaving room for the unit's words."""
    return min(width or PLOT_WIDTH, PLOT_WIDTH) - len(unit) - 1


def series_plot_text(name: str, series: dict, width: int | None = None) -> str:
    """`%plot losses`: the numbers a list (or a tensor's elements) holds, by index."""
    length, values, every = series.get("length", 0), series.get("values") or [], series.get("every", 1)
    known = [value for value in values if value is not None]
    head = f"{name}: {length} number{'s' * (length != 1)}"
    if every > 1:
        head += f", each column the mean of {every}"
    if known:
        head += f" (first {number_text(known[0])}, last {number_text(known[-1])})"
    lines = [head, *plot(values, ("0", str(length - 1)), room(width, INDEX), PLOT_HEIGHT)]
    lines[-1] += INDEX
    return "\n".join(lines)


def sparkline_words(points: list[tuple[int, float]]) -> str:
    """The details' history line: `▇▅▃▂▁  2.31 → 0.12 over steps 3–12`, or '' for fewer than 2 points."""
    if len(points) < 2:
        return ""
    (first_step, first), (last_step, last) = points[0], points[-1]
    return (f"{sparkline([value for _, value in points], SPARK_WIDTH)}  {number_text(first)} → "
            f"{number_text(last)} over steps {first_step}–{last_step}")
