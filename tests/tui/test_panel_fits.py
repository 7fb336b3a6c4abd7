"""At 80x24 the tensor panel takes only the rows it needs and the console gets the rest; after a
resize it lays out again (issue 23 §3)."""

from __future__ import annotations

from tests.support.tui import Recorder

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from tests.support.tui import panel_lines, run_steps, screen_text


async def test_the_panel_takes_only_its_rows_at_80x24_and_relays_out_at_200x50(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "history.jsonl"))
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "a = torch.tensor([1.0, 2.0], requires_grad=True)",
                        "b = (a * a).sum()")
        await pilot.pause()
        inspector, console = app.query_one("#inspector"), app.query_one("#console")
        # two rows, the header and the borders: 5 rows; everything else is the console's
        assert inspector.region.height == 5, (inspector.region, console.region)
        assert console.region.height == 24 - 2 - 5, (inspector.region, console.region)
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        await pilot.pause()
        assert inspector.region.height == 48 and inspector.region.x > 0, inspector.region  # side by side again
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert inspector.region.height == 5, inspector.region


async def test_after_growing_from_80x24_to_200x50_every_row_is_in_view(tmp_path):
    """At 80x24 the panel shows its newest rows; grown to 200x50 it has room for all of them and shows
    them from the first, not the same few with empty rows below."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "history.jsonl"))
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))",
                        "x = torch.randn(5, 3)", "loss = model(x).pow(2).mean()",
                        "a = torch.tensor([1.0, 2.0], requires_grad=True)", "b = (a * a).sum()")
        await pilot.pause()
        assert not any("model[0].weight" in line for line in panel_lines(screen_text(app)))  # scrolled past
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        await pilot.pause()
        lines = panel_lines(screen_text(app))
        names = [line.replace("●", "").split()[0] for line in lines[1:] if line.strip()]
        assert names[:2] == ["model[0].weight", "model[0].bias"] and names[-1] == "b", "\n".join(lines)
