"""The tensor panel on screen: the four facts in view, every name, the newest row, whole-column scrolling."""

from __future__ import annotations

import contextlib

import pytest
from textual.app import App, ComposeResult

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.tensors.tensor_table import TensorTable
from tests.support.tui import Recorder, cell_text, lit_names, panel_lines, screen_text, submit_steps, until


def row(name, *, value=2.0, grad=None, grad_fn=None, leaf=True, requires_grad=True, aliases=()):
    summary = lambda v: None if v is None else {"shape": [], "values": v, "norm": abs(v)}  # noqa: E731
    return {"name": name, "aliases": list(aliases), "shape": [], "dtype": "torch.float32", "device": "cpu",
            "requires_grad": requires_grad, "is_leaf": leaf, "grad_fn": grad_fn, "retains_grad": False,
            "version": 0, "changed": True, "grad": summary(grad), "value": summary(value)}


class PanelApp(App):
    def compose(self) -> ComposeResult:
        yield TensorTable()

def line_of(lines: list[str], name: str) -> str:
    """The panel line of `name`, without the two cells of the changed-marker before it."""
    found = [line[2:] for line in lines if line[2:].startswith(name + " ") or line[2:] == name]
    assert found, f"{name} is not on screen:\n" + "\n".join(lines)
    return found[0]


@contextlib.asynccontextmanager
async def tutor(size: tuple[int, int], *sources: str):
    """The whole app on a real kernel at `size`, after running `sources`: (app, pilot, recorder)."""
    recorder = Recorder()
    app = GradReplApp(history=History(None))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await submit_steps(pilot, recorder, *sources)
        yield app, pilot, recorder


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_four_facts_are_on_screen(size):
    async with tutor(size, "model = nn.Linear(3, 1)", "loss = model(torch.ones(3)).sum()",
                     "loss.backward()") as (app, pilot, _):
        app.query_one(TensorTable).focus()
        await pilot.press("home")
        lines = panel_lines(screen_text(app))
        header = lines[0].split()
        assert header[:5] == ["name", "req", "leaf", "grad_fn", ".grad"]
        assert line_of(lines, "model.weight").split()[1:5] == ["yes", "yes", "—", "[[1,"]
        assert line_of(lines, "model.bias").split()[1:5] == ["yes", "yes", "—", "[1]"]
        assert line_of(lines, "loss").split()[1:6] == ["yes", "no", "graph", "freed", "None"]  # backward freed it


async def test_the_newest_tensor_is_on_screen_at_80x24():
    async with tutor((80, 24), "xs = [torch.ones(1) for _ in range(12)]", "newest = torch.zeros(1)") as (app, _, _):
        lines = panel_lines(screen_text(app))
        assert line_of(lines, "newest").split()[1:3] == ["no", "yes"]
        assert any("changed" not in line and "xs[" in line for line in lines)


async def test_a_change_below_the_view_is_counted_when_the_learner_steers():
    async with tutor((80, 24), "xs = [torch.ones(1) for _ in range(12)]") as (app, pilot, recorder):
        app.query_one(TensorTable).focus()
        await pilot.press("home")
        await submit_steps(pilot, recorder, "xs[10].add_(1)\nxs[11].add_(1)")
        lines = panel_lines(screen_text(app))
        assert "2 changed below ↓" in lines[-1]
        assert line_of(lines, "xs[0]")


async def test_aliases_are_shown_beside_the_name():
    async with tutor((150, 45), "model = nn.Sequential(nn.Linear(2, 2))", "layer = model[0]") as (app, pilot, _):
        lines = panel_lines(screen_text(app))
        assert line_of(lines, "model[0].weight").startswith("model[0].weight = layer.weight ")
        await app.show_details("model[0].weight")
        await pilot.pause()
        await until(pilot, lambda: "also named  layer.weight" in screen_text(app), "the details to list the alias")


