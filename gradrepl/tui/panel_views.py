"""The tensor panel's views: its fitted height, the details and trace views, the timeline (F3/F4).

The first frame shows only the live table: the past table, the trace view and the details view (with its
graph) are composed when first opened (`panel_view`), so the first frame neither builds nor styles them.
"""

from __future__ import annotations

from typing import TypeVar

from textual import on
from textual.widget import AwaitMount, Widget
from textual.widgets import TextArea

from gradrepl.tui.app_part import AppPart, found
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.tensors.details import TensorDetails
from gradrepl.tui.panel_fit import fit_panel
from gradrepl.tui.tensors.tensor_table import TensorTable
from gradrepl.tui.tensors.past_panel import PastPanel, target_step
from gradrepl.tui.tensors.trace_view import TraceView
from gradrepl.tui.view_guard import shows_reply
from gradrepl.views.trace_story import echo_tag

BORDER_TITLE_CHROME = 6  # a border title's corners and the spaces around it

# The inspector's views after the live table (#tensors), in their order down the panel, by id.
LAZY_VIEWS: dict[type[Widget], str] = {PastPanel: "past", TraceView: "trace", TensorDetails: "details"}

View = TypeVar("View", bound=Widget)


class PanelViews(AppPart):
    """Opening and closing what the tensor panel shows (app_part.py)."""

    def inspector(self) -> Widget | None:
        """The tensor panel of the main screen (None before it is composed or once the app is closing)."""
        return found(self.screen_stack[0], "#inspector") if self.screen_stack else None

    def panel_views(self, view: type[View]) -> list[View]:
        """The inspector's `view` once mounted (LAZY_VIEWS), else none. Its children only: a query of the
        whole screen walks every widget (~0.1 ms), and each step asked several."""
        inspector = self.inspector()
        return list(inspector.query_children(view).results(view)) if inspector is not None else []

    def fit_panel(self) -> None:
        """The panel's height from its rows when it shows only the table under the console (panel_fit.py)."""
        inspector = self.inspector()
        if self.learn or inspector is None:
            return  # the lesson's grid lays the panel out; or not composed yet
        only_table = not (inspector.has_class("-details") or inspector.has_class("-past")
                          or any(view.display for view in self.panel_views(TraceView)))
        narrow = self.size.width < self.HORIZONTAL_BREAKPOINTS[1][0]  # the class may lag a resize
        fit_panel(self.size.height, inspector, len(inspector.query_one("#tensors", TensorTable).names),
                  narrow and only_table)

    @on(TraceView.NodeShown)
    def _trace_node(self, event: TraceView.NodeShown) -> None:
        """The trace view's node lights the row of the tensor it made (or the leaf whose .grad it fills) and,
        in the console, the echo of the step whose statement made it (for a leaf's AccumulateGrad, the step
        that made the leaf, from the timeline)."""
        self.query_one(TensorTable).point_at(event.tensor)
        node = event.node or {}
        step = (event.made_by or {}).get("step")
        if step is None and "leaf" in node and self.session is not None:
            created = self.session.timeline.grad_story(node["leaf"]).created
            step = created[0] if created else None
        self.query_one(ConsoleLog).light_step(step, echo_tag(node, event.preview) if step is not None else "")

    async def panel_view(self, view: type[View]) -> View:
        """The inspector's `view` (one of LAZY_VIEWS), composed and mounted in its place on its first use."""
        inspector = self.query_one("#inspector")
        name = LAZY_VIEWS[view]
        found = inspector.query_children(f"#{name}")
        if found:
            widget = found.first(view)
            if not widget.is_mounted:  # mounting still (two first uses at once)
                await AwaitMount(inspector, [widget])
            return widget
        later = list(LAZY_VIEWS.values())[list(LAZY_VIEWS).index(view) + 1:]
        before = next((child for child in inspector.children if child.id in later), None)
        widget = view(id=name)
        await inspector.mount(widget, before=before)
        return widget

    @on(TensorTable.RowSelected, "#tensors")
    async def _row_selected(self, event: TensorTable.RowSelected) -> None:
        await self.show_details(event.name)

    async def show_details(self, name: str) -> None:
        """Open the details view of tensor `name` and load its graph from the kernel."""
        details = await self.panel_view(TensorDetails)
        self.details_name = name
        details.display = True
        details.show_loading(name)
        self.query_one("#inspector").add_class("-details")
        self.fit_panel()
        self.fetch_details(name)
        self.refresh_bindings()

    async def show_trace(self, traced: dict, before: dict[str, dict] | None = None,
                         stopped: str | None = None) -> None:
        """Open the node-by-node view of a `%trace` step; it takes the keys until Esc."""
        self._show_trace(await self.panel_view(TraceView), traced, before, stopped)

    @shows_reply("the trace view", on_failure="close_trace")
    def _show_trace(self, view: TraceView, traced: dict, before: dict[str, dict] | None, stopped: str | None) -> None:
        view.display = True
        view.show_trace(traced, before, stopped)
        self.fit_panel()
        if view.display:  # else it could not render the trace, and said so
            view.focus()
        self.refresh_bindings()

    async def action_timeline(self, delta: int) -> None:
        """Show the panel as it stood one step earlier (-1) or later (+1); past the last, the present."""
        if self.session is not None and self.session.timeline.steps:
            await self.panel_view(PastPanel)
        self._move_in_time(delta)

    @shows_reply("the timeline (F3/F4)", on_failure="return_to_present")
    def _move_in_time(self, delta: int) -> None:
        timeline = self.session.timeline if self.session else None
        steps = [step for step, _ in timeline.steps] if timeline else []
        panels = self.panel_views(PastPanel)
        step = target_step(steps, panels[0].step if panels else None, delta)
        if step is None:
            self.return_to_present()
            return
        past_panel = panels[0]
        past = timeline.state_at(step)
        past_panel.show_past(past)
        past_panel.display = True
        live = self.query_one("#tensors", TensorTable)
        if live.has_focus:  # the keys (→ ← ↑ ↓) go to the table on screen
            past_panel.focus()
        live.display = False
        inspector = self.query_one("#inspector")
        inspector.add_class("-past")
        inspector.border_title = past_panel.title(past, steps[-1], inspector.size.width - BORDER_TITLE_CHROME)
        self.fit_panel()

    def return_to_present(self) -> None:
        panels = self.panel_views(PastPanel)  # none while the app is closing (a late TextArea.Changed)
        if not panels or panels[0].step is None:
            return
        past_panel = panels[0]
        past_panel.step = None
        live = self.query_one("#tensors", TensorTable)
        live.display = True
        if past_panel.has_focus:
            live.focus()
        past_panel.display = False
        inspector = self.query_one("#inspector")
        inspector.remove_class("-past")
        inspector.border_title = "tensors"
        self.fit_panel()

    @on(TextArea.Changed, "#input")
    def _typing(self, event: TextArea.Changed) -> None:
        self.return_to_present()  # any typing returns to the present

    def action_close_details(self) -> None:
        """Escape: the trace view if it is open, else the details view."""
        if any(view.display for view in self.panel_views(TraceView)):
            self.close_trace()
        else:
            self.close_details()

    def close_trace(self) -> None:
        for view in self.panel_views(TraceView):
            view.hide()
        self.fit_panel()
        self.focus_input()
        self.refresh_bindings()

    def close_details(self) -> None:
        self.details_name = None
        for details in self.panel_views(TensorDetails):
            details.display = False
        self.query_one("#inspector").remove_class("-details")
        self.fit_panel()
        self.refresh_bindings()


    def action_toggle_focus(self) -> None:
        past = self.panel_views(PastPanel)
        table = past[0] if past and past[0].display else self.query_one("#tensors", TensorTable)  # on screen
        target = self.query_one(CodeInput) if table.has_focus else table
        target.focus()
