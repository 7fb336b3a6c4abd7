"""Cell widths that agree with the terminal for spacing vowel signs (Devanagari and its kin).

rich's width table gives combining marks of Unicode category Mc (spacing marks
such as ि U+093F and ा U+093E) 0 cells; libc's wcwidth, and so tmux and the
terminals, give them 1. Every such sign then pushes a row's right border one
cell out. rich and Textual measure through one shared table (some import the
measuring functions by name, so patching a function would miss them): fixing
the table's entries once, at start-up, fixes every caller.
"""

from __future__ import annotations

import unicodedata

from rich import cells
from rich.segment import Segment


def terminal_width(character: str) -> int:
    """Cells a spacing mark takes in a terminal: 2 if East Asian wide, else 1."""
    return 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1


def _spacing_marks_counted(widths: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The table with every Mc codepoint cut out of its zero-width range and given its own width."""
    fixed: list[tuple[int, int, int]] = []
    for start, end, width in widths:
        if width != 0:
            fixed.append((start, end, width))
            continue
        run_start = start
        for codepoint in range(start, end + 1):
            character = chr(codepoint)
            if unicodedata.category(character) != "Mc":
                continue
            if run_start < codepoint:
                fixed.append((run_start, codepoint - 1, 0))
            fixed.append((codepoint, codepoint, terminal_width(character)))
            run_start = codepoint + 1
        if run_start <= end:
            fixed.append((run_start, end, 0))
    return fixed


def align_with_terminal(unicode_version: str = "auto") -> None:
    """Make rich (and so Textual) count spacing marks as the terminal does; safe to call again."""
    table = cells.load_cell_table(unicode_version)
    table.widths[:] = _spacing_marks_counted(list(table.widths))
    # Widths measured before the fix must not be served from the caches.
    cells.get_character_cell_size.cache_clear()
    cells.cached_cell_len.cache_clear()
    Segment._split_cells.cache_clear()
