"""The interrupt page the client shares with its kernel cannot be turned against the client.

Learner code tries every descriptor the kernel holds: shrink it (the client's next Ctrl-C or
step timeout would then write into a page that no longer exists: SIGBUS), grow it (memory no
limit counts), write to it, reopen it writable. Each test judges from outside the kernel: the
frontend process (`gradrepl run`, a script driving Session.interrupt) survives and says what
happened, and the kernel's descriptors, read from /proc by the test, hold no writable page.
"""

from __future__ import annotations

import asyncio
import json
import mmap
import os
import platform
import subprocess
import sys

import pytest
from tests.support import refusing_syscalls
from tests.support.paths import GRADREPL, ROOT

# Every descriptor the kernel holds, shrunk, grown, written and reopened (pipes are left alone: a
# write to the reply pipe is a broken protocol, tested in test_protocol_faults.py).
ATTACK_FDS = """\
import os
def held():
    for name in os.listdir('/proc/self/fd'):
        try:
            yield int(name), os.readlink(f'/proc/self/fd/{name}')
        except OSError:
            pass
def attempt(call):
    try:
        call()
    except (OSError, ValueError):
        pass
fds = [fd for fd, link in list(held()) if fd > 2 and not link.startswith('pipe:')]
def reopened(fd, path, call):
    again = os.open(path, os.O_RDWR)
    try:
        if 'gradrepl-interrupt' in os.readlink(f'/proc/self/fd/{again}'):
            call(again)
    finally:
        os.close(again)
maps = [f'/proc/self/map_files/{name}' for name in os.listdir('/proc/self/map_files')]
# Writes first (a write past the end would grow a shrunk page back), then the size.
for call in (lambda fd: os.pwrite(fd, b'\x7f' * 8, 0), lambda fd: os.ftruncate(fd, SIZE)):
    for fd in fds:
        attempt(lambda: call(fd))
        attempt(lambda: reopened(fd, f'/proc/self/fd/{fd}', call))
    for path in maps:
        attempt(lambda: reopened(None, path, call))
"""
LOOP = "while True:\n    pass\n"


def run_script(tmp_path, size: int):
    script = tmp_path / "attack.py"
    script.write_text(ATTACK_FDS.replace("SIZE", str(size)) + "n = 1\n" + LOOP + "print('after', n)\n")
    return subprocess.run([*GRADREPL, "run", "--json", "--step-timeout", "2", str(script)],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)


def assert_interrupted_by_the_timeout(done) -> None:
    assert done.returncode == 1, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    steps = [line for line in lines if line["type"] == "step"]
    loop, after = steps[-2], steps[-1]
    assert loop["error"]["type"] == "KeyboardInterrupt", loop["error"]
    assert "2 s step timeout" in loop["error"]["explanation"], loop["error"]
    assert after["stdout"] == "after 1\n", after  # the same kernel: the SIGINT stopped the step, no kill


def test_run_survives_a_step_timeout_after_every_fd_was_shrunk(tmp_path):
    assert_interrupted_by_the_timeout(run_script(tmp_path, 0))


def test_run_survives_a_step_timeout_after_every_fd_was_grown(tmp_path):
    assert_interrupted_by_the_timeout(run_script(tmp_path, 1 << 28))


DRIVER = """\
import asyncio, json, os, sys
from gradrepl.client.options import KernelOptions
from gradrepl.session import Session

async def main():
    async with Session(KernelOptions(spawn=sys.argv[2] == "spawn")) as session:
        pid = session.kernel_info["pid"]
        attack = await session.execute(sys.argv[1])
        assert attack.error is None and attack.kernel_event is None, attack
        fds = {}
        for name in os.listdir(f"/proc/{pid}/fd"):
            link = os.readlink(f"/proc/{pid}/fd/{name}")
            with open(f"/proc/{pid}/fdinfo/{name}") as info:
                flags = int(info.read().split("flags:")[1].split()[0], 8)
            fds[int(name)] = (link, flags & os.O_ACCMODE)
        # The client's own page (the test process's descriptor of it) kept its size.
        sizes = []
        for name in os.listdir("/proc/self/fd"):
            try:
                if "gradrepl-interrupt" in os.readlink(f"/proc/self/fd/{name}"):
                    sizes.append(os.fstat(int(name)).st_size)
            except OSError:
                pass  # the listing's own descriptor
        step = asyncio.ensure_future(session.execute("n = 1\\nwhile True:\\n    n += 1"))
        await asyncio.sleep(1.0)
        await session.interrupt()
        looped = await asyncio.wait_for(step, 60)
        print("interrupted:", looped.error and looped.error.type, looped.kernel_event)
        print("kernel fds:", json.dumps(sorted(fds.items())))
        print("page sizes:", json.dumps(sizes))
        print("same kernel:", session.kernel_info["pid"] == pid)

asyncio.run(main())
"""


