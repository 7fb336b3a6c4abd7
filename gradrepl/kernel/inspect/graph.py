"""The autograd graph behind a tensor: grad_fn nodes down to the leaves.

Each node records the op (the node's class, e.g. ``PowBackward0``), the shapes
of the values it received in the forward pass, the leaf an ``AccumulateGrad``
feeds, and the tensors the op saved for backward (``_saved_*`` attributes).
After ``backward()`` without ``retain_graph=True`` the saved tensors are freed;
reading one then raises, and the node says so ("freed"). Data only: views/graph.py words it.
"""

from __future__ import annotations

from collections import deque

import torch

from gradrepl.kernel.inspect.saved import node_saved_bytes

MAX_NODES = 200  # bigger graphs are cut off and marked truncated
UNNAMED_LEAF = "<unnamed leaf>"

_saved_names_by_type: dict[type, list[str]] = {}


def graph_of(t: torch.Tensor, names: dict[int, str]) -> dict:
    """The grad_fn DAG of ``t`` as data: nodes (each once), edges, truncation and freed state.

    ``kind`` is "graph" when there is a grad_fn, "leaf" for a tensor that
    requires grad and has none, "constant" for one autograd does not track.
    """
    root = names.get(id(t), "<unnamed tensor>")
    graph = {"root": root, "kind": "graph", "nodes": [], "edges": [], "truncated": False, "freed": False}
    if t.grad_fn is None:
        graph["kind"] = "leaf" if t.requires_grad else "constant"
        return graph
    ids: dict[object, int] = {}  # node wrapper -> id; holding them keeps each wrapper unique
    pending = deque([t.grad_fn])
    ids[t.grad_fn] = 0
    while pending:
        node = pending.popleft()
        graph["nodes"].append(_describe(node, ids[node], names))
        for child, _ in node.next_functions:
            if child is None:
                continue  # an input that does not require grad
            if child not in ids:
                if len(ids) >= MAX_NODES:
                    graph["truncated"] = True
                    continue
                ids[child] = len(ids)
                pending.append(child)
            graph["edges"].append([ids[node], ids[child]])
    graph["freed"] = any(s["freed"] for n in graph["nodes"] for s in n["saved"])
    return graph


def _describe(node, node_id: int, names: dict[int, str]) -> dict:
    leaf = None
    if type(node).__name__ == "AccumulateGrad":
        leaf = names.get(id(node.variable), UNNAMED_LEAF)
    return {"id": node_id, "grad_fn": type(node).__name__, "shapes": _shapes(node), "leaf": leaf,
            "saved": _saved(node, names), "saved_bytes": node_saved_bytes(node)}


def _shapes(node) -> list:
    """Shapes of what the node's forward op produced (guarded: a private attribute)."""
    try:
        return [list(meta.shape) for meta in node._input_metadata]
    except (AttributeError, RuntimeError, TypeError):
        return []


def _saved(node, names: dict[int, str]) -> list[dict]:
    """What the op kept for backward; a tensor read after backward raises: freed."""
    kind = type(node)
    if kind not in _saved_names_by_type:
        # *_sym_sizes/_sym_strides/_sym_numel are shape bookkeeping, not values the op kept
        _saved_names_by_type[kind] = [a for a in dir(kind) if a.startswith("_saved_") and "_sym_" not in a]
    saved = []
    for attribute in _saved_names_by_type[kind]:
        entry = {"name": attribute[len("_saved_"):], "shape": None, "freed": False}
        try:
            value = getattr(node, attribute)
        except RuntimeError:  # backward released it
            entry["freed"] = True
            saved.append(entry)
            continue
        except Exception:  # an attribute this node cannot produce: leave it out
            continue
        if isinstance(value, torch.Tensor):
            entry["shape"] = list(value.shape)
            if id(value) in names:
                entry["tensor"] = names[id(value)]
        elif value is not None:
            text = repr(value)
            entry["value"] = text if len(text) <= 40 else text[:37] + "..."
        saved.append(entry)
    return saved
