"""Tensor rows as words and aligned tables (the plain REPL, `run`, %tensors; the TUI styles the same words)."""

from __future__ import annotations

import math
import textwrap

from gradrepl.views.glossary import ZERO_SAVED_NOTE
from gradrepl.views.numbers import flat_values, format_bytes, number_text, shape_text

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
# What a table too narrow for whole words leaves out first; a past step's table keeps what its graph held
# (what %at is read for) longer than .grad.
LEAVE_OUT = ("dtype", "shape", "value", "saved_bytes", "grad")
LEAVE_OUT_PAST = ("dtype", "shape", "value", "grad", "saved_bytes")
_TREE_LEAD = " │├└─"
GRAPH_FREED = "graph freed"  # beside a grad_fn: a second backward through it raises (retain_graph keeps it)


def format_summary(summary: dict | None, width: int = 32) -> str:
    """A tensor summary in one short line: the values when small, stats when big."""
    if summary is None:
        return "None"
    if "values" in summary:
        text = _format_values(summary["values"])
    elif "mean" in summary:
        text = (f"min {number_text(summary.get('min'))} max {number_text(summary.get('max'))} "
                f"mean {number_text(summary.get('mean'))} norm {number_text(summary.get('norm'))}")
    else:
        text = f"shape {shape_text(summary.get('shape'))}"  # a nested tensor has "*" dims; unreadable: None (?)
    return text if len(text) <= width else text[: width - 1] + "…"


def _format_values(values) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_format_values(v) for v in values) + "]"
    return number_text(values)




def accumulated_text(held: dict | None, now: dict | None, step: int) -> str | None:
    """A .grad that a backward added to rather than wrote: `14 (+7 at In [5])`, so two backward calls
    without zero_grad show what the second one added; None when it is no such addition (first write, a
    write into zeros, emptied or shrunk as zero_(), a clip or a scale by less than 1 do, a different shape,
    or values too many to show)."""
    if not held or not now or "values" not in held or "values" not in now or held.get("shape") != now.get("shape"):
        return None
    added = _minus(now["values"], held["values"])
    if added is None or held["values"] == now["values"] or _shrunk(list(flat_values(held["values"])),
                                                                   list(flat_values(now["values"]))):
        return None
    return f"{format_summary(now)} (+{format_summary({'values': added})} at In [{step}])"


def _shrunk(held: list, now: list) -> bool:
    """Nothing was held (all zeros), nothing is left, or (over several numbers) `now` is `held` times one
    factor below 1: no backward did that (one number is a multiple of any other, so only zero counts)."""
    if not any(held) or not any(now):
        return True
    if len(held) < 2:
        return False
    pairs = [(h, n) for h, n in zip(held, now) if h]
    factor = pairs[0][1] / pairs[0][0]
    return factor < 1 and all(not n for h, n in zip(held, now) if not h) and all(
        math.isclose(n, factor * h, rel_tol=1e-6, abs_tol=1e-12) for h, n in pairs)


def _minus(a, b):
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        parts = [_minus(x, y) for x, y in zip(a, b)]
        return None if any(part is None for part in parts) else parts
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return a - b
    return None


def row_label(row: dict) -> str:
    """The row's name and every other name of the same tensor: `model[0].weight = layer.weight, p`."""
    name = str(row.get("name", "?"))
    aliases = row.get("aliases") or []
    return f"{name} = {', '.join(map(str, aliases))}" if aliases else name


# (the .grad summary a row held before the step that last changed it, that step's number)
GradBefore = tuple[dict | None, int]


def grad_words(row: dict, width: int = 32, before: GradBefore | None = None) -> str:
    """A row's .grad: `14 (+7 at In [5])` when the step that last changed the row added to what .grad
    held (`before`: that held summary and the step), else its summary."""
    added = accumulated_text(before[0], row.get("grad"), before[1]) if before else None
    return added or format_summary(row.get("grad"), width)


def row_words(row: dict, width: int = 32, graph_freed: bool = False, before: GradBefore | None = None) -> dict[str, str]:
    """One tensor row's words, keyed like COLUMNS: the one row renderer (the TUI only styles these words).

    `graph_freed`: a backward freed what this row's graph saved (the panel saw it hold bytes, then none),
    said in its grad_fn's place (the op stays in the details), so the column keeps its width. `before`: what
    its .grad held before the step that last changed the row, and that step (grad_words). Rows come from
    the kernel with their text already visible (protocol/reply_schema.py)."""
    error = row.get("inspect_error")
    grad_fn = row.get("grad_fn")
    return {
        "name": row_label(row),
        "requires_grad": "yes" if row.get("requires_grad") else "no",
        "is_leaf": "yes" if row.get("is_leaf") else "no",
        "grad_fn": GRAPH_FREED if grad_fn and graph_freed else grad_fn or "—",
        "grad": grad_words(row, width, before),
        "value": error if error else format_summary(row.get("value"), width),
        "shape": shape_text(row.get("shape")),
        "dtype": str(row.get("dtype", "")).removeprefix("torch."),
    }


