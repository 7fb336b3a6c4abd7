"""The sandbox as a learner meets it: a real kernel forked from the zygote, checked from outside.

Each test asks the kernel to do something it must not (read a secret, change a file's
metadata, reach the host's IPC) and then looks from the test process: is the file
unchanged, did the host object see anything? Where this machine lacks a layer the test
skips with the reason the kernel reported.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import pytest
from tests.support.sandbox import require


async def test_secrets_and_terminals_are_unreadable_and_the_refusal_says_so(session, tmp_path: Path):
    require(session, "files")
    secret = Path(os.environ["HOME"]) / ".ssh" / "id_rsa"
    secret.parent.mkdir(exist_ok=True)
    secret.write_text("PRIVATE")
    master, slave = os.openpty()
    try:
        terminal = os.ttyname(slave)
        result = await session.execute(f"open({str(secret)!r}).read()")
        assert result.error.type == "PermissionError", result.error
        assert "Reads are limited" in result.error.explanation
        tty = await session.execute(f"import os\nos.open({terminal!r}, os.O_RDONLY | os.O_NOCTTY)")
        assert tty.error is not None and tty.error.type == "PermissionError", tty
    finally:
        os.close(master)
        os.close(slave)


async def test_torch_numpy_sympy_and_completion_still_read_what_they_need(session):
    require(session, "files")
    lazy = await session.execute(
        "import torch.distributions, torch.fft, numpy, sympy, inspect\n"
        "d = torch.distributions.Normal(0.0, 1.0)\n"
        "[round(float(d.cdf(torch.tensor(0.0))), 2), int(numpy.ones(3).sum()),\n"
        " str(sympy.diff(sympy.Symbol('x') ** 2)), inspect.getsource(torch.nn.ReLU)[:5]]")
    assert lazy.error is None, lazy.error
    assert lazy.result == "[0.5, 3, '2*x', 'class']"
    completions = await session.complete("torch.zer")
    assert "zeros" in [getattr(match, "text", match) for match in completions] or any(
        "zeros" in str(match) for match in completions)


async def test_metadata_changes_outside_scratch_fail_and_the_files_stay_as_they_were(session, tmp_path: Path,
                                                                                      gradrepl_home: Path):
    require(session, "mounts")
    gradrepl_home.mkdir(exist_ok=True)
    victim = gradrepl_home / "repl_history.jsonl"
    victim.write_text("[]")
    before = (victim.stat().st_mode, victim.stat().st_mtime_ns, gradrepl_home.stat().st_mode)
    attacks = {
        "chmod": f"os.chmod({str(victim)!r}, 0o666)",
        "chmod_home": f"os.chmod({str(gradrepl_home)!r}, 0o000)",
        "chown": f"os.chown({str(victim)!r}, os.getuid(), os.getgid())",
        "utime": f"os.utime({str(victim)!r}, (0, 0))",
        "setxattr": f"os.setxattr({str(victim)!r}, 'user.evil', b'1')",
    }
    for name, attack in attacks.items():
        result = await session.execute(f"import os\n{attack}")
        assert result.error is not None and "Errno 30" in result.error.message, (name, result.error)
        assert result.error.explanation and "read-only" in result.error.explanation, name
    assert (victim.stat().st_mode, victim.stat().st_mtime_ns, gradrepl_home.stat().st_mode) == before
    assert os.listxattr(victim) == []
    inside = await session.execute("import os, stat\nopen('mine.txt', 'w').close()\nos.chmod('mine.txt', 0o600)\n"
                                   "os.utime('mine.txt', (0, 0))\noct(stat.S_IMODE(os.stat('mine.txt').st_mode))")
    assert inside.result == "'0o600'", inside


libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT, IPC_RMID = 0o1000, 0


@pytest.fixture
def host_ipc():
    """A 0600 SysV shared-memory segment and message queue of the host, with well-known keys."""
    key = 0x6772_0000 + os.getpid() % 0xFFFF
    segment = libc.shmget(key, 4096, IPC_CREAT | 0o600)
    queue = libc.msgget(key, IPC_CREAT | 0o600)
    if segment < 0 or queue < 0:
        pytest.skip("this machine offers no SysV IPC to the tests")
    libc.shmat.restype = ctypes.c_void_p
    address = libc.shmat(segment, None, 0)
    yield key, address, queue
    libc.shmdt(ctypes.c_void_p(address))
    libc.shmctl(segment, IPC_RMID, None)
    libc.msgctl(queue, IPC_RMID, None)


async def test_the_hosts_sysv_ipc_is_out_of_reach(session, host_ipc):
    require(session, "ipc")
    key, address, queue = host_ipc
    attack = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.shmat.restype = ctypes.c_void_p\n"
        f"segment = libc.shmget({key}, 0, 0)\n"
        "if segment >= 0:\n"
        "    ctypes.memmove(libc.shmat(segment, None, 0), b'PWNED', 5)\n"
        f"queue = libc.msgget({key}, 0)\n"
        "message = ctypes.create_string_buffer(b'\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00hello')\n"
        "sent = libc.msgsnd(queue, message, 5, 0o4000) if queue >= 0 else -1\n"
        "[segment, queue, sent]"
    )
    result = await session.execute(attack)
    assert result.error is None, result.error
    assert result.result == "[-1, -1, -1]"
    assert ctypes.string_at(address, 5) == b"\0" * 5
    buffer = ctypes.create_string_buffer(64)
    assert libc.msgrcv(queue, buffer, 48, 0, 0o4000) < 0        # IPC_NOWAIT: the queue is empty


async def test_the_hosts_cgroups_and_their_processes_are_unreadable(session):
    """/sys/fs/cgroup lists every process of the host (cgroup.procs) and how the machine is cut up;
    nothing in a kernel needs it (its pids cgroup is joined before Landlock)."""
    require(session, "files")
    result = await session.execute(
        "import os\nout = []\n"
        "for path in ('/sys/fs/cgroup', '/sys/fs/cgroup/pids/cgroup.procs', '/sys/fs/cgroup/cgroup.procs'):\n"
        "    try:\n"
        "        os.listdir(path) if not path.endswith('procs') else open(path).read()\n"
        "        out.append((path, 'read'))\n"
        "    except OSError as exc:\n"
        "        out.append((path, exc.errno))\n"
        "[entry for entry in out if entry[1] == 'read']")
    assert result.error is None and result.result == "[]", (result.result, result.error)
