"""Text made safe to show inside Textual's Markdown widget: code blocks, code spans, escapes."""

from __future__ import annotations


def fenced(code: str, language: str = "python") -> str:
    """Code as a Markdown block, with a fence longer than any backtick run inside it."""
    fence = "```"
    while fence in code:
        fence += "`"
    return f"{fence}{language}\n{code.rstrip()}\n{fence}"


def code_span(text: str) -> str:
    """Text as Markdown inline code, whatever backticks it holds."""
    ticks = "`"
    while ticks in text:
        ticks += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def escape_markdown(text: str) -> str:
    """Text that Markdown shows as written (every ASCII punctuation mark may be escaped)."""
    return "".join("\\" + c if c in "\\`*_[]<>#|!~" else c for c in text)
