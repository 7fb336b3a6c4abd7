"""A script read as steps: its top-level statements, for `gradrepl run`, `gradrepl trace` and `%run`."""

from __future__ import annotations

import ast

from gradrepl.errors import UsageError
from gradrepl.source_file import Unreadable, read_text
from gradrepl.views.remarks import file_error_words


def read_source(path: str) -> str:
    """A script or lesson file named on the frontend's own command line, as text; a file that is no
    regular one, unreadable, oversized or not UTF-8 is a usage error."""
    try:
        return read_text(path)
    except Unreadable as exc:
        raise UsageError(file_error_words(exc.code, exc.names)) from None


def split_steps(source: str, path: str) -> list[tuple[int, str]]:
    """The script's top-level statements as (first line, source), one step per line they share
    (`n += 1; print(n)` is one step, run once). Raises SyntaxError."""
    tree = ast.parse(source, path, "exec")
    lines = source.splitlines(True)
    spans: list[list[int]] = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if spans and first <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], node.end_lineno)
        else:
            spans.append([first, node.end_lineno])
    return [(first, "".join(lines[first - 1:last]).rstrip("\n")) for first, last in spans]


def read_steps(path: str, source: str | None = None) -> list[tuple[int, str]]:
    """A script's top-level statements (of `source`, its text when read already), or a UsageError
    naming the syntax error (nothing runs then)."""
    source = read_source(path) if source is None else source
    try:
        return split_steps(source, path)
    except SyntaxError as exc:
        raise UsageError(f"{path}:{exc.lineno}:{exc.offset or 0}: syntax error: {exc.msg}; "
                         "nothing was run") from None
