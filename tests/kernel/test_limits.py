"""Limits no size counts: files in scratch and threads of a kernel. A real kernel runs into each;
judged from outside (the scratch tmpfs as the host sees it, /proc of the kernel) and by the
kernel answering the next step."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gradrepl.client.options import KernelOptions
from gradrepl.host.budgets import parse_size
from gradrepl.kernel.sandbox.threads import THREAD_LIMIT
from gradrepl.session import Session
from tests.support.sandbox import require

DISK = parse_size("16M")


@pytest.fixture
async def capped():
    async with Session(KernelOptions(disk_limit=DISK)) as live:
        yield live


def scratch_seen_from_outside(session: Session) -> Path:
    """The kernel's scratch folder as the host reaches it: through the kernel's own mount namespace."""
    return Path(f"/proc/{session.kernel_info['pid']}/root") / session.client.scratch_dir.lstrip("/")


async def test_scratch_holds_a_bounded_number_of_files_and_says_so(capped):
    require(capped, "disk")
    scratch = scratch_seen_from_outside(capped)
    files = os.statvfs(scratch).f_files
    assert files <= max(4096, DISK // 4096), f"scratch allows {files:,} files under a {DISK >> 20} MiB limit"
    flood = (f"import os\nos.mkdir('many')\nfor made in range({files + 100}):\n"
             "    open(f'many/{made}', 'w').close()")
    result = await capped.execute(flood)
    assert result.error is not None and "Errno 28" in result.error.message, result.error
    assert result.error.explanation and "files" in result.error.explanation, result.error.explanation
    assert f"{files:,}" in result.error.explanation
    made = len(os.listdir(scratch / "many"))
    assert made < files
    alive = await capped.execute("made, len(os.listdir('many'))")
    assert alive.result == f"({made}, {made})", alive
    freed = await capped.execute("for name in os.listdir('many'):\n    os.remove(f'many/{name}')\n"
                                 "open('after.txt', 'w').write('room again')")
    assert freed.error is None, freed.error


def kernel_threads(session: Session) -> int:
    with open(f"/proc/{session.kernel_info['pid']}/status") as status:
        return int(next(line for line in status if line.startswith("Threads:")).split()[1])


THREAD_FLOOD = (
    "import threading\n"
    "threading.stack_size(1 << 16)\n"  # small stacks: the memory limit is not what stops it
    "stop = threading.Event()\n"
    "started = []\n"
    f"for _ in range({2 * THREAD_LIMIT}):\n"
    "    thread = threading.Thread(target=stop.wait, daemon=True)\n"
    "    thread.start()\n"
    "    started.append(thread)"
)


async def test_a_kernel_runs_a_bounded_number_of_threads_and_lives_on(session):
    require(session, "threads")
    result = await session.execute(THREAD_FLOOD)
    assert result.error is not None and result.error.type == "RuntimeError", result.error
    assert result.error.explanation and f"at most {THREAD_LIMIT} threads" in result.error.explanation, result.error
    assert kernel_threads(session) <= THREAD_LIMIT
    # torch's own thread pool is not left without threads (libgomp would end the kernel)
    at_bound = await session.execute("float((torch.ones(1 << 20) * 2).sum())")
    assert at_bound.kernel_event is None and at_bound.result == "2097152.0", at_bound
    joined = await session.execute("stop.set()\nfor thread in started:\n    thread.join()\nlen(started)")
    assert joined.error is None and 0 < int(joined.result) < THREAD_LIMIT, joined
    again = await session.execute("done = []\nthread = threading.Thread(target=done.append, args=(1,))\n"
                                  "thread.start()\nthread.join()\nx = torch.ones(1 << 18).sum()\ndone, int(x)")
    assert again.result == f"([1], {1 << 18})", again
    assert kernel_threads(session) < THREAD_LIMIT // 4


async def test_the_thread_bound_is_per_kernel(session, capped):
    # Two kernels of the same user: one at its bound leaves the other its own.
    require(session, "threads")
    full = await session.execute(THREAD_FLOOD)
    assert full.error is not None and full.error.type == "RuntimeError", full.error
    other = await capped.execute(THREAD_FLOOD.replace(f"range({2 * THREAD_LIMIT})", f"range({THREAD_LIMIT // 2})")
                                 + "\nlen(started)")
    assert other.error is None and other.result == str(THREAD_LIMIT // 2), other
    await session.execute("stop.set()")
    await capped.execute("stop.set()")


async def test_the_kernel_cannot_lift_its_thread_bound(session):
    require(session, "threads")
    pid = session.kernel_info["pid"]
    with open(f"/proc/{pid}/cgroup") as table:
        joined = [line.strip().split(":", 2)[2] for line in table if "pids" in line.split(":")[1].split(",")]
    attempts = "import os, resource\ntried = []\n"
    if joined and "gradrepl-kernel-" in joined[0]:
        from gradrepl.host.cgroups import pids_parent
        own = os.path.join(pids_parent(), joined[0].rsplit("/", 1)[1])
        attempts += (f"for path, value in (({own + '/pids.max'!r}, 'max'), "
                     f"({os.path.dirname(own) + '/cgroup.procs'!r}, str(os.getpid()))):\n"
                     "    try:\n        open(path, 'w').write(value)\n        tried.append('written')\n"
                     "    except OSError as exc:\n        tried.append(exc.errno)\n")
    attempts += ("try:\n    resource.setrlimit(resource.RLIMIT_NPROC, (resource.RLIM_INFINITY,) * 2)\n"
                 "    tried.append('raised')\nexcept (OSError, ValueError) as exc:\n    tried.append('refused')\n"
                 "tried")
    result = await session.execute(attempts)
    assert result.error is None and "written" not in result.result and "raised" not in result.result, result
    if joined and "gradrepl-kernel-" in joined[0]:
        with open(os.path.join(own, "pids.max")) as limit:
            assert limit.read().strip() == str(THREAD_LIMIT)
        with open(f"/proc/{pid}/cgroup") as table:
            assert own.rsplit("/", 1)[1] in table.read()
