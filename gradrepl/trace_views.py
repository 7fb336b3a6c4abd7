"""Plain-text views of a backward trace and of a past step (`%trace`, `%at`, `gradrepl trace`)."""

from __future__ import annotations

from gradrepl.textviews import fit, format_summary, shape_text, tensor_table


def grad_text(summary: dict | None) -> str:
    """One gradient in a few characters: a scalar's value, else its shape and norm."""
    if summary is None:
        return "None"
    shape = summary.get("shape") or []
    if not shape and "values" in summary:
        return format_summary(summary)
    dims = shape_text(shape) if shape else "?"  # no dims and no values: a summary that says too little
    norm = summary.get("norm")
    return dims if norm is None else f"{dims} norm {format_summary({'values': norm})}"


def grads_text(summaries: list | None) -> str:
    """A node's gradients, one short cell each: None where no gradient flows, '-' if it never ran."""
    if summaries is None:
        return "-"
    if not summaries:
        return "(none)"
    return ", ".join(grad_text(s) for s in summaries)


def trace_text(trace: dict) -> str:
    """One backward as a numbered listing in the order the engine ran the nodes."""
    nodes = trace.get("nodes", [])
    ran = [node for node in nodes if node.get("order") is not None]
    lines = [f"backward from {trace.get('root', '?')}: {len(ran)} node(s), in the order the engine ran them"]
    width = max((len(node["name"]) for node in nodes), default=0)
    for node in nodes:
        number = f"{node['order']:>3}" if node.get("order") is not None else "  -"
        arriving = grads_text(node.get("grad_outputs"))
        if "leaf" in node:
            flow = f"{node['leaf']}.grad += {arriving}"
        else:
            flow = f"in {arriving}  ->  out {grads_text(node.get('grad_inputs'))}"
        lines.append(f"{number}  {node['name']:<{width}}  {flow}")
    unrun = len(nodes) - len(ran)
    if unrun:
        lines.append(f"  ({unrun} node(s) marked - did not run: no gradient reached them)")
    if trace.get("note"):
        lines.append(f"  note: {trace['note']}")
    return "\n".join(lines)


def step_traces_text(traced: dict) -> str:
    """Every backward a `%trace STATEMENT` step made."""
    traces = traced.get("traces", [])
    parts = [trace_text(trace) for trace in traces] or ["the statement ran no backward: nothing to trace"]
    if traced.get("note"):
        parts.append(f"note: {traced['note']}")
    return "\n\n".join(parts)


def at_text(step: int, source: str, rows: list[dict], changed: set[str], removed: list[str], now: int,
            width: int | None = None) -> str:
    """The table as it stood after a past step, rows that step changed marked with '*'."""
    first = source.splitlines()[0] if source else ""
    lines = [fit(f"after step {step} of {now} (the past: nothing was re-run)  >>> {first}", width)]
    marked = [{**row, "changed": row["name"] in changed} for row in rows]
    lines.append(tensor_table(marked, width=width, saved=True))
    if removed:
        lines.append(f"  removed at that step: {', '.join(removed)}")
    return "\n".join(lines)
