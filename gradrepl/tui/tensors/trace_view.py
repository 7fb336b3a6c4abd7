"""A recorded backward, stepped through node by node: ←/→ one node, space plays, Esc closes.

The graph is drawn as a tree from the root; nodes that already ran are ticked,
the current one is lit, those still to come are dim. Under it: the current
node's gradients (arriving and leaving) and each leaf's .grad, which fills in
when the trace reaches that leaf's AccumulateGrad. Everything is Text, never markup.

A backward that raised (a freed graph, a non-scalar root) still comes with the
nodes it reached: those that never ran have no gradients (None), and the view
says where it stopped and why.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from gradrepl.terminal_text import visible
from gradrepl.tui.tensors.cells import summary
from gradrepl.tui.view_guard import shows_reply
from gradrepl.trace_views import grad_text

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

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.trace: dict[str, Any] = {}
        self.before: dict[str, dict] = {}
        self.count = 0          # backward calls in the step; the first is shown
        self.stopped: str | None = None  # the step's error type, when its backward raised
        self.position = 0
        self._timer = None

    def compose(self):
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

    @shows_reply("the trace view", on_failure="hide")
    def render_trace(self) -> None:
        self.query_one("#trace-body", Static).update(
            trace_text(self.trace, self.position, self.count, self.before, self.stopped))

    def hide(self) -> None:
        self._stop()
        self.display = False


def trace_text(trace: dict[str, Any], position: int, count: int = 1, before: dict[str, dict] | None = None,
               stopped: str | None = None) -> Text:
    """The whole view as Text: header, tree, current node's gradients, leaves' .grad."""
    nodes = trace.get("nodes", [])
    ran = [node for node in nodes if node.get("order") is not None]
    current = ran[position - 1] if 0 < position <= len(ran) else None
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
    text.append("\n\n")
    text.append_text(node_text(current, bool(ran)))
    leaves = [node for node in nodes if "leaf" in node]
    if leaves:
        text.append("\n\nleaves\n", style="bold")
        for node in leaves:
            text.append_text(leaf_line(node, position, (before or {}).get(node["leaf"])))
            text.append("\n")
    if trace.get("note"):
        text.append(f"\nnote: {trace['note']}", style="yellow")
    return text


def leaf_line(node: dict[str, Any], position: int, row: dict | None) -> Text:
    """`x.grad  None → 7` once the trace reached the leaf's AccumulateGrad; the old value until then,
    and "never reached" for a leaf no gradient arrived at (the backward raised before, or no path led there)."""
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
    if after is None:
        line.append(f"+= {summary(received, None)}", style="green")
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

    def draw(node_id: str, depth: int) -> None:
        node = by_id[node_id]
        order = node.get("order")
        indent = "  " * depth + ("└ " if depth else "")
        if node_id in drawn:
            text.append(f"{indent}{node['name']} (shown above)\n", style="dim")
            return
        drawn.add(node_id)
        label = node["name"] + (f" → {node['leaf']}" if "leaf" in node else "")
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


def node_text(node: dict | None, any_ran: bool = True) -> Text:
    """The gradients arriving at a node and leaving it, in full."""
    if node is None:
        if not any_ran:
            return Text("no node ran: the backward stopped before its first node", style="dim")
        return Text("→ to run the first node (the root's grad_fn, which receives 1.0)", style="dim")
    text = Text.assemble((f"{node['order']}. {node['name']}", "bold"), "\n")
    text.append("  arriving (grad_outputs): ", style="cyan")
    text.append(", ".join(grad_text(g) for g in node.get("grad_outputs") or []) or "none")
    if "leaf" in node:
        text.append(f"\n  {node['leaf']}.grad += {summary(_first(node.get('grad_outputs')), None)}", style="green")
        return text
    text.append("\n  leaving (grad_inputs):   ", style="cyan")
    leaving = node.get("grad_inputs") or []
    text.append(", ".join(grad_text(g) for g in leaving) or "none")
    return text
