"""Step numbers as in IPython: code takes `In [N]` (which `Cell In[N]`, `%at N` and F3 use); a magic that
only looks, `obj?` and `!cmd` take none; a restart numbers from 1 again and the timeline says a kernel began."""

from __future__ import annotations


async def test_looking_takes_no_number_and_code_does(session):
    assert (await session.execute("x = torch.ones(2)")).step == 1
    for looking in ("%tensors", "%help", "x?", "%at 1", "%history", "%nosuch", "!ls"):
        await session.execute(looking)
        assert session.step == 1, looking
    assert session.timeline.steps == [(1, "x = torch.ones(2)")]  # F3 walks code steps only
    failed = await session.execute("1/0")
    assert failed.step == 2 and failed.error.frames[-1]["filename"] == "Cell In[2]"
    timed = await session.execute("%timeit x + 1")  # a magic that runs a statement numbers it
    assert timed.step == 3 and session.step == 3
    assert (await session.execute("%at -1")).display.startswith("after step 3 of 3")


async def test_a_restart_numbers_from_one_and_the_timeline_says_a_kernel_began(session):
    await session.execute("a = torch.ones(1)")
    await session.execute("b = torch.ones(1)")
    await session.execute("%restart")
    assert session.step == 0 and session.timeline.steps == []
    again = await session.execute("c = torch.zeros(3)")
    assert again.step == 1
    past = session.timeline.state_at(1)
    assert past.fresh_kernel and [row["name"] for row in past.rows] == ["c"]
    assert "a fresh kernel began" in (await session.execute("%at 1")).display


async def test_shell_escape_says_the_sandbox_runs_no_programs(session):
    result = await session.execute("!ls -l")
    assert result.error.type != "SyntaxError" and "runs no programs" in result.error.message, result.error


async def test_a_request_cut_off_by_a_restart_starts_no_second_kernel(session):
    """A completion (the warm-up), an inspection or a task read in flight when a lesson restarts the kernel
    ends with words; it must not start yet another kernel, which would wipe what is rebuilt in the new one."""
    import asyncio

    restarts = session.client.restarts
    waiting = asyncio.ensure_future(session.inspect("__import__('time').sleep(30)"))
    await asyncio.sleep(0.5)  # the request is in the kernel
    await session.restart()
    await session.execute("x = torch.ones(1)")
    answer = await waiting
    assert answer["kind"] == "error" and "restarted" in answer["message"], answer
    assert (await session.execute("x")).error is None  # the namespace built after the restart is still there
    assert session.client.restarts == restarts + 1
