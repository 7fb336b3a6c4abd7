"""The tensor panel in a running Textual app: rows keep their place, only changed cells repaint."""

from __future__ import annotations

from textual.app import App, ComposeResult

from gradrepl.tui.messages import PanelUpdated
from gradrepl.tui.tensors.tensor_table import TensorTable


def row(name, *, value=2.0, grad=None, grad_fn=None, leaf=True, requires_grad=True):
    summary = lambda v: None if v is None else {"shape": [], "values": v, "norm": abs(v)}  # noqa: E731
    return {"name": name, "shape": [], "dtype": "torch.float32", "device": "cpu",
            "requires_grad": requires_grad, "is_leaf": leaf, "grad_fn": grad_fn, "retains_grad": False,
            "version": 0, "changed": True, "grad": summary(grad), "value": summary(value)}


class PanelApp(App):
    def __init__(self) -> None:
        super().__init__()
        self.panel_messages: list[PanelUpdated] = []

    def compose(self) -> ComposeResult:
        yield TensorTable()

    def on_panel_updated(self, message: PanelUpdated) -> None:
        self.panel_messages.append(message)


def cell(table: TensorTable, name: str, column: str) -> str:
    return table.get_cell(name, column).plain


async def test_steps_patch_cells_in_place_and_keep_order():
    app = PanelApp()
    async with app.run_test() as pilot:
        table = app.query_one(TensorTable)
        table.apply_step([row("x"), row("xs[idx]", value=1.0, requires_grad=False)], [])
        table.apply_step([row("y", value=10.0, grad_fn="AddBackward0", leaf=False)], [])
        await pilot.pause()
        assert table.names == ["x", "xs[idx]", "y"]
        assert cell(table, "xs[idx]", "name").strip() == "xs[idx]"  # brackets are text, not markup
        assert table.lit_names() == ["y"]

        touched = []
        original = table.update_cell
        table.update_cell = lambda r, c, v, **kw: (touched.append((r, c)), original(r, c, v, **kw))
        table.apply_step([row("x", grad=7.0)], [])
        await pilot.pause()
        # x: its .grad cell and the marker on its name; y: the highlight of the last step goes out.
        assert set(touched) == {("x", "grad"), ("x", "name")} | {("y", key) for key in
                                                                  ("name", "value", "grad", "grad_fn", "requires_grad",
                                                                   "is_leaf", "shape", "dtype")}
        assert cell(table, "x", "grad") == "7"
        assert cell(table, "x", "name") == "● x"
        assert cell(table, "y", "name") == "  y"
        assert table.names == ["x", "xs[idx]", "y"]

        touched.clear()
        table.apply_step([], ["xs[idx]"])
        await pilot.pause()
        assert table.names == ["x", "y"]
        assert set(touched) == {("x", "grad"), ("x", "name")}  # only x's highlight goes out
        assert [(m.changed, m.removed) for m in app.panel_messages][-2:] == [(["x"], []), ([], ["xs[idx]"])]

