"""Every fault a learner (or a lesson) can cause, on a real sandboxed kernel through Session.

In each case the frontend keeps working, the next step runs, the learner is told
what happened in words, and the history keeps everything typed before the fault.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.support.process import outlives

from gradrepl.client.options import KernelOptions
from gradrepl.host.budgets import parse_size
from gradrepl.session import Session
from tests.support.paths import ROOT
from tests.support.reply_pipe import FIND_REPLY_PIPE
from tests.support.sandbox import require

SMALL_MEMORY = KernelOptions(memory_limit=parse_size("1G"))


@pytest.fixture
async def small_session():
    async with Session(SMALL_MEMORY) as live:
        yield live


async def started(session: Session, source: str) -> asyncio.Task:
    """Start a step in the background and return once the kernel is busy with it."""
    task = asyncio.create_task(session.execute(source))
    while session.state != "busy":
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)
    assert not task.done(), f"the step ended by itself: {task.result()}"
    return task


async def assert_recovers(session: Session, *earlier: str) -> None:
    """The next step runs and the history still holds what came before."""
    after = await session.execute("6 * 7")
    assert after.result == "42" and after.ok, after
    for source in earlier:
        assert source in session.history


def assert_lost_in_words(result) -> None:
    assert result.kernel_event and "lost" in result.kernel_event, result
    assert result.error is not None and result.error.explanation


# --- time ----------------------------------------------------------------------------

async def test_runaway_python_loop_is_interrupted_and_the_namespace_kept(session):
    await session.execute("kept = 41")
    task = await started(session, "n = 0\nwhile True:\n    n += 1")
    assert await session.interrupt()
    result = await task
    assert result.error.type == "KeyboardInterrupt" and result.kernel_event is None
    assert result.error.explanation
    assert (await session.execute("kept + 1")).result == "42"
    assert int((await session.execute("n")).result) > 0
    await assert_recovers(session, "kept = 41")


async def test_c_loop_ignoring_sigint_is_killed_and_the_loss_explained(session):
    await session.execute("kept = 1")
    blocked = ("import ctypes, signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\n"
               "ctypes.CDLL(None).sleep(600)")
    task = await started(session, blocked)
    old_pid = session.kernel_info["pid"]
    assert await session.interrupt()
    result = await asyncio.wait_for(task, 30)
    assert_lost_in_words(result)
    assert "interrupt" in result.kernel_event
    assert session.kernel_info["pid"] != old_pid
    assert "kept" in (await session.execute("kept")).error.message      # state was lost, as told
    await assert_recovers(session, "kept = 1", blocked)


async def test_long_torch_op_can_be_killed(session):
    await session.execute("w = torch.ones(3)")
    long_op = "torch.linalg.matrix_power(torch.rand(3000, 3000, dtype=torch.float64), 2**40 - 1)"
    task = await started(session, long_op)
    await session.kill()
    result = await asyncio.wait_for(task, 30)
    assert_lost_in_words(result)
    assert "Kill" in result.kernel_event
    assert "w" not in session.tensors
    await assert_recovers(session, "w = torch.ones(3)", long_op)


async def test_step_timeout_interrupts_a_headless_step():
    async with Session(KernelOptions(step_timeout=1.0)) as session:
        await session.execute("kept = 5", timeout=120)        # the first step may import lazily
        result = await session.execute("while True:\n    pass")
        assert result.error.type == "KeyboardInterrupt"
        assert "timeout" in result.error.explanation
        assert (await session.execute("kept")).result == "5"


# --- memory ----------------------------------------------------------------------------

async def test_memory_bomb_of_small_allocations_is_a_clean_error(small_session):
    session = small_session
    require(session, "memory")
    await session.execute("kept = torch.arange(3.0)")
    bomb = "hoard = []\nwhile True:\n    hoard.append([0] * 1000)"
    result = await session.execute(bomb)
    assert result.kernel_event is None, result.kernel_event
    assert result.error.type == "MemoryError" and "--memory-limit" in result.error.explanation
    assert int((await session.execute("len(hoard)")).result) > 1000
    await session.execute("del hoard")
    assert (await session.execute("kept.sum().item()")).result == "3.0"
    await assert_recovers(session, "kept = torch.arange(3.0)", bomb)


async def test_a_system_error_far_from_the_memory_limit_is_not_blamed_on_memory(session):
    # C code that fails to allocate on the limit may raise SystemError instead of MemoryError; one
    # raised while memory is plentiful is the learner's own and keeps its own words.
    require(session, "memory")
    result = await session.execute('raise SystemError("mine")')
    assert result.error.type == "SystemError" and result.error.message == "mine"
    assert "memory" not in (result.error.explanation or "")


async def test_memory_bomb_of_tensors_is_a_clean_error(small_session):
    session = small_session
    require(session, "memory")
    bomb = "def fill():\n    hoard = []\n    while True:\n        hoard.append(torch.ones(1 << 20))\nfill()"
    result = await session.execute(bomb)
    assert result.kernel_event is None, result.kernel_event
    assert result.error.type == "RuntimeError" and "allocate" in result.error.message
    assert (await session.execute("torch.ones(1000).sum().item()")).result == "1000.0"
    await assert_recovers(session, bomb)


async def test_one_huge_allocation_is_a_clean_error(session):
    require(session, "memory")
    await session.execute("small = torch.zeros(2)")
    huge = "big = torch.empty(1 << 42, dtype=torch.uint8)"
    result = await session.execute(huge)
    assert result.kernel_event is None
    assert result.error.type == "RuntimeError" and "allocate" in result.error.message
    assert "small" in session.tensors and "big" not in session.tensors
    await assert_recovers(session, "small = torch.zeros(2)", huge)


# --- the process ends ----------------------------------------------------------------------

async def test_segfault_reports_a_python_stack(session):
    await session.execute("before = 1")
    crash = "import ctypes\ndef deref():\n    return ctypes.string_at(0)\nderef()"
    result = await session.execute(crash)
    assert_lost_in_words(result)
    assert "segmentation fault" in result.kernel_event.lower()
    assert "Segmentation fault" in result.stderr
    assert "deref" in result.stderr and "Cell In[" in result.stderr   # the learner's frames, by cell
    assert "gradrepl/" not in result.stderr and "ctypes" in result.stderr  # ours dropped, the library's kept
    await assert_recovers(session, "before = 1", crash)


async def test_os_exit_is_reported(session):
    await session.execute("before = 1")
    result = await session.execute("import os\nos._exit(3)")
    assert_lost_in_words(result)
    assert "status 3" in result.kernel_event
    await assert_recovers(session, "before = 1", "import os\nos._exit(3)")


async def test_an_exit_with_the_out_of_memory_status_is_the_learners_own_exit(session):
    """Learner code can end the kernel with any status, protocol.OUT_OF_MEMORY_EXIT too: that is its own
    exit, never said to be the kernel running out of memory."""
    result = await session.execute("import os\nos._exit(86)")
    assert_lost_in_words(result)
    assert "status 86" in result.kernel_event and "memory" not in result.kernel_event, result.kernel_event
    await assert_recovers(session, "import os\nos._exit(86)")


async def test_sys_exit_is_caught_and_the_kernel_survives(session):
    await session.execute("kept = 'yes'")
    pid = session.kernel_info["pid"]
    result = await session.execute("import sys\nsys.exit(1)")
    assert result.error.type == "SystemExit" and result.kernel_event is None
    assert result.error.explanation
    assert session.kernel_info["pid"] == pid
    assert (await session.execute("kept")).result == "'yes'"
    await assert_recovers(session, "kept = 'yes'")


async def test_kernel_killed_from_outside_mid_step(session):
    await session.execute("before = 1")
    task = await started(session, "import time\ntime.sleep(60)")
    os.kill(session.kernel_info["pid"], signal.SIGKILL)
    result = await asyncio.wait_for(task, 30)
    assert_lost_in_words(result)
    assert "killed" in result.kernel_event.lower()
    await assert_recovers(session, "before = 1")


async def test_kernel_dying_halfway_through_its_reply(session):
    """The kernel writes half a reply line on its reply pipe and dies: the client must not choke."""
    await session.execute("before = 1")
    half_reply = FIND_REPLY_PIPE + (
        "for fd in reply_pipes():\n"
        "    os.write(fd, b'{\"v\": 1, \"id\": ')\n"
        "os._exit(0)"
    )
    result = await asyncio.wait_for(session.execute(half_reply), 30)
    assert_lost_in_words(result)
    await assert_recovers(session, "before = 1")


# --- output ------------------------------------------------------------------------------

async def test_hundred_megabyte_print_is_truncated(session):
    result = await session.execute("print('x' * 100_000_000)")
    assert result.kernel_event is None
    assert 0 < len(result.stdout) <= 1 << 20
    assert any("truncated" in note for note in result.notes)
    quiet = await session.execute("print('after')")
    assert quiet.stdout == "after\n"
    await assert_recovers(session, "print('x' * 100_000_000)")


async def test_raw_fd_output_is_capped_by_the_client(session):
    flood = "import os\nfor _ in range(100):\n    os.write(1, b'y' * 1_000_000)"
    result = await session.execute(flood)
    assert result.kernel_event is None
    assert 0 < len(result.stdout) <= 1 << 20
    assert any("truncated" in note for note in result.notes)
    quiet = await session.execute("print('after')")
    assert quiet.stdout == "after\n"
    await assert_recovers(session, flood)


# --- processes, network, files -----------------------------------------------------------

async def test_fork_bomb_goes_nowhere(session):
    require(session, "syscalls")
    await session.execute("kept = 1")
    bomb = "import os\nwhile True:\n    os.fork()"
    result = await asyncio.wait_for(session.execute(bomb), 30)
    assert result.kernel_event is None
    assert result.error.type == "PermissionError"
    spawn = await session.execute("import subprocess\nsubprocess.run(['ls'])")
    assert spawn.error.type == "PermissionError"
    await assert_recovers(session, "kept = 1", bomb)


async def test_connect_to_the_tests_own_loopback_listener_fails_fast(session):
    require(session, "network")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.5)
        port = server.getsockname()[1]
        attempt = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=10)"
        result = await asyncio.wait_for(session.execute(attempt), 8)
        assert result.kernel_event is None
        assert result.error is not None and result.error.type != "TimeoutError", result.error
        assert result.duration_ms < 5000
        with pytest.raises(TimeoutError):
            server.accept()
    await assert_recovers(session, attempt)


async def test_write_outside_scratch_fails_and_leaves_no_file(session, tmp_path: Path):
    require(session, "files")
    target = tmp_path / "escape.txt"
    attempt = f"open({str(target)!r}, 'w').write('learner')"
    result = await session.execute(attempt)
    # Landlock refuses it (PermissionError), or the read-only mount does first (OSError: EROFS).
    assert result.error.type in ("PermissionError", "OSError") and result.kernel_event is None, result.error
    assert result.error.explanation, "a refused write is explained in words"
    assert not target.exists()
    saved = await session.execute("torch.save(torch.arange(3), 'model.pt')\ntorch.load('model.pt').tolist()")
    assert saved.result == "[0, 1, 2]", saved
    await assert_recovers(session, attempt)


# --- the frontend dies ---------------------------------------------------------------------

FRONTEND = textwrap.dedent("""
    import asyncio, json
    from gradrepl.session import Session

    async def main():
        session = Session()
        await session.start()
        await session.execute("x = 1")
        print(json.dumps({"kernel": session.kernel_info["pid"]}), flush=True)
        await session.execute("while True:\\n    pass")     # busy: it will not notice its pipes close

    asyncio.run(main())
