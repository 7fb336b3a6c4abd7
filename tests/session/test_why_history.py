"""Why .grad is None, computed from what happened to that tensor (the session's timeline), in the
learner's names: one test per cause, a real kernel behind each (issue 23 §2)."""

from __future__ import annotations

import pytest
from tests.support.tui import Recorder, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.messages import DetailsLoaded
from tests.support.tui import run_steps

MODEL = ("model = torch.nn.Linear(2, 1)",
         "opt = torch.optim.SGD(model.parameters(), lr=0.1)",
         "xs = torch.ones(4, 2)",
         "loss = model(xs).pow(2).mean()",
         "loss.backward()")

CAUSES = {
    # name: (steps, the tensor asked about, words that must be said, words that must not)
    "zero_grad": (MODEL + ("opt.zero_grad()",), "model.weight",
                  ["opt.zero_grad()", "In [6]", "loss.backward()", "In [5]", "model.weight.grad"],
                  ["has not yet run"]),
    "set_to_none": (("w = torch.ones(2, requires_grad=True)", "(w * 3).sum().backward()", "w.grad = None"), "w",
                    ["w.grad = None", "In [3]", "In [2]"], ["has not yet run"]),
    "never_backward": (("w = torch.ones(2, requires_grad=True)", "total = (w * 3).sum()"), "w",
                       ["no backward() has run", "total.backward()"], []),
    "not_leaf": (("w = torch.ones(2, requires_grad=True)", "pred = w * 3", "pred.sum().backward()"), "pred",
                 ["pred is not a leaf", "pred.retain_grad()", "w.grad"], ["x.grad", "y."]),
    "no_grad_path": (("w = torch.ones(2, requires_grad=True)", "v = torch.ones(2, requires_grad=True)",
                      "(v * 2).sum().backward()"), "w",
                     ["In [3]", "not computed from w"], ["has not yet run"]),
    "requires_grad_false": (("c = torch.ones(2)",), "c", ["c.requires_grad is False", "c.requires_grad_()"], []),
    "no_grad": (("w = torch.ones(2, requires_grad=True)", "with torch.no_grad():\n    z = w * 2"), "z",
                ["torch.no_grad()", "In [2]", "z"], ["create it with requires_grad=True"]),
}


@pytest.mark.parametrize("cause", list(CAUSES))
async def test_why_grad_is_none_says_what_happened_to_that_tensor(session, cause):
    steps, name, said, unsaid = CAUSES[cause]
    for source in steps:
        result = await session.execute(source)
        assert result.error is None, (source, result.error)
    why = await session.why_grad_is_none(name)
    assert why, f"{name}: no why-line"
    for words in said:
        assert words in why, f"{cause}: {words!r} not in {why!r}"
    for words in unsaid:
        assert words not in why, f"{cause}: {words!r} in {why!r}"


async def test_details_say_zero_grad_emptied_the_weight_at_80x24(tmp_path):
    """The row's details in the TUI show the timeline's cause, not 'backward() has not yet run'."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "history.jsonl"))
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, *MODEL, "opt.zero_grad()")
        await app.show_details("model.weight")  # what Enter on its row does
        await until(pilot, lambda: any(m.name == "model.weight" for m in recorder.of(DetailsLoaded)),
                    "model.weight's details")
        why = str(app.query_one("#details-why").render())
    assert "zero_grad()" in why and "has not yet run" not in why, why


STAND_INS = ("y.", "(y)", "e.g. x", "x.grad")


@pytest.mark.parametrize("steps, said", [
    (("w = torch.ones(2, requires_grad=True)", "pred = w * 3", "pred.backward()"),
     ["pred.sum().backward()", "pred.backward(torch.ones_like(pred))"]),
    (("c = torch.ones(2)", "total = (c * 2).sum()", "total.backward()"), ["total has no grad_fn", "total was computed from"]),
])
async def test_error_explanations_name_the_learners_tensors(session, steps, said):
    """A non-scalar backward, a backward without a graph: the learner's tensors, never a stand-in y or x."""
    for source in steps[:-1]:
        assert (await session.execute(source)).error is None
    error = (await session.execute(steps[-1])).error
    assert error is not None and error.explanation
    for words in said:
        assert words in error.explanation, (words, error.explanation)
    assert not [stand_in for stand_in in STAND_INS if stand_in in error.explanation], error.explanation


async def test_the_why_line_is_in_view_without_scrolling_at_80x24(tmp_path):
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "history.jsonl"))
    async with app.run_test(size=(80, 24), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, *MODEL, "opt.zero_grad()")
        await app.show_details("model.weight")
        await until(pilot, lambda: any(m.name == "model.weight" for m in recorder.of(DetailsLoaded)),
                    "model.weight's details")
        await pilot.pause()
        details, why = app.query_one("#details"), app.query_one("#details-why")
        assert details.scroll_y == 0
        assert why.region.y < details.region.bottom and why.region.height, (why.region, details.region)
