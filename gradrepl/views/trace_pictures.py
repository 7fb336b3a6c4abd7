"""%trace's pictures: the size of the gradient arriving at each node as a bar, and heat strips of a
weight and the gradient its AccumulateGrad adds to .grad (views/pictures.py's characters).

Kept apart from views/trace.py's listing: the listing calls none of this; %trace's magic and the TUI's
trace view each add the pictures with one call.
"""

from __future__ import annotations

import math

from gradrepl.views.numbers import number_text
from gradrepl.views.pictures import bar, finite, flat, heat_strip

BAR_WIDTH = 10
STRIP_WIDTH = 24
HEAT_KEY = "heat: shade = |v|, █ largest (%help heat strip)"


def grad_size(summary: dict | None) -> float | None:
    """A gradient's size: its norm (for a scalar, |value|); None when no gradient or no number."""
    if not summary:
        return None
    norm = finite(summary.get("norm"))
    if norm is not None:
        return norm
    values = [v for v in map(finite, flat(summary.get("values"))) if v is not None] if "values" in summary else []
    return math.sqrt(sum(v * v for v in values)) if values else None


def node_sizes(nodes: list[dict]) -> dict:
    """Node id -> the size of the first gradient arriving there, for nodes that received one."""
    sizes = {}
    for node in nodes:
        arriving = node.get("grad_outputs") or []
        size = grad_size(arriving[0]) if arriving else None
        if size is not None:
            sizes[node["id"]] = size
    return sizes


def grad_bars(nodes: list[dict], width: int = BAR_WIDTH) -> dict:
    """Node id -> `  ████▌      2.83`: the bar is the size of what arrives, the longest the largest."""
    sizes = node_sizes(nodes)
    largest = max(sizes.values(), default=0.0)
    return {node_id: f"  {bar(size / largest if largest else 0.0, width)} {number_text(size)}"
            for node_id, size in sizes.items()}


def leaf_strips(nodes: list[dict], rows: dict, width: int = STRIP_WIDTH) -> list[str]:
    """`  w  value ▕▓█▒▏  grad ▕░▒█▏` for each leaf of several values that a gradient reached."""
    lines = []
    for node in nodes:
        if "leaf" not in node or node.get("order") is None:
            continue
        arriving = (node.get("grad_outputs") or [None])[0] or {}
        value = ((rows.get(node["leaf"]) or {}).get("value") or {})
        pictures = [(word, summary["values"]) for word, summary in (("value", value), ("grad", arriving))
                    if isinstance(summary.get("values"), list) and len(flat(summary["values"])) > 1]
        if pictures:
            lines.append(f"  {node['leaf']}  " + "  ".join(f"{word} ▕{heat_strip(values, width)}▏"
                                                       for word, values in pictures))
    return lines


def trace_pictures_text(trace: dict, rows: dict) -> str:
    """Under %trace's listing: a bar per node that received a gradient, then the leaves' heat strips."""
    nodes = trace.get("nodes") or []
    bars = grad_bars(nodes)
    if not bars:
        return ""
    ran = sorted((node for node in nodes if node["id"] in bars), key=lambda node: node.get("order") or 0)
    labels = [node["name"] + (f" → {node['leaf']}" if "leaf" in node else "") for node in ran]
    width = max(map(len, labels))
    lines = ["gradient arriving at each node, by size (its norm)"]
    lines += [f"{node.get('order') or '-':>4} {label:<{width}}{bars[node['id']]}" for node, label in zip(ran, labels)]
    strips = leaf_strips(nodes, rows)
    return "\n".join(lines + ([HEAT_KEY, *strips] if strips else []))


def with_pictures(listing: str, traces: list[dict], rows: dict) -> str:
    """%trace's listing, then the first backward's pictures (the hook %trace's magic calls)."""
    pictures = trace_pictures_text(traces[0], rows) if traces else ""
    return f"{listing}\n{pictures}" if pictures else listing
