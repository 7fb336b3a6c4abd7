"""Plain-text views of a backward trace and of a past step (`%trace`, `%at`, `gradrepl trace`)."""

from __future__ import annotations

from gradrepl.views.glossary import TRACE_LEGEND
from gradrepl.views.numbers import shape_text
import textwrap

from gradrepl.views.tables import aligned, fit, format_summary, tensor_table
from gradrepl.views.trace_story import made_by_text, node_story

# Said once under a preview's heading (`%trace NAME`, op `trace`: autograd.grad on the side); its leaves'
# lines say what would be added (trace_story.arriving_text)
PREVIEW_WORDS = "a preview: no .grad is changed, the graph is kept"


def grad_text(summary: dict | None, bare: bool = False) -> str:
    """One gradient in a few characters: a scalar's value (`scalar 1` beside shapes; `bare`: `1`, as
    in `x.grad += 1`), else its shape and norm."""
    if summary is None:
        return "None"
    shape = summary.get("shape") or []
    if not shape and "values" in summary:
        return format_summary(summary) if bare else f"{shape_text(shape)} {format_summary(summary)}"
    dims = shape_text(shape) if shape else "?"  # no dims and no values: a summary that says too little
    norm = summary.get("norm")
    return dims if norm is None else f"{dims} norm {format_summary({'values': norm})}"


def grads_text(summaries: list | None, bare: bool = False) -> str:
    """A node's gradients, one short cell each: None where no gradient flows, '-' if it never ran."""
    if summaries is None:
        return "-"
    if not summaries:
        return "(none)"
    return ", ".join(grad_text(s, bare) for s in summaries)


def trace_text(trace: dict, width: int | None = None) -> str:
    """One backward in the order the engine ran the nodes, each told in the learner's words: the
    statement that made it, the gradient arriving (several, where they meet) and what each input receives.
    With a `width` (the TUI's console) a node's line is cut to it and its story wrapped to it."""
    nodes = trace.get("nodes", [])
    ran = [node for node in nodes if node.get("order") is not None]
    preview = bool(trace.get("preview"))
    lines = [f"backward from {trace.get('root', '?')}: {len(ran)} node(s), in the order the engine ran them"]
    if preview:  # a line of its own: a console cuts a long heading at its width
        lines.append(f"  ({PREVIEW_WORDS})")
    by_id = {node.get("id"): node for node in nodes}
    for node in nodes:
        number = f"{node['order']:>3}" if node.get("order") is not None else "  -"
        about = node["leaf"] if "leaf" in node else made_by_text(node)
        lines += aligned([(number, node["name"], about)], width, flexible=(2,))
        for line in node_story(node, by_id, preview):
            lines += textwrap.wrap(line, width, initial_indent=" " * 7, subsequent_indent=" " * 9) if width \
                else [f"       {line}"]
    if any("leaf" not in node for node in ran):
        lines.append(f"  {TRACE_LEGEND}")
    unrun = len(nodes) - len(ran)
    if unrun:
        lines.append(f"  ({unrun} node(s) marked - did not run: no gradient reached them)")
    if trace.get("note"):
        lines.append(f"  note: {trace['note']}")
    return "\n".join(lines)


def step_traces_text(traced: dict, width: int | None = None) -> str:
    """Every backward a `%trace STATEMENT` step made."""
    traces = traced.get("traces", [])
    parts = [trace_text(trace, width) for trace in traces] or ["the statement ran no backward: nothing to trace"]
    if traced.get("note"):
        parts.append(f"note: {traced['note']}")
    return "\n\n".join(parts)


def at_text(step: int, source: str, rows: list[dict], changed: set[str], removed: list[str], now: int,
            width: int | None = None, one_line: bool = False) -> str:
    """The table as it stood after a past step, rows that step changed marked with '*'."""
    first = source.splitlines()[0] if source else ""
    lines = [fit(f"after step {step} of {now} (the past: nothing was re-run)  >>> {first}", width)]
    marked = [{**row, "changed": row["name"] in changed} for row in rows]
    lines.append(tensor_table(marked, width=width, saved=True, one_line=one_line))
    if removed:
        lines.append(f"  removed at that step: {', '.join(removed)}")
    return "\n".join(lines)
