"""A tensor's autograd graph (the kernel's {"root", "kind", "nodes", "edges", ...}) in words.

One wording of a node for every face: `%graph`'s text tree draws these words, and the TUI's
graph tree styles the same pieces by their role. A piece is (words, role); the roles are
"grad_fn", "shape", "leaf", "holds", "saved", "name", "value", "freed", "tensor" and "dim".
"""

from __future__ import annotations

from gradrepl.views.numbers import format_bytes, shape_text

Pieces = list[tuple[str, str]]

FREED = "backward() freed the saved tensors; call backward(retain_graph=True) to keep them for a second backward."
SHARED = " (shown above)"  # a node reached twice is drawn once, then pointed back to


def node_pieces(node: dict) -> Pieces:
    """`MulBackward0  → 2×3`, `AccumulateGrad  leaf x`, then `holds 1.5 KiB` when its graph keeps bytes."""
    pieces = [(str(node.get("grad_fn", "?")), "grad_fn")]
    shapes = node.get("shapes") or []
    if shapes:
        pieces.append(("  → " + ", ".join(shape_text(dims) for dims in shapes), "shape"))
    leaf = node.get("leaf")
    if leaf:
        pieces.append((f"  leaf {leaf}" if isinstance(leaf, str) else "  leaf", "leaf"))
    if node.get("saved_bytes"):
        pieces.append((f"  holds {format_bytes(node['saved_bytes'])}", "holds"))
    return pieces


def saved_slots(node: dict) -> list[dict]:
    """A node's saved slots, its tensors first (the input, the weight: what a lesson asks about), then
    the numbers (alpha, beta, exponent), each group in the kernel's order; a short list keeps the tensors."""
    slots = node.get("saved") or []
    return sorted(slots, key=lambda saved: saved.get("value") is not None and not saved.get("freed"))


def saved_pieces(saved: dict) -> Pieces:
    """A saved slot: `saved exponent = 2`, `saved self  2×3  is x`, or `saved self  freed by backward`."""
    pieces = [("saved ", "saved"), (str(saved.get("name", "?")), "name")]
    if saved.get("freed"):
        return [*pieces, ("  freed by backward", "freed")]
    if saved.get("value") is not None:
        pieces.append((f" = {saved['value']}", "value"))
    if saved.get("shape") is not None:
        pieces.append(("  " + shape_text(saved.get("shape")), "shape"))
    if saved.get("tensor"):
        pieces.append((f"  is {saved['tensor']}", "tensor"))
    return pieces


def shared_pieces(node: dict) -> Pieces:
    """A node drawn already (a shared input, e.g. x used twice)."""
    return [("↺ ", "dim"), (str(node.get("grad_fn", "?")), "dim"), (SHARED, "dim")]


def no_graph_words(graph: dict) -> str:
    """Why a tensor has no graph to draw: a leaf, or a constant autograd does not track."""
    root = graph.get("root", "this tensor")
    if graph.get("kind") == "leaf":
        return (f"{root} is a leaf: it requires grad but no operation made it, so it has no grad_fn.\n"
                f"backward() stores its gradient in {root}.grad.")
    if graph.get("kind") == "constant":
        return (f"{root} does not require grad and has no grad_fn: autograd recorded nothing for it,\n"
                "so no gradient flows to or through it.")
    return "no autograd graph"


def cut_words(graph: dict) -> str:
    return f"graph cut off after {len(graph.get('nodes') or [])} nodes: too big to draw whole"


def notes(graph: dict) -> list[str]:
    """What is missing from the drawing: the freed saved tensors, the part cut off."""
    said = [FREED] if graph.get("freed") else []
    return said + ([cut_words(graph)] if graph.get("truncated") else [])


def children_of(graph: dict) -> dict:
    children: dict = {}
    for source, target in graph.get("edges") or []:
        children.setdefault(source, []).append(target)
    return children


def roots_of(graph: dict) -> list:
    """The nodes nothing points to: the tensor's own grad_fn (the kernel's node 0)."""
    targets = {target for _, target in graph.get("edges") or []}
    return [node["id"] for node in graph.get("nodes") or [] if node["id"] not in targets]


def plain(pieces: Pieces) -> str:
    return "".join(words for words, _ in pieces)


def graph_text(graph: dict) -> str:
    """%graph: an indented tree (saved slots under their node), then what the drawing leaves out."""
    nodes = {node["id"]: node for node in graph.get("nodes") or []}
    if not nodes:
        return no_graph_words(graph)
    children = children_of(graph)
    lines = [str(graph.get("root", "?"))]
    drawn: set = set()

    def draw(node_id, prefix: str, last: bool) -> None:
        node = nodes.get(node_id)
        if node is None:
            return
        branch = "└─ " if last else "├─ "
        if node_id in drawn:
            lines.append(prefix + branch + plain(shared_pieces(node)))
            return
        drawn.add(node_id)
        lines.append(prefix + branch + plain(node_pieces(node)))
        inner = prefix + ("   " if last else "│  ")
        below = [("saved", saved) for saved in saved_slots(node)]
        below += [("node", child) for child in children.get(node_id, [])]
        for index, (kind, item) in enumerate(below):
            end = index == len(below) - 1
            if kind == "saved":
                lines.append(inner + ("└─ " if end else "├─ ") + plain(saved_pieces(item)))
            else:
                draw(item, inner, end)

    roots = roots_of(graph)
    for index, root_id in enumerate(roots):
        draw(root_id, "", index == len(roots) - 1)
    return "\n".join([*lines, *notes(graph)])
