"""When does Enter run the input, and where does a pasted block split? Shared by every frontend.

The rules are the `python` prompt's (codeop in "single" mode): an open bracket, a
trailing backslash or a compound statement without its closing blank line needs
more lines. Invalid code counts as complete so the kernel can explain the error.
"""

from __future__ import annotations

import ast
import codeop
import io
import re
import tokenize
import warnings
from typing import NamedTuple

INDENT = "    "
# After these the next line goes one level out.
_DEDENT_AFTER = re.compile(r"^\s*(return|pass|break|continue|raise)\b")
# Lines that continue the compound statement above them rather than start a new one.
_CONTINUES_BLOCK = ("else", "elif", "except", "finally")
# Tokens that carry no code: a help request may have them around it.
_NO_CODE = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)


class HelpRequest(NamedTuple):
    expr: str      # the expression asked about
    source: bool   # `obj??`: its source too


def help_request(text: str) -> HelpRequest | None:
    """`obj?`, `obj??`, `?obj`, `??obj`: an expression with one or two question marks before or after
    it, on one line, outside any comment or string (`n = 3  # how many?` is code). The one test of
    "is this help" for every frontend (Session.execute) and for is_complete."""
    if "?" not in text:
        return None
    try:
        tokens = [token for token in tokenize.generate_tokens(io.StringIO(text).readline)
                  if token.type not in _NO_CODE]
    except (tokenize.TokenError, SyntaxError):  # an open string or bracket: code for the kernel to judge
        return None
    marks = [index for index, token in enumerate(tokens) if token.string == "?"]  # ERRORTOKEN, or OP (3.12)
    if not marks or len(marks) > 2 or len({token.start[0] for token in tokens}) != 1:
        return None
    if marks == list(range(len(marks))):
        code = tokens[len(marks):]
    elif marks == list(range(len(tokens) - len(marks), len(tokens))):
        code = tokens[:-len(marks)]
    else:
        return None
    if not code or any(token.string == "?" for token in code):
        return None
    expr = code[0].line[code[0].start[1]:code[-1].end[1]]
    try:
        ast.parse(expr, mode="eval")  # parsed, never run: an expression, not `n = 3 ?`
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return HelpRequest(expr, len(marks) == 2)


def is_complete(text: str) -> bool:
    """True when `text` should run now; False when it needs more lines (or is blank)."""
    if not text.strip():
        return False
    first = text.lstrip().split("\n", 1)[0]
    if first.startswith("%") or help_request(text):
        return True
    # The auto-indent left on a blank last line must not keep a finished block open.
    source = text.rstrip(" \t")
    verdict = _single(source)
    if verdict is not None:
        return verdict
    blocks = split_pasted(source)
    if len(blocks) < 2:
        return True
    # Several statements (a paste): wait only while the last one is still open.
    return _single(blocks[-1] + ("\n" if source.endswith("\n") else "")) is not False


def _single(source: str) -> bool | None:
    """codeop's verdict: True complete, False needs more, None a syntax error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return codeop.compile_command(source, "<input>", "single") is not None
    except (SyntaxError, ValueError, OverflowError):
        return None


def next_indent(text: str) -> str:
    """The indent for a new line after `text`'s last line: one deeper after ':', one out after return."""
    line = text.rsplit("\n", 1)[-1]
    indent = line[: len(line) - len(line.lstrip())]
    code = line.split("#", 1)[0].rstrip()
    if code.endswith(":"):
        return indent + INDENT
    if _DEDENT_AFTER.match(line):
        return indent[: max(0, len(indent) - len(INDENT))]
    return indent


def split_pasted(text: str) -> list[str]:
    """Cut a multi-line paste into its top-level blocks, each as the prompt would have taken it.

    Works on unfinished and invalid code too (a paste still arriving, a typo): what
    cannot be tokenized stays with the block before it. Blank lines inside a block
    (between a function's statements) do not cut it.
    """
    lines = text.splitlines()
    starts = [row for row in _top_level_starts(text) if row <= len(lines)]
    if not starts or starts[0] != 1:
        starts.insert(0, 1)
    blocks = []
    for begin, end in zip(starts, starts[1:] + [len(lines) + 1]):
        block = "\n".join(lines[begin - 1:end - 1]).rstrip()
        if block.strip():
            blocks.append(block)
    return blocks


def _top_level_starts(text: str) -> list[int]:
    """Line numbers (1-based) where a new top-level statement begins."""
    starts: list[int] = []
    line_start = True  # the next significant token begins a logical line
    after_decorator = False
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                line_start = True
                continue
            if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                continue
            if line_start:
                line_start = False
                row, column = token.start
                if column == 0 and not after_decorator and token.string not in _CONTINUES_BLOCK:
                    starts.append(row)
                after_decorator = token.string == "@" and column == 0
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # unfinished or invalid: the rest belongs to the last block
    return starts
