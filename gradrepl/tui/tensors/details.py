"""Details of one tensor: full value and .grad, why .grad is None, its graph, the symbolic check."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from gradrepl.tui.messages import DetailsLoaded
from gradrepl.tui.tensors.cells import summary
from gradrepl.tui.tensors.graph_tree import GraphTree

# The views that word a tensor's details are imported when a row is first opened, not before the first frame.


class TensorDetails(VerticalScroll):
    """Hidden until a row is selected; everything shown is Text, never markup."""

    _shown: DetailsLoaded | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="details-title")
        yield Static(id="details-why")  # first under the title: in view without scrolling at 80x24
        yield Static(id="details-values")
        yield Static(id="details-graph-picture")  # boxes and arrows when they fit, else the tree below
        yield GraphTree(id="details-graph")
        yield Static(id="details-graph-note")
        yield Static(id="details-check")
        yield Static(id="details-terms")

    def show_loading(self, name: str) -> None:
        self.query_one("#details-title", Static).update(Text.assemble((name, "bold"), ("  loading…", "dim")))

    def on_resize(self) -> None:
        if self._shown is not None:
            self.show_graph(self._shown.name, (self._shown.graph or {}).get("graph") or {})

    def show(self, details: DetailsLoaded) -> None:
        """Render what the kernel said about `details.name`."""
        from gradrepl.views import graph as graph_words
        from gradrepl.views.check import render_check
        from gradrepl.views.numbers import shape_text
        from gradrepl.views.why import why_grad_is_none

        self._shown = details
        row = details.row or {}
        title = Text(details.name, style="bold")
        if row:
            title.append(f"  {shape_text(row.get('shape'))} {str(row.get('dtype', '')).removeprefix('torch.')}", style="cyan")
        self.query_one("#details-title", Static).update(title)
        self.query_one("#details-values", Static).update(values_text(row, details.name, details.history))
        reason = details.why or (why_grad_is_none(row) if row else None)
        why = self.query_one("#details-why", Static)
        why.update(Text.assemble(("why is .grad None? ", "bold cyan"), (reason, "cyan")) if reason else "")
        why.display = bool(reason)
        graph_reply = details.graph or {}
        graph = graph_reply.get("graph") or {}
        self.query_one(GraphTree).show_graph(details.name, graph)
        self.show_graph(details.name, graph)
        note = self.query_one("#details-graph-note", Static)
        notes = [] if graph.get("nodes") else [(graph_words.no_graph_words({"root": details.name, **graph}), "")]
        notes += [(words, "yellow") for words in graph_words.notes(graph)]
        note.update(Text("\n").join(Text(words, style=style) for words, style in notes))
        note.display = bool(notes)
        check = self.query_one("#details-check", Static)
        check_text = render_check(details.check) if details.check else ""
        errors = "\n".join(details.errors)
        check.update(Text.assemble(("symbolic check\n", "bold"), check_text or "", (errors, "dim red")))
        check.display = bool(check_text or errors)
        self.query_one("#details-terms", Static).update(terms_text(row) if row else "")


    def show_graph(self, name: str, graph: dict[str, Any]) -> None:
        """Boxes and arrows when they fit the pane's width, else the tree (none for a graph with no nodes)."""
        from gradrepl.views.graph_drawing import caption, graph_picture

        room = self.scrollable_content_region.width or self.app.size.width
        rows = graph_picture(graph, room) if graph.get("nodes") else None
        picture = self.query_one("#details-graph-picture", Static)
        picture.update(Text("\n".join([caption({"root": name}), *rows])) if rows else "")
        picture.display = rows is not None
        # No nodes (a leaf, a constant): words say why there is no graph; %graph says the same.
        self.query_one(GraphTree).display = bool(graph.get("nodes")) and rows is None


def values_text(row: dict[str, Any], name: str = "", history: list | None = None) -> Text:
    """Every other name of the tensor, then the full summaries of value and .grad, one per line; a
    number's history across steps as a sparkline under its value."""
    from gradrepl.views.numbers import format_bytes
    from gradrepl.views.plot import sparkline_words

    text = Text()
    if row.get("aliases"):
        text.append("also named  ", style="bold")
        text.append(", ".join(map(str, row["aliases"])) + "\n")
    if row.get("inspect_error"):
        text.append(str(row["inspect_error"]) + "\n", style="red")
    text.append("value  ", style="bold")
    text.append(summary(row.get("value"), width=None) if row else "?")
    if sparkline_words(history or []):
        text.append("\nhistory  ", style="bold")
        text.append(sparkline_words(history or []))
        text.append(f"  (%plot {name})", style="dim")
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


def terms_text(row: dict[str, Any]) -> Text:
    """One line on each word a beginner meets in the facts above (also %help TERM); last, below the why-line."""
    from gradrepl.views.glossary import gloss

    terms = ["grad_fn"] * bool(row.get("grad_fn")) + ["version"] + ["graph holds"] * bool(row.get("saved_bytes"))
    return Text("\n".join(gloss(term) or term for term in terms), style="dim italic")
