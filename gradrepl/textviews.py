"""Plain-text views of kernel data, shared by the plain REPL, `run` and %magics."""

from __future__ import annotations

COLUMNS = ("name", "shape", "dtype", "req_grad", "leaf", "grad_fn", ".grad", "value")


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
        text = f"shape {tuple(summary.get('shape', ()))}"
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


def format_bytes(count: int | None) -> str:
    """1536 -> '1.5 KB'; sizes a learner reads at a glance (powers of 1024)."""
    units = ("B", "KB", "MB", "GB", "TB")
    size, unit = float(count or 0), 0
    while size >= 1024 and unit < len(units) - 1:
        size /= 1024
        unit += 1
    return f"{int(size)} B" if unit == 0 else f"{size:.1f} {units[unit]}"


def row_cells(row: dict, width: int = 32) -> list[str]:
    return [
        row["name"],
        "(" + ", ".join(map(str, row["shape"])) + ("," if len(row["shape"]) == 1 else "") + ")",
        row["dtype"].replace("torch.", ""),
        "yes" if row["requires_grad"] else "no",
        "yes" if row["is_leaf"] else "no",
        row["grad_fn"] or "-",
        format_summary(row.get("grad"), width) if row.get("grad") is not None else "None",
        format_summary(row.get("value"), width),
    ]


def step_text(result) -> str:
    """What one step did, as the plain REPL and `gradrepl run` print it (a StepResult in, lines out)."""
    lines = [text[:-1] if text.endswith("\n") else text for text in (result.stdout, result.stderr) if text]
    lines += [text for text in (result.result, result.display) if text is not None]
    if result.error:
        lines.append(result.error.traceback.rstrip() if result.error.traceback
                     else f"{result.error.type}: {result.error.message}")
        if result.error.explanation and not result.kernel_event:
            lines.append(f"  why: {result.error.explanation}")
    if result.kernel_event:
        lines.append(f"  ! {result.kernel_event}")
    lines += [f"  note: {note}" for note in result.notes]
    if result.tensors:
        lines.append(tensor_table(result.tensors))
    if result.removed:
        lines.append(f"  removed: {', '.join(result.removed)}")
    return "\n".join(lines)


def tensor_table(rows: list[dict], all_rows: bool = False, saved: bool = False) -> str:
    """An aligned table; changed rows are marked with '*' unless every row is shown plainly.

    With saved=True a last column says how much the row's graph holds (saved_bytes).
    """
    if not rows:
        return "(no live tensors)"
    columns = COLUMNS + ("graph holds",) if saved else COLUMNS
    body = [row_cells(row) + ([format_bytes(row.get("saved_bytes"))] if saved else []) for row in rows]
    widths = [max(len(col), *(len(cells[i]) for cells in body)) for i, col in enumerate(columns)]
    lines = ["  " + "  ".join(col.ljust(w) for col, w in zip(columns, widths)).rstrip()]
    for row, cells in zip(rows, body):
        mark = "* " if row.get("changed") and not all_rows else "  "
        lines.append(mark + "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
    return "\n".join(lines)