async def test_sideways_scroll_moves_whole_columns_and_keeps_the_name():
    app = PanelApp()
    async with app.run_test(size=(40, 10)) as pilot:
        table = app.query_one(TensorTable)
        table.apply_step([row("x", grad_fn="AddBackward0", leaf=False, grad=7.0)], [])
        table.focus()
        await pilot.pause()
        first = screen_text(app).splitlines()
        assert first[0].split()[:4] == ["name", "req", "leaf", "grad_fn"] and first[0].endswith("▶")
        await pilot.press("right")
        header = screen_text(app).splitlines()[0].split()
        assert header[:4] == ["◀", "name", "leaf", "grad_fn"]
        assert screen_text(app).splitlines()[1].split()[:3] == ["●", "x", "no"]
        await pilot.press("right", "left", "left")
        assert screen_text(app).splitlines()[0].split()[:2] == ["name", "req"]


async def test_steps_patch_rows_in_place_and_keep_order():
    app = PanelApp()
    async with app.run_test() as pilot:
        table = app.query_one(TensorTable)
        table.apply_step([row("x"), row("xs[idx]", value=1.0, requires_grad=False)], [])
        table.apply_step([row("y", value=10.0, grad_fn="AddBackward0", leaf=False)], [])
        await pilot.pause()
        assert table.names == ["x", "xs[idx]", "y"]
        assert cell_text(table, "xs[idx]", "name") == "xs[idx]"  # brackets are text, not markup
        assert lit_names(table) == ["y"]

        patched = table.apply_step([row("x", grad=7.0)], [])
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert lines[1].split()[:6] == ["●", "x", "yes", "yes", "—", "7"]
        assert lines[3].split()[:2] == ["y", "yes"]  # the last step's light went out
        assert table.names == ["x", "xs[idx]", "y"]

        dropped = table.apply_step([], ["xs[idx]"])
        await pilot.pause()
        assert table.names == ["x", "y"]
        assert (patched, dropped) == ((["x"], []), ([], ["xs[idx]"]))


async def test_a_row_that_cannot_be_inspected_says_why():
    app = PanelApp()
    async with app.run_test(size=(120, 10)) as pilot:
        broken = dict(row("odd"), value=None, shape=None, inspect_error="cannot be inspected: RuntimeError: no")
        app.query_one(TensorTable).apply_step([broken, row("fine")], [])
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert "cannot be inspected: RuntimeError: no" in lines[1] and lines[2].split()[1] == "fine"


async def test_a_long_name_gives_way_to_a_whole_grad_fn_and_grad():
    app = PanelApp()
    async with app.run_test(size=(58, 8)) as pilot:  # the panel's width in a 120-column terminal
        app.query_one(TensorTable).apply_step([
            row("encoder.layers[0].norm.weight", aliases=["norm.weight", "p"], grad=0.5),
            row("out", grad_fn="NativeLayerNormBackward0", leaf=False),
        ], [])
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert lines[0].split()[:5] == ["name", "req", "leaf", "grad_fn", ".grad"]
        assert lines[1].split()[2:6] == ["yes", "yes", "—", "0.5"] and "…" in lines[1].split()[1]
        assert lines[2].split()[1:6] == ["out", "yes", "no", "NativeLayerNormBackward0", "None"]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_second_backward_says_in_the_grad_row_what_it_added(tmp_path, size):
    """The accumulation quick check: without zero_grad, .grad holds both backward calls' gradients."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        table = app.query_one(TensorTable)
        await submit_steps(pilot, recorder, "x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x",
                        "y.backward(retain_graph=True)")
        assert cell_text(table, "x", "grad") == "7"  # the first backward wrote 7
        await submit_steps(pilot, recorder, "y.backward()")
        step = app.session.step
        assert cell_text(table, "x", "grad") == f"14 (+7 at In [{step}])"
        assert f"14 (+7 at In [{step}])" in line_of(panel_lines(screen_text(app)), "x")  # in view: it changed
        await submit_steps(pilot, recorder, "z = x * 1")  # a later step leaves x's row as it was
        assert cell_text(table, "x", "grad") == f"14 (+7 at In [{step}])"
        await submit_steps(pilot, recorder, "x.grad = None", "(x * 5).backward()")
        assert cell_text(table, "x", "grad") == "5"  # emptied first: written, not added
