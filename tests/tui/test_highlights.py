"""A step's highlight points at what it changed, in view at 80x24 and 120x40 (issue 23 §3): after
opt.step() the changed values are on screen, not behind ▶; after backward the row says its graph was freed."""

from __future__ import annotations

import pytest

from tests.support.tui import Recorder, cell_text, panel_lines, run_steps, screen_text

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp


def panel_row(app, name: str) -> str:
    return next(line for line in panel_lines(screen_text(app)) if line[2:].startswith(name + " "))


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_after_opt_step_the_changed_values_are_in_view(size, tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        # Seeded, and a weight of 0.5 everywhere that the step moves to 0.47..0.53: the value cell's first
        # characters read differently after it, whatever the other parameters drew.
        await run_steps(pilot, recorder, "torch.manual_seed(0)",
                        "model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))",
                        "_ = nn.init.constant_(model[0].weight, 0.5)",
                        "opt = torch.optim.SGD(model.parameters(), lr=1.0)",
                        "loss = model(torch.ones(2, 3)).pow(2).sum()", "loss.backward()")
        before = panel_row(app, "model[0].weight")
        table = app.query_one("#tensors")
        assert cell_text(table, "model[0].weight", "value").startswith("[[0.5, 0.5")
        await run_steps(pilot, recorder, "opt.step()")
        await pilot.pause()
        header_line = panel_lines(screen_text(app))[0]
        header = header_line.split()
        assert "value" in header, header
        after = panel_row(app, "model[0].weight")
        assert after.startswith("● ") and after != before, (before, after)
        shown = after[header_line.index("value"):][:5]  # the value cell as the screen shows it
        assert shown == "[[0.4" == cell_text(table, "model[0].weight", "value")[:5], (header_line, after)
        await run_steps(pilot, recorder, "model[0].weight.grad = None")  # a change among the facts
        await pilot.pause()
        assert panel_lines(screen_text(app))[0].split()[:3] == ["name", "req", "leaf"]  # back to the first


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_after_backward_the_row_says_its_graph_was_freed(size, tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "a = torch.tensor([1.0, 2.0], requires_grad=True)", "b = (a * a).sum()")
        assert "graph freed" not in panel_row(app, "b")
        await run_steps(pilot, recorder, "b.backward()")
        await pilot.pause()
        assert "graph freed" in panel_row(app, "b"), panel_lines(screen_text(app))
        await run_steps(pilot, recorder, "b = (a * a).sum()")  # a new graph holds its tensors again
        await pilot.pause()
        assert "graph freed" not in panel_row(app, "b") and "SumBackward0" in panel_row(app, "b")
