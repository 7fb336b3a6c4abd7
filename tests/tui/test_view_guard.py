"""The guard every view's render of kernel data goes through (tui/view_guard.py), on its own.

With the client's reply schema in front of it, no reply a real kernel can send reaches a view it
breaks any more (test_tui_error_replies.py drives those end to end); this drives the guard with a
render that fails as a view would, in a running app.
"""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import Static
from tests.support.tui import Recorder

from gradrepl.tui.view_guard import ViewFailed, failure_words, shows_reply


class NodeView(Static):
    closed = False

    @shows_reply("the node view", on_failure="close", default="nothing")
    def show_node(self, node: dict) -> str:
        text = ", ".join(grad["shape"] for grad in node["grad_outputs"])  # None when the node never ran
        self.update(text)
        return text

    def close(self) -> None:
        self.closed = True
        self.display = False


class OneView(App):
    def compose(self):
        yield NodeView(id="view")


async def test_a_render_that_raises_is_said_closes_its_view_and_the_app_lives():
    recorder = Recorder()
    app = OneView()
    async with app.run_test(message_hook=recorder) as pilot:
        view = app.query_one(NodeView)
        assert view.show_node({"grad_outputs": [{"shape": "2"}]}) == "2"
        assert view.show_node({"grad_outputs": None}) == "nothing"
        await pilot.pause()
        assert app.is_running and view.closed and not view.display
        failed = recorder.of(ViewFailed)  # seen once per node it bubbles through, up to the app
        assert {(m.view, m.reason) for m in failed} == {("the node view", "TypeError: 'NoneType' object is not iterable")}
        words = failure_words(failed[0].view, failed[0].reason)
        assert words.startswith("The node view could not show this (TypeError") and "untouched" in words


def test_only_synchronous_renders_are_guarded():
    with pytest.raises(TypeError, match="synchronous"):
        @shows_reply("an async view")
        async def render(self):
            pass
