"""Below the breakpoint the panel sits under the console: it takes the rows its table needs (header,
rows, borders), at most 2/5 of the screen, and the console gets the rest; with details, a trace or
the past open, or side by side, app.tcss decides again."""

from __future__ import annotations

from textual.widget import Widget

CHROME = 3        # the panel's two borders and the table's header
FEWEST = 4        # an empty panel still shows its header
SHARE = 2 / 5     # of the screen, at most, for the table alone


def fit_panel(screen_height: int, inspector: Widget, rows: int, under_and_table_only: bool) -> None:
    if under_and_table_only:
        inspector.styles.height = max(FEWEST, min(rows + CHROME, int(screen_height * SHARE)))
    elif inspector.styles.inline.has_rule("height"):  # clearing lays the whole panel out again, even unset
        inspector.styles.height = None  # app.tcss's height for this layout
