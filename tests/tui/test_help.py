"""`obj?`, `obj??` and help(obj) open a scrollable help view instead of filling the console."""

from __future__ import annotations

from tests.support.tui import Recorder, until

from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.console.help_view import HelpView
from tests.support.tui import run_steps


def help_shown(app: GradReplApp) -> bool:
    """The help view is on top and its page is composed."""
    return isinstance(app.screen, HelpView) and bool(app.screen.query("#help-text"))


def page_text(app: GradReplApp) -> str:
    return str(app.screen.query_one("#help-text").render())


async def test_question_mark_opens_a_scrollable_help_view(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "torch.ones?")
        await until(pilot, lambda: help_shown(app), "the help view")
        assert "torch.ones" in str(app.screen.query_one("#help-title").render())
        assert "Returns a tensor filled" in page_text(app)
        page = app.screen.query_one("#help-page")
        await until(pilot, lambda: page.max_scroll_y > 0, "the page to be laid out")
        assert page.scroll_y == 0
        await pilot.press("pagedown")
        assert page.scroll_y > 0
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpView) and app.query_one(CodeInput).has_focus
        log = "\n".join(line.text for line in app.query_one(ConsoleLog).lines)
        assert "opened in the help view" in log and "Returns a tensor filled" not in log


async def test_double_question_mark_shows_source_and_help_call_opens_the_same_view(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, 'def scale(t):\n"""Twice t."""\nreturn t * 2\n', "scale??")
        await until(pilot, lambda: help_shown(app), "the help view")
        assert "return t * 2" in page_text(app)
        await pilot.press("q")
        await run_steps(pilot, recorder, "help(scale)")
        await until(pilot, lambda: help_shown(app), "help()'s view")
        assert "Twice t." in page_text(app)


async def test_help_text_with_escape_sequences_shows_them_instead_of_obeying_them(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, 'def loud():\n"""\\x1b[2J cleared?"""\n', "loud?")
        await until(pilot, lambda: help_shown(app), "the help view")
        assert "\\x1b[2J cleared?" in page_text(app) and "\x1b" not in page_text(app)