def drive(size: int, mode: str = "fork") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", DRIVER, ATTACK_FDS.replace("SIZE", str(size)), mode],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)


def assert_no_kernel_fd_is_the_writable_page(done) -> None:
    fds = json.loads(done.stdout.split("kernel fds: ")[1].splitlines()[0])
    pages = [(fd, link, mode) for fd, (link, mode) in fds if "gradrepl-interrupt" in link]
    assert all(mode == os.O_RDONLY for _, _, mode in pages), pages
    # What the kernel needs: stdin (/dev/null), stdout, stderr, the command and reply pipes.
    assert len(fds) <= 5, fds


@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_session_interrupt_survives_a_shrunk_page(mode):
    done = drive(0, mode)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-3000:])
    assert "interrupted: KeyboardInterrupt None" in done.stdout, done.stdout
    assert "same kernel: True" in done.stdout, done.stdout
    assert_no_kernel_fd_is_the_writable_page(done)


def test_a_grown_page_holds_no_memory_no_kernel_fd_is_the_page_and_interrupts_still_work():
    done = drive(1 << 28)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-3000:])
    assert_no_kernel_fd_is_the_writable_page(done)
    sizes = json.loads(done.stdout.split("page sizes: ")[1].splitlines()[0])
    assert sizes and all(size == mmap.PAGESIZE for size in sizes), sizes
    assert "interrupted: KeyboardInterrupt None" in done.stdout, done.stdout


def test_doctor_reports_the_sealed_page_and_the_reply_schema():
    done = subprocess.run([*GRADREPL, "doctor", "--json"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    layers = json.loads(done.stdout)["sandbox"]
    assert layers["interrupt_page"]["active"], layers["interrupt_page"]
    assert "no shrink, no grow" in layers["interrupt_page"]["detail"]
    assert "read-only" in layers["interrupt_page"]["detail"]
    assert layers["replies"]["active"] and "schema" in layers["replies"]["detail"], layers["replies"]
    table = subprocess.run([*GRADREPL, "doctor"], capture_output=True, text=True, timeout=120, cwd=ROOT).stdout
    assert any(line.split()[:2] == ["active", "interrupt_page"] for line in table.splitlines()), table
    assert any(line.split()[:2] == ["active", "replies"] for line in table.splitlines()), table


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the wrapper's filter has x86_64 numbers")
def test_without_memfd_sealing_doctor_says_the_page_is_missing_and_interrupts_still_stop_a_step(tmp_path):
    wrapper = refusing_syscalls.command("memfd-seals")
    done = subprocess.run([*wrapper, *GRADREPL, "doctor", "--json"], capture_output=True, text=True, timeout=180,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    page = report["sandbox"]["interrupt_page"]
    assert not page["active"] and "interrupt_page" in report["missing"], page
    assert page["detail"].startswith("missing: the page could not be sealed"), page
    script = tmp_path / "loop.py"
    script.write_text("n = 1\n" + LOOP + "print('after', n)\n")
    ran = subprocess.run([*wrapper, *GRADREPL, "run", "--json", "--step-timeout", "2", str(script)],
                         capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert_interrupted_by_the_timeout(ran)


async def test_ctrl_c_that_reaches_the_kernel_just_before_its_step_stops_that_step(session):
    """On a loaded machine the SIGINT may come before the kernel has begun the step it aims at: it is
    kept for that step (which stops at its start) and not dropped until the grace kills the kernel."""
    client, pid = session.client, session.kernel_info["pid"]
    client.interrupt(step=41)  # before the step is even sent: the kernel is between steps
    stopped = await asyncio.wait_for(client.request("execute", source="while True:\n    pass", step=41), 60)
    assert stopped["error"]["type"] == "KeyboardInterrupt", stopped
    client.interrupt(step=99)  # aimed at another step: this one runs
    ran = await asyncio.wait_for(client.request("execute", source="kept = 1", step=42), 60)
    assert ran["error"] is None and session.kernel_info["pid"] == pid, ran