""")


def test_busy_kernel_does_not_outlive_a_killed_frontend():
    frontend = subprocess.Popen([sys.executable, "-c", FRONTEND], stdout=subprocess.PIPE, text=True,
                                cwd=ROOT)
    try:
        kernel = json.loads(frontend.stdout.readline())["kernel"]
        time.sleep(0.5)
    finally:
        frontend.kill()
        frontend.wait()
    assert not outlives(kernel), "the kernel kept running after its frontend was killed"


# --- a kernel that stops itself while idle (a blind attacker, `gradrepl --plain`) ------------------

STOP_SOON = ("import os, signal, threading, time\nthreading.Thread(target=lambda: (time.sleep(0.5), "
             "os.kill(os.getpid(), signal.SIGSTOP)), daemon=True).start()")


async def stopped_behind_a_completion(session: Session) -> tuple[int, asyncio.Task, asyncio.Task]:
    """The kernel stops itself after a step; a completion asked while typing waits on it; then a step is
    sent, behind that completion."""
    await session.execute(STOP_SOON)
    from gradrepl.client.kernel_client import _stopped  # /proc says T

    pid = session.kernel_info["pid"]
    while not _stopped(pid):
        await asyncio.sleep(0.05)
    completion = asyncio.create_task(session.complete("z = 1 +"))
    await asyncio.sleep(0.2)
    step = asyncio.create_task(session.execute("z = 1 + 1"))
    while session.state != "busy":
        await asyncio.sleep(0.01)
    return pid, completion, step


async def test_ctrl_c_on_a_step_behind_a_stopped_kernel_says_it_stopped_itself(session):
    pid, completion, step = await stopped_behind_a_completion(session)
    assert await session.interrupt()
    result = await asyncio.wait_for(step, 60)
    await completion
    assert_lost_in_words(result)
    assert "stopped itself" in result.kernel_event and "No kernel is running" not in result.kernel_event, result
    assert session.kernel_info["pid"] != pid
    await assert_recovers(session)


async def test_a_step_behind_a_stopped_kernel_past_the_deadline_says_it_stopped_itself(session):
    import dataclasses

    kept = session.options
    session.options = dataclasses.replace(kept, request_deadline=3.0)
    try:
        pid, completion, step = await stopped_behind_a_completion(session)
        result = await asyncio.wait_for(step, 60)
        await completion
    finally:
        session.options = kept
    assert_lost_in_words(result)
    assert "stopped itself" in result.kernel_event and "SIGKILL" not in result.kernel_event, result
    await assert_recovers(session)
