"""Python source as highlighted Text, for the console's echo and a traceback's line.

One lexer for the app (each Syntax made with a name looks its lexer up again), and Text for the echo's
table to wrap (a Syntax renders each of its lines through the console first, then the table renders those).
"""

from __future__ import annotations

from functools import cache

from rich.text import Text


@cache
def _lexer():
    from pygments.lexers import PythonLexer  # pygments at the first echo, not before the first frame

    return PythonLexer()


def python_text(source: str, word_wrap: bool = False) -> Text:
    """`source` highlighted as the console shows Python (ANSI colours, the widget's own background)."""
    from rich.syntax import Syntax

    text = Syntax(source, _lexer(), theme="ansi_dark", background_color="default",
                  word_wrap=word_wrap).highlight(source)
    if text.plain.endswith("\n") and not source.endswith("\n"):
        text.right_crop(1)  # the lexer ends every text with a newline
    return text
