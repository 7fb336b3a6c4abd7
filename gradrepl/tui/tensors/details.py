"""Details of one tensor: full value and .grad, why .grad is None, its graph, the symbolic check."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gradrepl.kernel.sizes import format_bytes
from gradrepl.textviews import shape_text
from gradrepl.tui.tensors.cells import summary
from gradrepl.tui.tensors.grad_reason import why_grad_is_none
from gradrepl.tui.tensors.graph_tree import GraphTree
from gradrepl.tui.messages import DetailsLoaded


class TensorDetails(VerticalScroll):
    """Hidden until a row is selected; everything shown is Text, never markup."""

    def compose(self) -> ComposeResult:
        yield Static(id="details-title")
        yield Static(id="details-values")
        yield Static(id="details-why")
        yield GraphTree(id="details-graph")
        yield Static(id="details-graph-note")
        yield Static(id="details-check")

    def show_loading(self, name: str) -> None:
        self.query_one("#details-title", Static).update(Text.assemble((name, "bold"), ("  loading…", "dim")))

    def show(self, details: DetailsLoaded) -> None:
        """Render what the kernel said about `details.name`."""
        row = details.row or {}
        title = Text(details.name, style="bold")
        if row:
            title.append(f"  {shape_text(row.get('shape'))} {str(row.get('dtype', '')).removeprefix('torch.')}", style="cyan")
        self.query_one("#details-title", Static).update(title)
        self.query_one("#details-values", Static).update(values_text(row))
        reason = why_grad_is_none(row) if row else None
        why = self.query_one("#details-why", Static)
        why.update(Text.assemble(("why is .grad None? ", "bold cyan"), (reason, "cyan")) if reason else "")
        why.display = bool(reason)
        graph_reply = details.graph or {}
        graph = graph_reply.get("graph") or {}
        tree = self.query_one(GraphTree)
        tree.show_graph(details.name, graph)
        # No nodes (a leaf, a constant): the kernel's words, wrapped, say why there is no graph.
        tree.display = bool(graph.get("nodes"))
        note = self.query_one("#details-graph-note", Static)
        notes = [] if tree.display else [(graph_reply.get("text") or "no autograd graph", "")]
        if graph.get("freed"):
            notes.append(("backward() freed the saved tensors; call backward(retain_graph=True) to run it twice.",
                          "yellow"))
        if graph.get("truncated"):
            notes.append(("The graph is cut short here: it is too big to draw whole.", "yellow"))
        note.update(Text("\n").join(Text(words, style=style) for words, style in notes))
        note.display = bool(notes)
        check = self.query_one("#details-check", Static)
        check_text = (details.check or {}).get("text")
        errors = "\n".join(details.errors)
        check.update(Text.assemble(("symbolic check\n", "bold"), check_text or "", (errors, "dim red")))
        check.display = bool(check_text or errors)


def values_text(row: dict[str, Any]) -> Text:
    """Every other name of the tensor, then the full summaries of value and .grad, one per line."""
    text = Text()
    if row.get("aliases"):
        text.append("also named  ", style="bold")
        text.append(", ".join(map(str, row["aliases"])) + "\n")
    if row.get("inspect_error"):
        text.append(str(row["inspect_error"]) + "\n", style="red")
    text.append("value  ", style="bold")
    text.append(summary(row.get("value"), width=None) if row else "?")
    text.append("\n.grad  ", style="bold")
    text.append(summary(row.get("grad"), width=None) if row else "?")
    facts = []
    if row.get("grad_fn"):
        facts.append(f"grad_fn {row['grad_fn']}")
    if row.get("retains_grad"):
        facts.append("retains_grad")
    facts.append(f"version {row.get('version', 0)}")
    if row.get("saved_bytes"):
        facts.append(f"graph holds {format_bytes(row['saved_bytes'])}")
    text.append("\n" + " · ".join(facts), style="dim")
    return text
