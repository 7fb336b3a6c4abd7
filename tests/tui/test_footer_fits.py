"""The key footer at 80x24 shows whole keys only: one that does not fit is left out, never cut mid-word
(issue 23 §3: `f3 Ea▏`)."""

from __future__ import annotations

import pytest
from textual.widgets._footer import FooterKey
from tests.support.tui import Recorder, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.key_footer import KeyFooter
from gradrepl.tui.messages import KernelReady


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_footer_cuts_no_key_in_half(tmp_path, size):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "history.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await until(pilot, lambda: recorder.of(KernelReady), "the kernel")
        await pilot.pause()
        footer = app.query_one(KeyFooter)
        right = footer.region.right
        shown = [key for key in footer.query(FooterKey) if key.display]
        assert shown, "no key shown"
        cut = [str(key.render()) for key in shown if key.region.right > right or key.region.width == 0]
        assert not cut, f"keys cut at the footer's edge ({right}): {cut}"
        spans = sorted((key.region.x, key.region.right, str(key.render())) for key in shown)
        covered = [(a[2], b[2]) for a, b in zip(spans, spans[1:]) if b[0] < a[1]]
        assert not covered, f"keys drawn over each other (the palette's over the last): {covered}"