def tensor_table(rows: list[dict], all_rows: bool = False, width: int | None = None, saved: bool = False,
                 one_line: bool = False, before: dict[str, GradBefore] | None = None) -> str:
    """An aligned table; changed rows are marked with '*' unless every row is shown plainly.

    `before`: name -> what its .grad held before the step that last changed the row, and that step
    (Session.grads_before): a .grad a second backward added to says what it added, as the panel does.

    With a `width`, no line is longer: the widest columns narrow first and their cells wrap
    onto more lines, cell by cell, so a row stays a row. With saved=True a last column says
    how much each row's graph holds (saved_bytes). With one_line=True a cell too long is cut with …
    instead: every row stays one line."""
    if not rows:
        return "(no live tensors)"
    columns = PAST_COLUMNS if saved else COLUMNS
    keys = list(columns)
    body = []
    for row in rows:
        words = row_words(row, before=(before or {}).get(row.get("name")))
        if saved:
            words["saved_bytes"] = format_bytes(row.get("saved_bytes"))
        body.append([words[key] for key in keys])
    headers = [WIDE_HEADERS.get(key, columns[key]) for key in keys]
    widths = _widths(headers, body)
    left_out: list[str] = []
    if width and sum(widths) > _room(width, len(keys)):
        headers = [columns[key] for key in keys]
        keys, headers, body, left_out = _leave_out(keys, headers, body, width, LEAVE_OUT_PAST if saved else LEAVE_OUT)
        widths = _narrowed(_widths(headers, body), _room(width, len(keys)),
                           [keys.index(key) for key in FLEXIBLE if key in keys], _longest_words(headers, body))
    lines = _table_row("  ", headers, widths, one_line)
    for row, cells in zip(rows, body):
        lines += _table_row("* " if row.get("changed") and not all_rows else "  ", cells, widths, one_line)
    if left_out:
        lines.append(f"  ({', '.join(left_out)} left out to fit {width} columns)")
    if saved and any(row.get("grad_fn") and not row.get("saved_bytes") for row in rows):
        lines.extend(textwrap.wrap(f"({ZERO_SAVED_NOTE})", width=(width or 100) - 2,
                                   initial_indent="  ", subsequent_indent="   "))
    return "\n".join(lines)


def _room(width: int, count: int) -> int:
    """What `count` columns may take in `width`: the change mark and the gaps come first."""
    return width - 2 - len(GAP) * (count - 1)


def _longest_words(headers: list[str], body: list[list[str]]) -> list[int]:
    """Each column's longest word: a cell wraps between words, never inside one (model[0].weight stays whole)."""
    return [max(len(word) for cell in [header, *(cells[i] for cells in body)] for word in cell.split() or [""])
            for i, header in enumerate(headers)]


def _leave_out(keys: list[str], headers: list[str], body: list[list[str]], width: int, order: tuple[str, ...]):
    """Columns left out, in `order`, until every kept one fits its longest word; as the panel does."""
    left_out = []
    for key in order:
        if sum(_longest_words(headers, body)) <= _room(width, len(keys)) or len(keys) <= 2:
            break
        if key in keys:
            at = keys.index(key)
            left_out.append(headers[at])
            keys, headers = keys[:at] + keys[at + 1:], headers[:at] + headers[at + 1:]
            body = [cells[:at] + cells[at + 1:] for cells in body]
    return keys, headers, body, left_out


def _widths(headers: list[str], body: list[list[str]]) -> list[int]:
    return [max(len(header), *(len(cells[i]) for cells in body)) for i, header in enumerate(headers)]


def _narrowed(widths: list[int], room: int, flexible: list[int], least: list[int]) -> list[int]:
    """Take a column from the widest flexible one (then any) until they fit in `room`; none goes below
    its longest word (nor MIN_COLUMN)."""
    widths = list(widths)
    floor = [max(MIN_COLUMN, word) for word in least]
    while sum(widths) > room:
        for columns in (flexible, range(len(widths))):
            narrowable = [i for i in columns if widths[i] > floor[i]]
            if narrowable:
                widths[max(narrowable, key=lambda i: widths[i] - floor[i])] -= 1
                break
        else:
            break
    return widths


def _table_row(mark: str, cells: list[str], widths: list[int], one_line: bool = False) -> list[str]:
    """One table row, as many lines tall as its most wrapped cell (one_line: one line, cells cut)."""
    if one_line:
        return [(mark + GAP.join(cut(cell, w).ljust(w) for cell, w in zip(cells, widths))).rstrip()]
    wrapped = [textwrap.wrap(cell, w, break_on_hyphens=False, break_long_words=False) or [""]
               for cell, w in zip(cells, widths)]
    lines = []
    for index in range(max(map(len, wrapped))):
        parts = [(cell[index] if index < len(cell) else "").ljust(w) for cell, w in zip(wrapped, widths)]
        lines.append(((mark if index == 0 else "  ") + GAP.join(parts)).rstrip())
    return lines


def cut(text: str, width: int) -> str:
    """`text` in at most `width` characters, its end replaced by … when cut."""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def aligned(rows: list[tuple[str, ...]], width: int | None = None, flexible: tuple[int, ...] = (),
            indent: str = "") -> list[str]:
    """Rows of cells in aligned columns, one line each; with a `width`, the `flexible` columns (widest
    first) give up characters, cut with …, until every line fits (%check, %trace, %help in a console)."""
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    if width:
        widths = _narrowed(widths, width - len(indent) - len(GAP) * (len(widths) - 1),
                           list(flexible), [MIN_COLUMN if i in flexible else w for i, w in enumerate(widths)])
    return [(indent + GAP.join(cut(str(cell), w).ljust(w) for cell, w in zip(row, widths))).rstrip()
            for row in rows]


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
