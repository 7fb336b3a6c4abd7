"""The key footer shows the newest bindings after a burst of changes, rebuilt once for the burst."""

from __future__ import annotations

from textual.app import App

from gradrepl.tui.key_footer import KeyFooter


class Keys(App):
    BINDINGS = [("f5", "check", "Check task"), ("f9", "frames", "Torch frames")]

    def __init__(self) -> None:
        super().__init__()
        self.shown = {"check"}
        self.rebuilds = 0

    def compose(self):
        yield KeyFooter()

    def check_action(self, action: str, parameters) -> bool:
        return action in self.shown

    def footer_words(self) -> str:
        return " ".join(str(key.render()) for key in self.query_one(KeyFooter).children)


async def test_a_burst_of_binding_changes_rebuilds_the_footer_once_with_the_last_of_them(monkeypatch):
    app = Keys()
    async with app.run_test(size=(80, 5)) as pilot:
        await pilot.pause()
        assert "Check task" in app.footer_words() and "Torch frames" not in app.footer_words()
        rebuild = KeyFooter.recompose

        async def counted(footer):
            app.rebuilds += 1
            await rebuild(footer)

        monkeypatch.setattr(KeyFooter, "recompose", counted)
        for shown in ({"frames"}, {"check"}, {"check", "frames"}):  # as busy, finished, idle do in one step
            app.shown = shown
            app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert app.rebuilds == 1
        assert "Check task" in app.footer_words() and "Torch frames" in app.footer_words()
        app.shown = set()  # a change after the rebuild gets a rebuild of its own
        app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert app.rebuilds == 2 and "Check task" not in app.footer_words()


async def test_a_burst_that_ends_with_the_keys_shown_before_keeps_the_footer_as_it_is():
    """A quick step turns Interrupt on and off before the footer's rebuild runs: the same keys stay on
    screen, not mounted again (a rebuild holds every repaint of the screen, the panel's row too)."""
    app = Keys()
    async with app.run_test(size=(80, 5)) as pilot:
        await pilot.pause()
        keys_before = list(app.query_one(KeyFooter).children)
        for shown in ({"check", "frames"}, {"check"}):  # busy, then idle again
            app.shown = shown
            app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert list(app.query_one(KeyFooter).children) == keys_before
        assert all(key.is_attached for key in keys_before)
        app.shown = {"check", "frames"}  # keys that did change are shown
        app.refresh_bindings()
        await pilot.pause()
        await pilot.pause()
        assert "Torch frames" in app.footer_words()
