"""Plain-text views of kernel data, shared by the plain REPL, `run` and %magics."""

from __future__ import annotations

import textwrap

from gradrepl.kernel.sizes import format_bytes

# Column key -> header, in the order every frontend shows a tensor row: the four autograd facts first
# (req = requires_grad, leaf = is_leaf).
COLUMNS: dict[str, str] = {
    "name": "name",
    "requires_grad": "req",
    "is_leaf": "leaf",
    "grad_fn": "grad_fn",
    "grad": ".grad",
    "value": "value",
    "shape": "shape",
    "dtype": "dtype",
}
# A past step's table adds what each row's graph held, beside grad_fn where the eye already is.
_BEFORE_GRAD = list(COLUMNS).index("grad")
PAST_COLUMNS = dict([*list(COLUMNS.items())[:_BEFORE_GRAD], ("saved_bytes", "graph holds"),
                     *list(COLUMNS.items())[_BEFORE_GRAD:]])
WIDE_HEADERS = {"requires_grad": "requires_grad", "is_leaf": "is_leaf"}  # a plain table with room spells them out
MIN_COLUMN = 4  # a narrow console wraps cells down to this many columns, never further
GAP = "  "
FLEXIBLE = ("name", "grad_fn", "grad", "value")  # these narrow first, the short ones last
_TREE_LEAD = " │├└─"


def format_summary(summary: dict | None, width: int = 32) -> str:
    """A tensor summary in one short line: the values when small, stats when big."""
    if summary is None:
        return "None"
    if "values" in summary:
        text = _format_values(summary["values"])
    elif "mean" in summary:
        text = (f"min {_num(summary.get('min'))} max {_num(summary.get('max'))} "
                f"mean {_num(summary.get('mean'))} norm {_num(summary.get('norm'))}")
    else:
        text = f"shape {tuple(summary.get('shape') or ())}"  # a nested tensor has "*" dims; unreadable: None
    return text if len(text) <= width else text[: width - 1] + "…"


def _format_values(values) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_format_values(v) for v in values) + "]"
    return _num(values)


def _num(value) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def shape_text(dims: list | None) -> str:
    """[2, 3] -> 2×3; a scalar (no dims) reads as 'scalar'; unknown as '?'."""
    if dims is None:
        return "?"
    if not dims:
        return "scalar"
    return "×".join(str(d) for d in dims)


def row_label(row: dict) -> str:
    """The row's name and every other name of the same tensor: `model[0].weight = layer.weight, p`."""
    name = str(row.get("name", "?"))
    aliases = row.get("aliases") or []
    return f"{name} = {', '.join(map(str, aliases))}" if aliases else name


def row_words(row: dict, width: int = 32) -> dict[str, str]:
    """One tensor row's words, keyed like COLUMNS: the one row renderer (the TUI only styles these words).

    Rows come from the kernel with their text already visible (kernel/reply_schema.py)."""
    error = row.get("inspect_error")
    return {
        "name": row_label(row),
        "requires_grad": "yes" if row.get("requires_grad") else "no",
        "is_leaf": "yes" if row.get("is_leaf") else "no",
        "grad_fn": row.get("grad_fn") or "—",
        "grad": format_summary(row.get("grad"), width),
        "value": error if error else format_summary(row.get("value"), width),
        "shape": shape_text(row.get("shape")),
        "dtype": str(row.get("dtype", "")).removeprefix("torch."),
    }


def step_text(result, width: int | None = None) -> str:
    """What one step did, as the plain REPL and `gradrepl run` print it (a StepResult in, lines out).

    A help page is printed whole here; the plain REPL pages it instead (see display_text). Its text is
    visible already: kernel text is made so where the client decodes it."""
    lines = [text[:-1] if text.endswith("\n") else text for text in (result.stdout, result.stderr) if text]
    lines += [text for text in (result.result, display_text(result.display)) if text is not None]
    if result.error:
        lines.append(result.error.traceback.rstrip() if result.error.traceback
                     else f"{result.error.type}: {result.error.message}")
        if result.error.explanation and not result.kernel_event:
            lines.append(f"  why: {result.error.explanation}")
    if result.kernel_event:
        lines.append(f"  ! {result.kernel_event}")
    lines += [f"  note: {note}" for note in result.notes]
    if result.tensors:
        lines.append(tensor_table(result.tensors, width=width))
    if result.removed:
        lines.append(f"  removed: {', '.join(result.removed)}")
    return "\n".join(lines)


def display_text(display) -> str | None:
    """A StepResult.display as plain text: a magic's text, or a help page under its title."""
    if isinstance(display, dict):
        return f"{display.get('title', 'help')}\n{display.get('text', '')}"
    return display


def tensor_table(rows: list[dict], all_rows: bool = False, width: int | None = None, saved: bool = False) -> str:
    """An aligned table; changed rows are marked with '*' unless every row is shown plainly.

    With a `width`, no line is longer: the widest columns narrow first and their cells wrap
    onto more lines, cell by cell, so a row stays a row. With saved=True a last column says
    how much each row's graph holds (saved_bytes)."""
    if not rows:
        return "(no live tensors)"
    columns = PAST_COLUMNS if saved else COLUMNS
    keys = list(columns)
    body = []
    for row in rows:
        words = row_words(row)
        if saved:
            words["saved_bytes"] = format_bytes(row.get("saved_bytes"))
        body.append([words[key] for key in keys])
    headers = [WIDE_HEADERS.get(key, columns[key]) for key in keys]
    room = (width - 2 - len(GAP) * (len(headers) - 1)) if width else None
    widths = _widths(headers, body)
    if room is not None and sum(widths) > room:
        headers = [columns[key] for key in keys]
        widths = _narrowed(_widths(headers, body), room, [keys.index(key) for key in FLEXIBLE])
    lines = _table_row("  ", headers, widths)
    for row, cells in zip(rows, body):
        lines += _table_row("* " if row.get("changed") and not all_rows else "  ", cells, widths)
    return "\n".join(lines)


def _widths(headers: list[str], body: list[list[str]]) -> list[int]:
    return [max(len(header), *(len(cells[i]) for cells in body)) for i, header in enumerate(headers)]


def _narrowed(widths: list[int], room: int, flexible: list[int]) -> list[int]:
    """Take a column from the widest flexible one (then any) until they fit in `room` or reach MIN_COLUMN."""
    widths = list(widths)
    while sum(widths) > room:
        for columns in (flexible, range(len(widths))):
            widest = max(columns, key=lambda i: widths[i])
            if widths[widest] > MIN_COLUMN:
                widths[widest] -= 1
                break
        else:
            break
    return widths


def _table_row(mark: str, cells: list[str], widths: list[int]) -> list[str]:
    """One table row, as many lines tall as its most wrapped cell."""
    wrapped = [textwrap.wrap(cell, w, break_on_hyphens=False) or [""] for cell, w in zip(cells, widths)]
    lines = []
    for index in range(max(map(len, wrapped))):
        parts = [(cell[index] if index < len(cell) else "").ljust(w) for cell, w in zip(wrapped, widths)]
        lines.append(((mark if index == 0 else "  ") + GAP.join(parts)).rstrip())
    return lines


def fit(text: str, width: int | None) -> str:
    """Wrap lines longer than `width`; a tree line's continuation stays inside its branch."""
    if not width:
        return text
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip(_TREE_LEAD))]
        indent = lead.replace("├", "│").replace("└", " ").replace("─", " ") + "  "
        indent = indent[: width // 2]
        out += textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False,
                             drop_whitespace=True) or [line[:width]]
    return "\n".join(out)
