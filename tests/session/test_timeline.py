"""%at N: every past step rebuilt from stored deltas, over a real 1,000-step session."""

import pytest

from gradrepl.errors import UsageError
from gradrepl.session.timeline import Timeline

STEPS = 1_000


async def test_at_over_a_thousand_step_session(session):
    session.timeline.clear()
    first = session.step + 1
    await session.execute("w = torch.zeros(2, requires_grad=True)")
    for k in range(1, STEPS):
        if k % 100 == 0:
            await session.execute(f"m{k} = torch.full((3,), {k}.0)")  # a new name now and then
        elif k % 10 == 0:
            await session.execute("loss = (w * 3).sum()\nloss.backward()")
        else:
            await session.execute("with torch.no_grad():\n    w.add_(1)\n")
    last = session.step
    assert last - first + 1 == STEPS
    # after step first + 5: w was bumped five times, no gradient yet, no loss
    early = session.timeline.state_at(first + 5)
    rows = {row["name"]: row for row in early.rows}
    assert set(rows) == {"w"} and rows["w"]["value"]["values"] == [5.0, 5.0] and rows["w"]["grad"] is None
    assert early.changed == {"w"}
    # after the 10th step: the first backward, loss's graph already freed
    tenth = session.timeline.state_at(first + 10)
    rows = {row["name"]: row for row in tenth.rows}
    assert rows["w"]["grad"]["values"] == [3.0, 3.0]
    assert rows["loss"]["saved_bytes"] == 0 and tenth.changed == {"w", "loss"}
    # as text, in the middle of the session, with the names made before it and not after
    middle = await session.execute(f"%at {first + 500}")
    assert middle.error is None
    lines = middle.display.splitlines()
    assert lines[0].startswith(f"after step {first + 500} of {last}")
    assert any(line.split()[:1] == ["m400"] for line in lines) and not any("m600" in line for line in lines)
    assert "graph holds" in lines[1]
    now = session.timeline.state_at(last)
    assert {row["name"] for row in now.rows} == set(session.tensors)
    for row in now.rows:
        assert row["value"] == session.tensors[row["name"]]["value"]
    back = await session.execute("%at -1")  # the last step (%at takes no number of its own)
    assert back.display.splitlines()[0].startswith(f"after step {session.step} of {session.step}")
    assert (await session.execute("%at -2")).display.startswith(f"after step {session.step - 1} ")


async def test_at_errors_are_words(session):
    session.timeline.clear()
    assert "needs a step number" in (await session.execute("%at soon")).error.message
    assert "no steps yet" in (await session.execute("%at 1")).error.message
    await session.execute("x = 1")
    assert "not in the timeline" in (await session.execute("%at 99999")).error.message


def test_memory_is_bounded_by_folding_old_deltas():
    timeline = Timeline(max_rows=100)
    for step in range(1, 1001):
        timeline.record(step, f"x{step % 7} = ...", [{"name": f"x{step % 7}", "value": {"values": step}}], [])
    assert len(timeline.steps) == 100 and timeline.base_step == 900
    past = timeline.state_at(950)
    assert {row["name"]: row["value"]["values"] for row in past.rows} == {f"x{s % 7}": s for s in range(944, 951)}
    with pytest.raises(UsageError, match="steps 901 to 1000"):
        timeline.state_at(10)
