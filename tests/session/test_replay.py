"""Session.replay: a script's steps sent ahead of their replies, each result as execute() would have given it."""

import pytest

from gradrepl.session.session import REPLAY_AHEAD


async def test_the_table_at_each_result_is_the_one_after_that_step(session):
    steps = [(line, f"x = torch.zeros({line}); y = x + {line}") for line in range(1, 21)]
    seen = []
    async for result in session.replay(steps, "script.py"):
        seen.append((result.step, session.tensors["x"]["shape"], session.tensors["y"]["value"]["values"][0]))
    first = seen[0][0]
    assert seen == [(first + index, [line], float(line)) for index, (line, _) in enumerate(steps)]
    past = session.timeline.state_at(first + 4)
    assert (past.source, [row["shape"] for row in past.rows if row["name"] == "x"]) == (steps[4][1], [[5]])
    assert session.history[-20:] == [source for _, source in steps]


async def test_stop_on_error_runs_nothing_after_the_failing_step(session):
    steps = [(1, "n = 1"), (2, "n += 1; 1/0"), (3, "n += 10"), (4, "n += 100")]
    results = [result async for result in session.replay(steps, "script.py", stop_on_error=True)]
    assert [result.error.type if result.error else None for result in results] == [None, "ZeroDivisionError"]
    assert (await session.inspect("n"))["value"] == 2
    # Steps 3 and 4 were sent ahead and skipped by the kernel: their numbers and history are given back.
    assert session.step == results[-1].step and session.history[-2:] == ["n = 1", "n += 1; 1/0"]


async def test_without_stop_on_error_every_step_runs(session):
    steps = [(1, "n = 1"), (2, "1/0"), (3, "n += 10")]
    results = [result async for result in session.replay(steps, "script.py")]
    assert [result.error.type if result.error else None for result in results] == [None, "ZeroDivisionError", None]
    assert (await session.inspect("n"))["value"] == 11
    assert results[1].error.frames[-1]["filename"] == "script.py" and results[1].error.frames[-1]["lineno"] == 2


async def test_a_caller_that_stops_reading_keeps_the_steps_already_sent_and_sends_no_more(session):
    steps = [(line, f"import time; time.sleep(0.01); n = {line}") for line in range(1, 3 * REPLAY_AHEAD)]
    replay = session.replay(steps, "script.py")
    async for first in replay:
        break
    await replay.aclose()
    # Steps 2 to REPLAY_AHEAD were in the kernel's queue when the caller left: they ran, and count.
    assert (await session.execute("n")).result == str(REPLAY_AHEAD)
    last_sent = first.step + REPLAY_AHEAD - 1
    assert session.step == last_sent + 1 and session.history[-2] == steps[REPLAY_AHEAD - 1][1]
    assert session.timeline.state_at(last_sent).source == steps[REPLAY_AHEAD - 1][1]


@pytest.mark.parametrize("stop_on_error", [False, True])
async def test_the_steps_sent_after_a_crash_run_again_in_the_fresh_kernel(session, stop_on_error):
    steps = [(1, "a = 1"), (2, "import os; os._exit(5)"), (3, "b = 'a' in dir()"), (4, "c = b")]
    results = [result async for result in session.replay(steps, "script.py", stop_on_error)]
    assert results[1].error.type == "KernelLost" and results[1].kernel_event
    if stop_on_error:
        assert len(results) == 2 and session.step == results[1].step
    else:
        assert [result.step - results[0].step for result in results] == [0, 1, 2, 3]
        assert results[2].error is None and results[3].error is None
        assert (await session.inspect("c"))["value"] is False
        assert session.history[-4:] == [source for _, source in steps]


@pytest.mark.parametrize("shadows", [True, False])
async def test_a_replay_without_shadows_runs_the_same_but_leaves_nothing_to_check(session, shadows):
    steps = [(1, "x = torch.tensor(2.0, requires_grad=True)"), (2, "y = x ** 2 + 3 * x"), (3, "y.backward()")]
    results = [result async for result in session.replay(steps, "script.py", shadows=shadows)]
    assert [result.error for result in results] == [None, None, None]
    rows = {row["name"]: row for row in session.tensors.values()}
    assert rows["x"]["grad"]["values"] == 7.0 and rows["y"]["grad_fn"] == "AddBackward0"
    check = await session.check("y")
    assert ("problem" not in check.data) is shadows
