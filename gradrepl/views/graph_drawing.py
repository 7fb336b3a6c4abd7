"""A tensor's autograd graph drawn as boxes and arrows: a layered DAG, the tensor's grad_fn at the top,
the leaves at the bottom, each node's saved tensors and the bytes they hold beside its box.

Layers by longest path from the root (every leaf on the bottom layer); an edge that skips layers goes
through a one-column stand-in on each; each layer ordered by its parents' places and packed under
them; between two layers each parent gets a track of its own, so lines of different parents never
merge (one that crosses another goes straight through it). ▼ marks where a gradient arrives: backward
runs down the arrows. The words are views/graph.py's; a picture wider than the room says so (None),
and the caller draws the indented tree instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gradrepl.views.graph import children_of, graph_text, no_graph_words, notes, plain, saved_pieces, saved_slots
from gradrepl.views.numbers import format_bytes, shape_text

MAX_NODES = 40       # a bigger graph reads better as the tree
SIDE_WIDTH = 30      # characters of a saved line beside a box
INNER_WIDTH = 22     # characters of a line inside a box
GAP = 2              # columns between two blocks of a layer
UP, DOWN, LEFT, RIGHT = "u", "d", "l", "r"
LINES = {frozenset("ud"): "│", frozenset("lr"): "─", frozenset("ur"): "└", frozenset("ul"): "┘",
         frozenset("dr"): "┌", frozenset("dl"): "┐", frozenset("udr"): "├", frozenset("udl"): "┤",
         frozenset("lrd"): "┬", frozenset("lru"): "┴", frozenset("udlr"): "┼", frozenset("u"): "│",
         frozenset("d"): "│", frozenset("l"): "─", frozenset("r"): "─"}


@dataclass
class Block:
    """One node's rectangle of text (a box, and its saved lines when beside), or a stand-in's line."""
    key: object
    lines: list[str]
    anchor: int            # the column edges attach to, from the block's left
    x: int = 0
    parents: list = field(default_factory=list)
    children: list = field(default_factory=list)

    @property
    def width(self) -> int:
        return max(len(line) for line in self.lines)


def shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def box_words(node: dict) -> list[str]:
    """What a box says: the op, then its output's shape, or the leaf it writes .grad of."""
    shapes = node.get("shapes") or []
    words = [str(node.get("grad_fn", "?"))]
    leaf = node.get("leaf")
    if leaf:
        words.append(f"leaf {leaf}" if isinstance(leaf, str) else "leaf")
    if shapes:
        words.append("→ " + ", ".join(shape_text(dims) for dims in shapes))
    return words


def side_words(node: dict) -> list[str]:
    """What a node saved for backward, and the bytes its graph holds there (a freed one is said short:
    the note under the picture says what freed means)."""
    words = [plain(saved_pieces(saved)).replace("  freed by backward", " (freed)") for saved in saved_slots(node)]
    if len(words) > 3:
        words = words[:2] + [f"… {len(words) - 2} more saved"]
    if node.get("saved_bytes"):
        words.append(f"holds {format_bytes(node['saved_bytes'])}")
    return words


