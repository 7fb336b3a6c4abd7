"""`%reset` is a point in the timeline (issue 23 §2): the steps after it show only what lives after it
(%at N, %at -1, the PAST view's states); the steps before it still show what lived then."""

from __future__ import annotations


def names(past) -> list[str]:
    return [row["name"] for row in past.rows]


async def test_steps_after_a_reset_show_only_what_lives_after_it(session):
    await session.execute("b = torch.ones(2, requires_grad=True)")
    await session.execute("m1 = b * 2\nm2 = m1.sum()")
    reset = await session.execute("%reset -f")
    assert reset.step == 3 and session.step == 3 and set(reset.removed) == {"b", "m1", "m2"}
    made = await session.execute("c = torch.zeros(3)")
    assert made.step == 4
    timeline = session.timeline
    assert [step for step, _ in timeline.steps] == [1, 2, 3, 4]
    assert names(timeline.state_at(2)) == ["b", "m1", "m2"]  # before the reset: what lived then
    assert names(timeline.state_at(3)) == [] and timeline.state_at(3).source == "%reset -f"
    assert names(timeline.state_at(4)) == ["c"]
    last = (await session.execute("%at -1")).display
    assert "c" in last and not any(gone in last.split() for gone in ("b", "m1", "m2")), last
    before = (await session.execute("%at 2")).display
    assert "m2" in before, before


async def test_a_kill_while_idle_numbers_from_one_in_a_fresh_timeline(session):
    await session.execute("a = torch.ones(2)")
    removed = await session.kill()
    assert removed == ["a"] and session.step == 0 and session.timeline.steps == []
    again = await session.execute("b = torch.ones(1)")
    assert again.step == 1 and names(session.timeline.state_at(1)) == ["b"]
    assert session.timeline.state_at(1).fresh_kernel
