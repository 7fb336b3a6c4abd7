"""The console keeps its end in view when the row details open under it at 80x24 (or beside it at
120x40): the last steps, which the why-line refers to, stay on screen, unless the learner scrolled the
console up themselves (issue 23 §3)."""

from __future__ import annotations

from tests.support.tui import SIZES, run_steps, running_app, screen_text, until

from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.messages import DetailsLoaded

STEPS = ("torch.manual_seed(0)", "model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))",
         "opt = torch.optim.SGD(model.parameters(), lr=0.1)", "x = torch.randn(5, 3)",
         "loss = model(x).pow(2).mean()", "loss.backward()", "opt.step()", "opt.zero_grad()")


async def open_details(pilot, recorder, name: str) -> None:
    loaded = len(recorder.of(DetailsLoaded))
    await pilot.app.show_details(name)
    await until(pilot, lambda: len(recorder.of(DetailsLoaded)) > loaded, "the details")
    await pilot.pause()
    await pilot.pause()


@SIZES
async def test_the_console_keeps_its_end_in_view_when_the_details_open(size, tmp_path):
    async with running_app(tmp_path, size) as (app, pilot, recorder):
        await run_steps(pilot, recorder, *STEPS)
        await open_details(pilot, recorder, "model[0].weight")
        log = app.query_one(ConsoleLog)
        assert log.is_vertical_scroll_end, (log.scroll_y, log.max_scroll_y)
        assert "In [8]: opt.zero_grad()" in screen_text(app), screen_text(app)


async def test_a_console_the_learner_scrolled_up_stays_where_they_left_it(tmp_path):
    async with running_app(tmp_path, (80, 24)) as (app, pilot, recorder):
        await run_steps(pilot, recorder, *STEPS)
        log = app.query_one(ConsoleLog)
        log.scroll_home(animate=False)
        await pilot.pause()
        await open_details(pilot, recorder, "model[0].weight")
        assert log.scroll_y == 0


@SIZES
async def test_each_step_is_drawn_at_the_end_before_and_after_the_log_outgrows_its_window(size, tmp_path):
    """A write lays nothing out (ConsoleLog.virtual_size): its lines are still drawn where they land, the
    log follows its end once longer than its window, and the scrollbar says so."""
    async with running_app(tmp_path, size) as (app, pilot, recorder):
        log = app.query_one(ConsoleLog)
        await run_steps(pilot, recorder, "a = torch.tensor(1.0)")
        await pilot.pause()
        assert "In [1]: a = torch.tensor(1.0)" in screen_text(app)
        await run_steps(pilot, recorder, "print('\\n'.join(f'line {i}' for i in range(60)))", "b = a * 2")
        await pilot.pause()
        await pilot.pause()
        text = screen_text(app)
        assert "line 59" in text and "In [3]: b = a * 2" in text, text
        assert log.is_vertical_scroll_end and log.max_scroll_y > 0, (log.scroll_y, log.max_scroll_y)
        bar = log.vertical_scrollbar
        assert (bar.window_virtual_size, bar.position) == (log.virtual_size.height, log.scroll_y)
