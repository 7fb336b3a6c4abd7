"""A script read as steps: its top-level statements, for `gradrepl run`, `gradrepl trace` and `%run`."""

from __future__ import annotations

import ast

from gradrepl.errors import UsageError

MAX_SOURCE_BYTES = 16 << 20   # a script, lesson or export bigger than this is refused, never read whole


def read_source(path: str) -> str:
    """A script or lesson file as text; unreadable, oversized or non-UTF-8 files are usage errors."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a folder, not a file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})") from None
    if len(data) > MAX_SOURCE_BYTES:
        raise UsageError(f"{path}: larger than {MAX_SOURCE_BYTES >> 20} MiB, too large to be a script or lesson")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x}); "
                         "save it as UTF-8") from None


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


def read_steps(path: str) -> list[tuple[int, str]]:
    """A script's top-level statements, or a UsageError naming the syntax error (nothing runs then)."""
    source = read_source(path)
    try:
        return split_steps(source, path)
    except SyntaxError as exc:
        raise UsageError(f"{path}:{exc.lineno}:{exc.offset or 0}: syntax error: {exc.msg}; "
                         "nothing was run") from None
