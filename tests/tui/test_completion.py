"""Tab in the TUI: a menu from the live kernel that narrows as you type, as in ptpython and IPython."""

from __future__ import annotations

from tests.support.tui import Recorder, until

from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.console.completion_menu import CompletionMenu
from gradrepl.tui.messages import StepFinished
from tests.support.tui import run_steps


def menu_items(app: GradReplApp) -> list[str]:
    return [c.text for c in app.screen.query_one(CompletionMenu).shown]


def menu_open(app: GradReplApp) -> bool:
    menus = app.screen.query(CompletionMenu)
    return bool(menus) and menus.first().is_open


async def test_menu_narrows_as_you_type_and_shows_the_signature(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "weights = torch.ones(2)", "weight_decay = 0.1")
        code_input = app.query_one(CodeInput)
        await pilot.press(*"torch.zer", "tab")
        await until(pilot, lambda: menu_open(app), "the completion menu", timeout=20)
        assert code_input.text == "torch.zero"  # what every candidate shares goes in at once
        assert {"zero_", "zeros", "zeros_like"} <= set(menu_items(app))
        await pilot.press("s")
        assert menu_items(app)[:2] == ["zeros", "zeros_like"]
        detail = str(app.screen.query_one("#completion-detail").render())
        assert detail.startswith("function") and "zeros(" in detail
        await pilot.press("_")
        assert menu_items(app) == ["zeros_like"]
        await pilot.press("backspace")
        assert menu_items(app)[:2] == ["zeros", "zeros_like"]
        await pilot.press("down")
        assert "zeros_like(" in str(app.screen.query_one("#completion-detail").render())
        await pilot.press("enter")  # Enter takes the highlighted item; it does not run the line
        assert code_input.text == "torch.zeros_like" and not menu_open(app)
        await pilot.pause(0.2)
        assert len(recorder.of(StepFinished)) == 2
        await pilot.press("ctrl+c", *"weig", "tab")
        await until(pilot, lambda: menu_open(app), "the menu of two names", timeout=20)
        assert code_input.text == "weight" and sorted(menu_items(app)) == ["weight_decay", "weights"]
        await pilot.press("escape")
        assert not menu_open(app) and code_input.text == "weight" and code_input.has_focus
        await pilot.press(*"s.", "tab")
        await until(pilot, lambda: menu_open(app), "the tensor's attributes", timeout=20)
        await pilot.press(*"requires_g")
        # past the capped list the kernel is asked again (for `weights.r`): its answer, narrowed to the
        # word typed since, however long it took
        await until(pilot, lambda: menu_open(app) and menu_items(app) == ["requires_grad", "requires_grad_"],
                    "the menu narrowed to requires_g", timeout=20)
        await pilot.press("(")  # leaving the word closes the menu
        assert not menu_open(app) and code_input.text == "weights.requires_g("


async def test_a_single_match_completes_inline(history):
    recorder = Recorder()
    app = GradReplApp(history=history)
    async with app.run_test(size=(120, 40), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "x = torch.ones(2, requires_grad=True)")
        code_input = app.query_one(CodeInput)
        await pilot.press(*"x.requires_gr", "tab")
        await until(pilot, lambda: code_input.text != "x.requires_gr", "a completion", timeout=20)
        assert code_input.text in ("x.requires_grad", "x.requires_grad_")
        await pilot.pause(0.1)
        assert not menu_open(app) or menu_items(app) == ["requires_grad", "requires_grad_"]
