"""Only the kernel receives the learner's interrupt, and only through the client: the terminal's Ctrl-C
(SIGINT to its foreground process group) never reaches the zygote or a kernel, which live in sessions
of their own; they still end when the frontend does."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from tests.support.process import outlives, running
from tests.support.pty import PlainOnPty, screen_lines, wait_until

from gradrepl.client.options import KernelOptions
from gradrepl.session import Session


@pytest.mark.timeout(400)
def test_ctrl_c_three_times_in_plain_leaves_the_zygote_and_the_session_alive():
    repl = PlainOnPty()
    try:
        banner = repl.prompt(1)
        kernel = repl.kernel_pid(banner)
        zygotes = repl.zygote_pids(kernel)
        assert zygotes, "no zygote found"
        scratch = Path(f"/proc/{kernel}/cwd")  # scratch as the kernel sees it (a tmpfs of its own)
        repl.type("while True: open('looping', 'w').close()\r\r")
        wait_until(lambda: (scratch / "looping").exists(), "the loop to start")
        for _ in range(3):
            repl.type("\x03")
            time.sleep(0.5)  # three presses, not one burst (no timing is judged)
        repl.prompt(2)
        repl.type("print(1+1)\r")
        answer = repl.prompt(3)
        assert "2" in screen_lines(answer), screen_lines(answer)
        assert all(running(pid) for pid in zygotes), "the terminal's SIGINT reached the zygote"
        assert running(kernel), "the interrupted kernel was lost"
        # The frontend's death still ends the zygote (EOF on its socket) and the kernel (parent-death signal).
        os.kill(repl.process.pid, signal.SIGKILL)
        repl.process.wait(timeout=30)
        for pid in [*zygotes, kernel]:
            assert not outlives(pid, 30), f"process {pid} outlived the frontend"
    finally:
        repl.close()


async def test_zygote_and_spawned_kernels_are_out_of_the_terminals_process_group():
    """What the terminal signals is the frontend's process group; neither the zygote nor a kernel
    (forked, or spawned) may share it."""
    ours = os.getpgid(0)
    for options in (KernelOptions(), KernelOptions(spawn=True)):
        async with Session(options) as session:
            client = session.client
            if client.zygote:
                zygote = client.zygote.process.pid
                assert os.getpgid(zygote) != ours and os.getsid(zygote) == zygote
            assert os.getpgid(client.kernel.pid) != ours
