"""Scratch on a real kernel: capped in total, shared by the kernels of a session, and removed when
its owner dies, whatever the signal. Checked from outside: the host's folder and disk."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from gradrepl.host import scratch
from gradrepl.client.kernel_client import KernelClient
from gradrepl.client.options import KernelOptions
from gradrepl.host.budgets import parse_size
from gradrepl.session import Session
from tests.support.paths import ROOT



@pytest.fixture
async def capped():
    async with Session(KernelOptions(disk_limit=parse_size("16M"))) as live:
        yield live


def require_disk(session: Session) -> None:
    if not session.sandbox.get("disk", {}).get("active"):
        pytest.skip(f"disk layer not active here: {session.sandbox.get('disk')}")


async def test_scratch_holds_no_more_than_the_disk_limit_and_says_so(capped):
    require_disk(capped)
    fill = ("chunk = b'x' * (1 << 20)\n"
            "with open('big.bin', 'wb') as f:\n"
            "    for _ in range(64):\n"
            "        f.write(chunk)\n")
    result = await capped.execute(fill)
    assert result.error is not None and "Errno 28" in result.error.message, result.error
    assert "--disk-limit" in result.error.explanation
    size = await capped.execute("import os\nos.path.getsize('big.bin')")
    assert int(size.result) <= 16 << 20
    # From outside: nothing landed on the host's disk, scratch is the kernel's own tmpfs.
    assert os.listdir(capped.client.scratch_dir) == []
    seen = Path(f"/proc/{capped.kernel_info['pid']}/root") / capped.client.scratch_dir.lstrip("/") / "big.bin"
    assert seen.stat().st_size <= 16 << 20
    await capped.execute("os.remove('big.bin')")
    assert (await capped.execute("open('small.txt', 'w').write('ok')")).result == "2"


async def test_files_in_scratch_survive_a_kernel_restart(capped):
    require_disk(capped)
    await capped.execute("import torch\ntorch.save(torch.arange(3), 'model.pt')")
    await capped.restart()
    loaded = await capped.execute("torch.load('model.pt').tolist()")
    assert loaded.result == "[0, 1, 2]", loaded


FRONTEND = textwrap.dedent("""
    import asyncio, json
    from gradrepl.session import Session

    async def main():
        session = Session()
        await session.start()
        await session.execute("open('left.txt', 'w').write('behind')")
        print(json.dumps({"scratch": session.client.scratch_dir, "kernel": session.kernel_info["pid"]}), flush=True)
        await session.execute("while True:\\n    pass")

    asyncio.run(main())
""")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_scratch_is_removed_when_its_frontend_dies_by_any_signal(sig):
    frontend = subprocess.Popen([sys.executable, "-c", FRONTEND], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                                stderr=subprocess.DEVNULL)
    try:
        folder = json.loads(frontend.stdout.readline())["scratch"]
        assert os.path.isdir(folder)
        frontend.send_signal(sig)
        frontend.wait(30)
    finally:
        frontend.kill()
        frontend.wait()
    deadline = time.monotonic() + 20
    while os.path.exists(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(folder), f"{folder} outlived its frontend ({sig.name})"


def test_a_start_removes_scratch_folders_whose_owner_is_gone():
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = Path(tempfile.gettempdir()) / f"{scratch.PREFIX}{gone.pid}-abcd1234"
    (stale / "sub").mkdir(parents=True)
    (stale / "sub" / "model.pt").write_bytes(b"x" * 1000)
    alive = Path(tempfile.mkdtemp(prefix=f"{scratch.PREFIX}{os.getpid()}-"))
    try:
        client = KernelClient()
        assert not stale.exists()
        assert alive.exists() and os.path.isdir(client.scratch_dir)
        os.rmdir(client.scratch_dir)
    finally:
        os.rmdir(alive)