def node_block(node: dict, beside: bool, rows: int) -> Block:
    """A box of `rows` inner lines; the saved words beside it (`beside`) or inside it."""
    inner, side = box_words(node), side_words(node)
    if not beside:
        inner, side = inner + side, []
    inner = [shorten(words, INNER_WIDTH) for words in inner]
    side = [shorten(words, SIDE_WIDTH) for words in side]
    width = max(len(words) for words in inner)
    inner += [""] * (rows - len(inner))
    box = ["┌" + "─" * (width + 2) + "┐", *(f"│ {words:<{width}} │" for words in inner),
           "└" + "─" * (width + 2) + "┘"]
    side = [""] + side  # level with the box's first line of words
    lines = [line + ("  " + side[index] if index < len(side) and side[index] else "") for index, line in enumerate(box)]
    return Block(node["id"], lines, (width + 3) // 2)


def inner_rows(node: dict, beside: bool) -> int:
    return len(box_words(node)) + (0 if beside else len(side_words(node)))


def layers_of(graph: dict) -> list[list]:
    """Node ids by layer: longest path from a root, every leaf (no children) on the bottom layer."""
    nodes = [node["id"] for node in graph.get("nodes") or []]
    children = children_of(graph)
    depth: dict = {}
    order = topological(nodes, children)
    for node_id in order:
        depth.setdefault(node_id, 0)
        for child in children.get(node_id, []):
            depth[child] = max(depth.get(child, 0), depth[node_id] + 1)
    bottom = max(depth.values(), default=0)
    for node_id in nodes:
        if not children.get(node_id):
            depth[node_id] = bottom
    layers: list[list] = [[] for _ in range(bottom + 1)]
    for node_id in order:
        layers[depth[node_id]].append(node_id)
    return layers


def topological(nodes: list, children: dict) -> list:
    """Parents before children, in the order the kernel found them (a DAG: no cycles in autograd)."""
    parents = {node_id: 0 for node_id in nodes}
    for node_id in nodes:
        for child in children.get(node_id, []):
            if child in parents:
                parents[child] += 1
    ready = [node_id for node_id in nodes if parents[node_id] == 0]
    order = []
    while ready:
        node_id = ready.pop(0)
        order.append(node_id)
        for child in children.get(node_id, []):
            if child in parents:
                parents[child] -= 1
                if parents[child] == 0:
                    ready.append(child)
    return order + [node_id for node_id in nodes if node_id not in order]


def build(graph: dict, beside: bool) -> list[list[Block]]:
    """Blocks by layer, stand-ins in the layers an edge skips, each layer in its parents' order."""
    nodes = {node["id"]: node for node in graph.get("nodes") or []}
    layers = layers_of(graph)
    depth = {node_id: index for index, layer in enumerate(layers) for node_id in layer}
    rows = [max((inner_rows(nodes[node_id], beside) for node_id in layer), default=1) for layer in layers]
    blocks = {node_id: node_block(nodes[node_id], beside, rows[depth[node_id]]) for node_id in nodes}
    drawn: list[list[Block]] = [[blocks[node_id] for node_id in layer] for layer in layers]
    for source, target in graph.get("edges") or []:
        if source not in blocks or target not in blocks:
            continue
        upper = blocks[source]
        for level in range(depth[source] + 1, depth[target]):
            height = rows[level] + 2
            stand_in = Block(("via", source, target, level), ["│"] * height, 0)
            drawn[level].append(stand_in)
            link(upper, stand_in)
            upper = stand_in
        link(upper, blocks[target])
    for level in range(1, len(drawn)):
        place = {id(block): index for index, block in enumerate(drawn[level - 1])}
        drawn[level].sort(key=lambda block: sum(place[id(p)] for p in block.parents) / max(1, len(block.parents)))
    return drawn


def link(parent: Block, child: Block) -> None:
    if child not in parent.children:
        parent.children.append(child)
        child.parents.append(parent)


def arrange(layers: list[list[Block]]) -> None:
    """Each layer packed left to right, every block as near the middle of its parents as room allows,
    then every parent over the middle of its children; the whole moved to start at column 0."""
    for level, layer in enumerate(layers):
        wanted = [middle(block.parents) - block.anchor if level and block.parents else None for block in layer]
        pack(layer, wanted)
    for layer in reversed(layers[:-1]):
        pack(layer, [middle(block.children) - block.anchor if block.children else block.x for block in layer])
    left = min((block.x for layer in layers for block in layer), default=0)
    for layer in layers:
        for block in layer:
            block.x -= left


def middle(blocks: list[Block]) -> int:
    return round(sum(block.x + block.anchor for block in blocks) / len(blocks))


def pack(layer: list[Block], wanted: list) -> None:
    edge = None
    for block, want in zip(layer, wanted):
        x = want if want is not None else (edge if edge is not None else 0)
        block.x = x if edge is None else max(x, edge)
        edge = block.x + block.width + GAP


def channel(upper: list[Block], lower: list[Block]) -> list[str]:
    """The rows between two layers: a track per parent, ▼ where each edge reaches its child."""
    spans = []
    for parent in upper:
        if parent.children:
            ends = [parent.x + parent.anchor] + [child.x + child.anchor for child in parent.children]
            spans.append((min(ends), max(ends), parent))
    tracks: list[list[tuple[int, int]]] = []
    track_of = {}
    for low, high, parent in sorted(spans, key=lambda span: span[0]):
        for index, used in enumerate(tracks):
            if all(high + 1 < a or b + 1 < low for a, b in used):
                used.append((low, high))
                track_of[id(parent)] = index
                break
        else:
            tracks.append([(low, high)])
            track_of[id(parent)] = len(tracks) - 1
    height = len(tracks) + 1
    width = max([block.x + block.width for block in upper + lower] + [0])
    cells: dict[tuple[int, int], dict] = {}

    def mark(row: int, column: int, owner, directions: str) -> None:
        cells.setdefault((row, column), {}).setdefault(owner, set()).update(directions)

    for low, high, parent in spans:
        track, top = track_of[id(parent)], parent.x + parent.anchor
        for row in range(track):
            mark(row, top, parent.key, UP + DOWN)
        mark(track, top, parent.key, UP)
        for column in range(low, high + 1):
            mark(track, column, parent.key, (LEFT if column > low else "") + (RIGHT if column < high else ""))
        for child in parent.children:
            bottom = child.x + child.anchor
            mark(track, bottom, parent.key, DOWN)
            for row in range(track + 1, height - 1):
                mark(row, bottom, ("to", child.key), UP + DOWN)
    grid = [[" "] * width for _ in range(height)]
    for (row, column), owners in cells.items():
        grid[row][column] = cell_character(owners)
    for child in lower:
        if child.parents:  # a stand-in only carries the line on: the arrow is drawn at the node
            grid[height - 1][child.x + child.anchor] = "│" if isinstance(child.key, tuple) else "▼"
    return ["".join(row).rstrip() for row in grid]


def cell_character(owners: dict) -> str:
    """One owner's lines join; where one's vertical only crosses another's horizontal, the vertical goes
    straight through (a crossing, not a join)."""
    shapes = {frozenset(parts) for parts in owners.values()}
    if len(owners) > 1 and shapes == {frozenset(UP + DOWN), frozenset(LEFT + RIGHT)}:
        return "│"
    return LINES.get(frozenset(set().union(*owners.values())), "┼")


def layer_rows(layer: list[Block]) -> list[str]:
    height = max(len(block.lines) for block in layer)
    width = max(block.x + block.width for block in layer)
    rows = [[" "] * width for _ in range(height)]
    for block in layer:
        for index, line in enumerate(block.lines):
            for offset, character in enumerate(line):
                rows[index][block.x + offset] = character
        if block.parents and block.lines[0].startswith("┌"):
            rows[0][block.x + block.anchor] = "┴"
        if block.children and block.lines[-1].startswith("└"):
            rows[len(block.lines) - 1][block.x + block.anchor] = "┬"
    return ["".join(row).rstrip() for row in rows]


def drawing(graph: dict, beside: bool = True) -> list[str]:
    """The picture's rows (no caption)."""
    layers = build(graph, beside)
    arrange(layers)
    rows: list[str] = []
    for level, layer in enumerate(layers):
        if level:
            rows += channel(layers[level - 1], layer)
        rows += layer_rows(layer)
    return rows


def caption(graph: dict) -> str:
    return f"{graph.get('root', '?')}: backward runs down the ▼ arrows to the leaves"


def graph_picture(graph: dict, width: int | None) -> list[str] | None:
    """The boxes and arrows in `width` columns (saved words beside the boxes, else inside them), or
    None when even that is wider, or the graph too big or cut off."""
    nodes = graph.get("nodes") or []
    if not nodes or len(nodes) > MAX_NODES or graph.get("truncated"):
        return None
    for beside in (True, False):
        rows = drawing(graph, beside)
        if width is None or max(map(len, rows)) <= width:
            return rows
    return None


def graph_drawing_text(graph: dict, width: int | None) -> str:
    """%graph: the picture when it fits `width`, else views/graph.py's indented tree; then the notes."""
    if not graph.get("nodes"):
        return no_graph_words(graph)
    rows = graph_picture(graph, width)
    if rows is None:
        return graph_text(graph)
    return "\n".join([caption(graph), *rows, *notes(graph)])

