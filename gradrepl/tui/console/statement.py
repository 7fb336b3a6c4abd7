"""When does Enter run the input? When it is a complete statement, as Python's own REPL decides."""

from __future__ import annotations

import codeop
import re
import warnings

INDENT = "    "
# After these the next line goes one level out.
_DEDENT_AFTER = re.compile(r"^\s*(return|pass|break|continue|raise)\b")


def is_complete(source: str) -> bool:
    """True when `source` should run now; False when it needs more lines.

    Uses `codeop.compile_command` in "single" mode, like the `python` prompt: an open
    bracket, a trailing backslash or a block without its closing blank line is incomplete.
    Invalid code counts as complete so the kernel can explain the error. A line
    starting with % is a magic and always complete.
    """
    if not source.strip():
        return False
    if source.lstrip().startswith("%"):
        return True
    # The auto-indent left on a blank last line must not keep a finished block open.
    source = source.rstrip(" \t")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return codeop.compile_command(source, "<input>", "single") is not None
    except (SyntaxError, ValueError, OverflowError):
        return True


def next_indent(line: str) -> str:
    """The indent for the line after `line`: the same, one deeper after ':', one shallower after return/pass."""
    indent = line[: len(line) - len(line.lstrip())]
    code = line.split("#", 1)[0].rstrip()
    if code.endswith(":"):
        return indent + INDENT
    if _DEDENT_AFTER.match(line):
        return indent[: max(0, len(indent) - len(INDENT))]
    return indent
