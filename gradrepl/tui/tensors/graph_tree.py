"""The autograd graph of one tensor as a Textual Tree: ops down to the leaves, with saved tensors."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from gradrepl.kernel.sizes import format_bytes
from gradrepl.textviews import shape_text


class GraphTree(Tree[dict]):
    """Root is the tensor's grad_fn; children are the functions it passes gradients to."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("graph", **kwargs)
        self.show_root = True

    def show_graph(self, name: str, graph: dict[str, Any] | None) -> None:
        """Replace the tree with `graph` (the kernel's {"nodes", "edges"}) drawn from `name`."""
        self.clear()
        self.root.set_label(Text(name, style="bold"))
        graph = graph or {}
        nodes = {node["id"]: node for node in graph.get("nodes", [])}
        children = _children(graph.get("edges", []))
        targets = {child for kids in children.values() for child in kids}
        roots = [node_id for node_id in nodes if node_id not in targets]
        seen: set = set()
        for root_id in roots:
            self._add(self.root, root_id, nodes, children, seen)
        self.root.expand_all()

    def _add(self, parent: TreeNode, node_id: Any, nodes: dict, children: dict, seen: set) -> None:
        node = nodes.get(node_id)
        if node is None:
            return
        if node_id in seen:
            # A shared input (e.g. x used twice): show it once, point back here.
            parent.add_leaf(Text.assemble(("↺ ", "dim"), (str(node.get("op")), "dim"), (" (shown above)", "dim")))
            return
        seen.add(node_id)
        branch = parent.add(node_label(node), data=node)
        for saved in node.get("saved") or []:
            branch.add_leaf(saved_label(saved))
        for child in children.get(node_id, []):
            self._add(branch, child, nodes, children, seen)
        if not branch.children:
            branch.allow_expand = False


def _children(edges: list) -> dict:
    children: dict = {}
    for source, target in edges:
        children.setdefault(source, []).append(target)
    return children


def node_label(node: dict[str, Any]) -> Text:
    """`MulBackward0 → 2×3`, or `AccumulateGrad  leaf x` for a leaf."""
    label = Text(str(node.get("op", "?")), style="bold")
    shapes = node.get("shapes") or []
    if shapes:
        label.append("  → " + ", ".join(shape_text(dims) for dims in shapes), style="cyan")
    leaf = node.get("leaf")
    if leaf:
        label.append(f"  leaf {leaf}" if isinstance(leaf, str) else "  leaf", style="green")
    if node.get("saved_bytes"):
        label.append(f"  holds {format_bytes(node['saved_bytes'])}", style="yellow")
    return label


def saved_label(saved: dict[str, Any]) -> Text:
    """A saved slot: a number (`exponent = 2`), a tensor (its shape, its name), or 'freed by backward'."""
    label = Text.assemble(("saved ", "dim"), (str(saved.get("name", "?")), "italic"))
    if saved.get("freed"):
        label.append("  freed by backward", style="red")
        return label
    if saved.get("value") is not None:
        label.append(f" = {saved['value']}")
    if saved.get("shape") is not None:
        label.append("  " + shape_text(saved.get("shape")), style="cyan")
    if saved.get("tensor"):
        label.append(f"  is {saved['tensor']}", style="green")
    return label
