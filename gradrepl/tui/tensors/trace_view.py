"""A recorded backward, stepped through node by node: ←/→ one node, space plays, Esc closes.

The graph is drawn as a tree from the root; nodes that already ran are ticked,
the current one is lit, those still to come are dim. Docked above it: the current
node told as the chain rule (views/trace_story.py: the statement that made it, the
gradients meeting there, what each input receives) and each leaf's .grad, which
fills in when the trace reaches that leaf's AccumulateGrad (a preview's says what it would become). The tensor the current
node made is lit in the panel (NodeShown). Everything is Text, never markup.

A backward that raised (a freed graph, a non-scalar root) still comes with the
nodes it reached: those that never ran have no gradients (None), and the view
says where it stopped and why.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from gradrepl.terminal_text import visible
from gradrepl.tui.tensors.cells import summary
from gradrepl.tui.view_guard import shows_reply
from gradrepl.views.trace import PREVIEW_WORDS
from gradrepl.views.trace_story import arriving_text, made_by_text, sends_lines

PLAY_SECONDS = 0.6  # per node while playing


class TraceView(VerticalScroll, can_focus=True):
    """Hidden until a step brings a trace; `position` is how many nodes have run (0 = none yet)."""

    BINDINGS = [
        Binding("left", "step(-1)", "Previous node"),
        Binding("right", "step(1)", "Next node"),
        Binding("space", "play", "Play / pause"),
        Binding("home", "jump(0)", "Start", show=False),
        Binding("end", "jump(-1)", "End", show=False),
    ]

    class NodeShown(Message):
        """The current node changed: `tensor` is the learner's tensor it made (or the leaf it fills), if any;
        `made_by` the statement that made it (its step's echo is lit in the console); `node` the node itself;
        `preview`: the trace changed no .grad (the echo's words say `would fill`)."""

        def __init__(self, tensor: str | None, made_by: dict | None, node: dict | None = None,
                     preview: bool = False) -> None:
            super().__init__()
            self.tensor = tensor
            self.made_by = made_by
            self.node = node
            self.preview = preview

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.trace: dict[str, Any] = {}
        self.before: dict[str, dict] = {}
        self.count = 0          # backward calls in the step; the first is shown
        self.stopped: str | None = None  # the step's error type, when its backward raised
        self.position = 0
        self._timer = None

    def compose(self):
        # The current node's story and the leaves stay docked above the tree, so the chain rule and each
        # .grad can be read while the view scrolls to follow the current node down a long graph.
        yield Static(id="trace-docked")
        yield Static(id="trace-heat")  # views/trace_pictures.py: the reached leaves' heat strips
        yield Static(id="trace-body")

    @property
    def ran(self) -> list[dict]:
        return [node for node in self.trace.get("nodes", []) if node.get("order") is not None]

    def show_trace(self, traced: dict[str, Any], before: dict[str, dict] | None = None,
                   stopped: str | None = None) -> None:
        """Open on `traced` (a StepResult.trace): the first backward, before its first node.

        `before` maps leaf names to their rows before that backward (a preview's
        are the live rows), so each .grad can be shown as before → after.
        `stopped`: the step's error type, when the backward raised part way.
        """
        traces = traced.get("traces") or []
        self.before = before or {}
        self.stopped = stopped
        self.trace = traces[0] if traces else {}
        self.count = len(traces)
        self.position = 0
        self._stop()
        self.render_trace()

    @property
    def current(self) -> dict | None:
        ran = self.ran
        return ran[self.position - 1] if 0 < self.position <= len(ran) else None

    def action_step(self, delta: int) -> None:
        self._stop()
        self._move(self.position + delta)

    def action_jump(self, where: int) -> None:
        self._stop()
        self._move(len(self.ran) if where < 0 else where)

    def action_play(self) -> None:
        if self._timer is not None:
            self._stop()
            return
        if self.position >= len(self.ran):
            self.position = 0
        self._timer = self.set_interval(PLAY_SECONDS, self._tick)

    def _tick(self) -> None:
        self._move(self.position + 1)
        if self.position >= len(self.ran):
            self._stop()

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _move(self, position: int) -> None:
        self.position = max(0, min(position, len(self.ran)))
        self.render_trace()
        current = self.current or {}
        made = current.get("made_by")
        self.post_message(self.NodeShown(current.get("leaf") or (made or {}).get("tensor"), made, self.current,
                                         bool(self.trace.get("preview"))))

    @shows_reply("the trace view", on_failure="hide")
    def render_trace(self) -> None:
        nodes = self.trace.get("nodes", [])
        docked = node_text(self.current, bool(self.ran), {node.get("id"): node for node in nodes},
                           bool(self.trace.get("preview")))
        leaves = leaves_text(self.trace, self.position, self.before)
        if leaves.plain:
            docked.append("\n")
            docked.append_text(leaves)
        self.query_one("#trace-docked", Static).update(docked)
        self.show_heat()
        body = trace_text(self.trace, self.position, self.count, self.before, self.stopped, leaves=False,
                          current=False)
        self.query_one("#trace-body", Static).update(body)
        self.call_after_refresh(self._follow, body.plain)

    def show_heat(self) -> None:
        """Heat strips of each leaf the trace has reached so far: its value, and the gradient it receives."""
        from gradrepl.views.trace_pictures import HEAT_KEY, leaf_strips  # at the first trace, not the first frame

        reached = [node for node in self.trace.get("nodes", []) if (node.get("order") or self.position + 1) <= self.position]
        strips = leaf_strips(reached, self.before)
        heat = self.query_one("#trace-heat", Static)
        heat.update(Text("\n".join([HEAT_KEY, *strips]), style="") if strips else "")
        heat.display = bool(strips)

    def _follow(self, plain: str) -> None:
        """Scroll the current node's line of the tree into view (the leaves are docked above)."""
        line = next((n for n, text in enumerate(plain.splitlines()) if "▶" in text), None)
        if line is None:
            self.scroll_home(animate=False)
            return
        room = max(1, self.scrollable_content_region.height)
        if not self.scroll_y <= line < self.scroll_y + room - 1:
            self.scroll_to(y=max(0, line - room // 2), animate=False)

    def hide(self) -> None:
        self._stop()
        self.display = False
        self.post_message(self.NodeShown(None, None))


def trace_text(trace: dict[str, Any], position: int, count: int = 1, before: dict[str, dict] | None = None,
               stopped: str | None = None, leaves: bool = True, current: bool = True) -> Text:
    """The whole view as Text: header, tree, current node's story, leaves' .grad (``leaves``, ``current``
    false: the view docks them apart)."""
    nodes = trace.get("nodes", [])
    ran = [node for node in nodes if node.get("order") is not None]
    now = ran[position - 1] if 0 < position <= len(ran) else None
    preview = bool(trace.get("preview"))
    text = Text.assemble((f"backward from {trace.get('root', '?')}", "bold"),
                         (f"  node {position} of {len(ran)}", "cyan"),
                         ("   ←/→ step · space play · Esc close", "dim"))
    if count > 1:
        text.append(f"\n(the first of {count} backward calls in this step)", style="dim")
    if stopped:
        text.append(f"\nbackward stopped after {len(ran)} of {len(nodes)} node(s): {visible(stopped)} (see the console)",
                    style="bold red")
    text.append("\n\n")
    text.append_text(tree_text(nodes, position))
    if current:
        text.append("\n\n")
        text.append_text(node_text(now, bool(ran), {node.get("id"): node for node in nodes}, preview))
    if leaves and leaves_text(trace, position, before).plain:
        text.append("\n\n")
        text.append_text(leaves_text(trace, position, before))
    if trace.get("note"):
        text.append(f"\nnote: {trace['note']}", style="yellow")
    return text


def leaves_text(trace: dict[str, Any], position: int, before: dict[str, dict] | None = None) -> Text:
    """Every leaf's .grad as it stands after ``position`` nodes (empty when no leaf is reached)."""
    text = Text()
    leaves = [node for node in trace.get("nodes", []) if "leaf" in node]
    preview = bool(trace.get("preview"))
    if leaves:
        text.append("leaves", style="bold")
        # docked in view: where a preview's .grad words are, it says once that none was written
        text.append(f"  ({PREVIEW_WORDS})\n" if preview else "\n", style="dim")
        for node in leaves:
            text.append_text(leaf_line(node, position, (before or {}).get(node["leaf"]), preview))
            text.append("\n")
        text.rstrip()
    return text


def leaf_line(node: dict[str, Any], position: int, row: dict | None, preview: bool = False) -> Text:
    """`x.grad  None → 7` once the trace reached the leaf's AccumulateGrad; the old value until then,
    and "never reached" for a leaf no gradient arrived at (the backward raised before, or no path led there).
    A preview wrote nothing: `x.grad  None (would be 7)`, `x.grad would get += 7`."""
    received = _first(node.get("grad_outputs"))
    held = (row or {}).get("grad")
    line = Text(f"  {node['leaf']}.grad  ")
    if node.get("order") is None:
        line.append((f"{summary(held, None)}, " if row else "") + "never reached: no gradient arrived", style="dim")
        return line
    if node["order"] > position:
        line.append(summary(held, None) if row else "waiting", style="dim")
        return line
    after = added(held, received) if row else None
    if after is None:  # a statement's trace (no row before it), or more values than a row shows
        line.append(f"{'would get ' if preview else ''}+= {summary(received, None)}", style="green")
    elif preview:  # the live .grad is still what it held: say what backward would make it
        line.append(summary(held, None), style="dim")
        line.append(f" (would be {summary(after, None)})", style="green")
    else:
        line.append(f"{summary(held, None)} → ", style="dim")
        line.append(summary(after, None), style="bold green")
    return line


def added(held: dict | None, received: dict | None) -> dict | None:
    """What .grad holds after AccumulateGrad adds `received` to `held`, when both show every value."""
    if received is None or "values" not in received:
        return None
    if held is None:
        return received
    if "values" not in held:
        return None
    return {"shape": received.get("shape"), "values": _sum(held["values"], received["values"])}


def _sum(a, b):
    if isinstance(a, list):
        return [_sum(x, y) for x, y in zip(a, b)]
    return a + b if isinstance(a, (int, float)) and isinstance(b, (int, float)) else b


def tree_text(nodes: list[dict], position: int) -> Text:
    """Each node once, indented under the first node that passes it a gradient."""
    by_id = {node["id"]: node for node in nodes}
    text = Text()
    drawn: set[str] = set()
    from gradrepl.views.trace_pictures import grad_bars

    bars = grad_bars(nodes)  # views/trace_pictures.py: shown for the nodes that ran

    def draw(node_id: str, depth: int) -> None:
        node = by_id[node_id]
        order = node.get("order")
        indent = "  " * depth + ("└ " if depth else "")
        if node_id in drawn:
            text.append(f"{indent}{node['name']} (shown above)\n", style="dim")
            return
        drawn.add(node_id)
        label = node["name"] + (f" → {node['leaf']}" if "leaf" in node else "")
        label += bars.get(node_id, "") if order is not None and order <= position else ""
        if order is not None and order == position:
            text.append(indent)
            text.append(f"▶ {order}. {label}", style="bold reverse")
            text.append("\n")
        elif order is not None and order < position:
            text.append(f"{indent}✓ {order}. {label}\n")
        else:
            text.append(f"{indent}· {order or '-'}. {label}\n", style="dim")
        for child in node.get("next", []):
            if child in by_id:
                draw(child, depth + 1)

    targets = {child for node in nodes for child in node.get("next", [])}
    for node in nodes:
        if node["id"] not in targets:  # the root (several, for backward on several tensors)
            draw(node["id"], 0)
    text.rstrip()
    return text


def _first(summaries: list | None) -> dict | None:
    """A node's first gradient; None when none arrived (the node never ran)."""
    return summaries[0] if summaries else None


def node_text(node: dict | None, any_ran: bool = True, by_id: dict | None = None, preview: bool = False) -> Text:
    """The current node as the chain rule on the learner's code (views/trace_story.py's words, styled):
    the statement that made it, the gradient arriving or the gradients meeting, what each input receives."""
    if node is None:
        if not any_ran:
            return Text("no node ran: the backward stopped before its first node", style="dim")
        return Text("→ to run the first node (the root's grad_fn, which receives 1.0)", style="dim")
    text = Text.assemble((f"{node['order']}. {node['name']}", "bold"))
    about = node["leaf"] if "leaf" in node else made_by_text(node)
    if about:
        text.append("  ")
        text.append(about, style="bold cyan")
    text.append("\n  ")
    text.append(arriving_text(node, by_id or {}, preview), style="green" if "leaf" in node else "cyan")
    if "leaf" in node:
        return text
    for line in sends_lines(node):
        text.append("\n  ")
        text.append(line, style="dim" if line.startswith("with ") else "")
    return text
