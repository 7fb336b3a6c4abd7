"""Magic output in the console at 80x24 and 120x40 (a 57-column log): drawn to the console's width, a
table's row on one line, never wrapped into two or three (issue 23 §3)."""

from __future__ import annotations

import re

import pytest

from tests.support.tui import Recorder, run_steps

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.messages import StepFinished

SETUP = ("model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))", "x = torch.randn(5, 3)",
         "loss = model(x).pow(2).mean()", "loss.backward()",
         "a = torch.tensor([1.0, 2.0], requires_grad=True)", "w = torch.randn(3, 3, requires_grad=True)",
         "b = (a * a).sum()", "c = (w.exp() * w.sin() + w ** 3).sum()")


async def display(pilot, recorder, source: str) -> list[str]:
    await run_steps(pilot, recorder, source)
    if pilot.app.focused is not None and pilot.app.focused.id != "input":
        await pilot.press("escape")  # %trace's view took the keys
    return recorder.of(StepFinished)[-1].result.display.splitlines()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_magic_output_is_drawn_to_the_console_a_row_a_line(size, tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=size, message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, *SETUP)
        log = app.query_one(ConsoleLog)
        width = app.session.width
        assert log.scrollable_content_region.width - 1 <= width <= log.scrollable_content_region.width

        at = await display(pilot, recorder, "%at 4")
        header = next(i for i, line in enumerate(at) if line.split()[:1] == ["name"])
        rows = at[header + 1: header + 7]
        assert [row.split()[1] for row in rows][:4] == ["model[0].weight", "model[0].bias", "model[2].weight",
                                                        "model[2].bias"] and "loss" in rows[-1], at
        assert at[header + 7].strip().startswith("(") or size[0] > 100, at  # what was left out, said

        trace = await display(pilot, recorder, "%trace c")
        trace = trace[:next((i for i, line in enumerate(trace) if line.startswith("gradient arriving")), len(trace))]
        nodes = [line for line in trace if re.match(r"\s+(\d+|-)  \w", line)]
        assert len(nodes) == sum(1 for line in trace if "Backward" in line or "AccumulateGrad" in line), trace

        check = await display(pilot, recorder, "%check c")
        for symbol in ("w_0_0", "w_2_2"):
            row = next(line for line in check if line.startswith(symbol))
            assert row.endswith("after backward"), check  # the verdict on the row's own line

        listing = await display(pilot, recorder, "%help")
        assert len(listing) == len(app.session.magics.TABLE) + 2, listing  # a line per command

        for lines in (at, trace, check, listing):
            assert max(map(len, lines)) <= width, "\n".join(lines)
