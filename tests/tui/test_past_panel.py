"""The PAST view (F3) at 80x24 and 120x40: the live panel's columns (.grad in view beside long names),
→ scrolls the past table itself, and the border says whole how to leave (issue 23 §3)."""

from __future__ import annotations

import pytest

from tests.support.tui import SIZES, Recorder, cell_text, run_steps, running_app, screen_text

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp


def past_box(screen: str) -> tuple[str, list[str]]:
    """The PAST panel's border title line and its lines inside, read off the screen."""
    lines = screen.splitlines()
    top = next(i for i, line in enumerate(lines) if "PAST ·" in line)
    left = lines[top].rindex("╭", 0, lines[top].index("PAST ·"))
    inside = []
    for line in lines[top + 1:]:
        part = line[left:]
        if part.startswith("╰"):
            break
        inside.append(part.strip("│"))
    return lines[top][left:], inside


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_the_past_shows_the_live_columns_scrolls_itself_and_says_how_to_leave(size, tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))",
                        "loss = model(torch.randn(5, 3)).pow(2).mean()", "loss.backward()", "n = 1")
        await pilot.press("f2", "f3")  # the keys on the panel, then one step back: after backward
        await pilot.pause()
        title, inside = past_box(screen_text(app))
        assert "F3/F4 · type to return" in title, title
        header = inside[0].split()
        assert header[:5] == ["name", "req", "leaf", "grad_fn", ".grad"], inside
        weight = next(line for line in inside if "model[0].weight" in line)
        assert "None" not in weight and "[[" in weight, inside  # its .grad, in view
        await pilot.press("right")
        await pilot.pause()
        _, scrolled = past_box(screen_text(app))
        assert scrolled[0].startswith("◀") and scrolled[0].split()[2] == "leaf", scrolled  # req scrolled off
        await pilot.press("f4", "f4")  # the last step, then the present: the live table is as it was
        await pilot.pause()
        assert "PAST ·" not in screen_text(app)
        assert app.query_one("#tensors").first_column == 0


@SIZES
async def test_the_past_says_graph_freed_where_the_live_panel_did(size, tmp_path):
    """After b.backward() the live panel says `graph freed` for b; F3 at that step says the same (issue 23)."""
    async with running_app(tmp_path, size) as (app, pilot, recorder):
        await run_steps(pilot, recorder, "a = torch.tensor([1.0, 2.0], requires_grad=True)",
                        "b = (a * a).sum()", "b.backward()", "n = 1")
        live = app.query_one("#tensors")
        assert cell_text(live, "b", "grad_fn") == "graph freed"
        await pilot.press("f2", "f3")  # one step back: after b.backward()
        await pilot.pause()
        past = app.query_one("#past")
        assert past.step == 3 and cell_text(past, "b", "grad_fn") == "graph freed"
        await pilot.press("f3")  # before the backward: its graph still held what it saved
        await pilot.pause()
        assert past.step == 2 and cell_text(past, "b", "grad_fn") == "SumBackward0"


@SIZES
async def test_the_past_after_a_reset_shows_only_what_lives_after_it(size, tmp_path):
    """%reset is a point in the timeline: F3 at it and after it shows only what lives after it, before it
    what lived then (issue 23 §2); a restart's first step says a fresh kernel began there."""
    async with running_app(tmp_path, size) as (app, pilot, recorder):
        await run_steps(pilot, recorder, "b = torch.ones(2, requires_grad=True)", "m1 = b * 2", "m2 = m1.sum()",
                        "%reset -f", "c = torch.zeros(3)", "n = 1")
        await pilot.press("f2", "f3")  # after c = torch.zeros(3)
        await pilot.pause()
        past = app.query_one("#past")  # composed on the first F3
        assert past.step == 5 and past.names == ["c"], past.names
        await pilot.press("f3")  # the reset itself
        await pilot.pause()
        assert past.step == 4 and past.names == []
        assert "after step 4 of 6" in past_box(screen_text(app))[0]
        await pilot.press("f3")  # before it: what lived then
        await pilot.pause()
        assert past.step == 3 and past.names == ["b", "m1", "m2"]
        await pilot.press("escape")
        await run_steps(pilot, recorder, "%restart -f", "d = torch.ones(1)", "e = d + 1")
        await pilot.press("f2", "f3")
        await pilot.pause()
        title, _ = past_box(screen_text(app))
        assert past.step == 1 and past.names == ["d"] and "PAST · restart, step 1 of 2 · F3/F4 · type to return" in title, title
