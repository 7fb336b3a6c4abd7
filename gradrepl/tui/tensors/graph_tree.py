"""The autograd graph of one tensor as a Textual Tree: ops down to the leaves, with saved tensors.

The words are views/graph.py's, the ones %graph prints; this module only styles them by their role."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from gradrepl.views.graph import children_of, node_pieces, roots_of, saved_pieces, saved_slots, shared_pieces

STYLES = {"grad_fn": "bold", "shape": "cyan", "leaf": "green", "holds": "yellow", "saved": "dim", "name": "italic",
          "value": "", "freed": "red", "tensor": "green", "dim": "dim"}


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
        children = children_of(graph)
        seen: set = set()
        for root_id in roots_of(graph):
            self._add(self.root, root_id, nodes, children, seen)
        self.root.expand_all()

    def _add(self, parent: TreeNode, node_id: Any, nodes: dict, children: dict, seen: set) -> None:
        node = nodes.get(node_id)
        if node is None:
            return
        if node_id in seen:
            parent.add_leaf(styled(shared_pieces(node)))
            return
        seen.add(node_id)
        branch = parent.add(node_label(node), data=node)
        for saved in saved_slots(node):
            branch.add_leaf(saved_label(saved))
        for child in children.get(node_id, []):
            self._add(branch, child, nodes, children, seen)
        if not branch.children:
            branch.allow_expand = False


def styled(pieces: list[tuple[str, str]]) -> Text:
    return Text.assemble(*((words, STYLES.get(role, "")) for words, role in pieces))


def node_label(node: dict[str, Any]) -> Text:
    """`MulBackward0  → 2×3`, or `AccumulateGrad  leaf x` for a leaf."""
    return styled(node_pieces(node))


def saved_label(saved: dict[str, Any]) -> Text:
    """A saved slot: a number (`exponent = 2`), a tensor (its shape, its name), or 'freed by backward'."""
    return styled(saved_pieces(saved))
