"""What the syscall filter refuses in a real kernel: calls newer than it knows, inotify and
fanotify, SysV IPC, and every socket but an internet one (also with --allow-network).

Each test attacks a kernel and judges what reached the test process: a watched folder's
file names, a connection to the test's own UNIX sockets.
"""

from __future__ import annotations

import ast
import errno
import os
import platform
import socket
import uuid
from pathlib import Path

import pytest

from gradrepl.client.options import KernelOptions
from gradrepl.session import Session
from tests.support.sandbox import require

MiB = 1 << 20


async def value(session, source: str):
    """The value of a step's last expression (a literal), failing the test on any error."""
    result = await session.execute(source)
    assert result.error is None, result.error
    return ast.literal_eval(result.result)


SYSCALL = ("import ctypes\n"
           "libc = ctypes.CDLL(None, use_errno=True)\n"
           "libc.syscall.restype = ctypes.c_long\n"
           "def call(nr, *args):\n"
           "    rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])\n"
           "    return [rc, ctypes.get_errno() if rc < 0 else 0]\n")


async def test_syscalls_newer_than_the_filter_knows_answer_enosys(session):
    """open_tree_attr (467) is refused by name; file_getattr/file_setattr (468, 469, Linux 6.17)
    and numbers no Linux has yet are unknown to the filter, so they answer ENOSYS."""
    require(session, "syscalls")
    got = await value(session, SYSCALL + "[call(467, -100, 0, 1, 0, 0), call(468, -100, 0, 0, 0, 0),\n"
                                         " call(469, -100, 0, 0, 0, 0), call(480), call(1000)]")
    open_tree_attr, file_getattr, file_setattr, future, far = got
    assert open_tree_attr == [-1, errno.EPERM], got
    for call in (file_getattr, file_setattr, future, far):
        assert call == [-1, errno.ENOSYS], got


async def test_x32_numbers_stay_refused(session):
    if platform.machine() != "x86_64":
        pytest.skip("x32 is an x86_64 ABI")
    require(session, "syscalls")
    got = await value(session, SYSCALL + "[call(0x40000000 + 39), call(0x40000000 + 467)]")   # getpid, x32
    assert got == [[-1, errno.EPERM], [-1, errno.EPERM]]


async def test_no_inotify_or_fanotify_watch_sees_a_hidden_folder(session, tmp_path: Path):
    require(session, "syscalls")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    watch = await value(session, (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def outcome(rc):\n"
        "    return [rc, ctypes.get_errno() if rc < 0 else 0]\n"
        "ino = libc.inotify_init1(os.O_NONBLOCK)\n"
        "ino_init = outcome(ino)\n"
        f"ino_watch = outcome(libc.inotify_add_watch(ino, {str(hidden).encode()!r}, 0xFFF))\n"
        "fan = libc.fanotify_init(0x200 | 0x400 | 0x800 | 0x2, os.O_RDONLY)   # FID, DIR_FID, NAME, NONBLOCK\n"
        "fan_init = outcome(fan)\n"
        "libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int, ctypes.c_char_p]\n"
        f"fan_mark = outcome(libc.fanotify_mark(fan, 1, 0x100 | 0x08000000, -100, {str(hidden).encode()!r}))\n"
        "[ino_init, ino_watch, fan_init, fan_mark]"))
    (hidden / "secret-name.txt").write_text("the learner's keystrokes")
    seen = await value(session, (
        "def drain(fd):\n"
        "    try:\n"
        "        return os.read(fd, 65536) if fd >= 0 else b''\n"
        "    except OSError:\n"
        "        return b''\n"
        "drain(ino) + drain(fan)"))
    assert b"secret-name" not in seen, (watch, seen)
    assert [call[0] for call in watch] == [-1, -1, -1, -1], watch


async def test_sysv_shared_memory_cannot_outgrow_the_memory_limit(tmp_path: Path):
    """Under --memory-limit 64M a kernel's IPC namespace held GBs of SysV segments: no limit
    counts them. shmget of 512 MiB (and semaphores, message queues) fail."""
    async with Session(KernelOptions(memory_limit=64 * MiB, warm_later=False)) as small:
        require(small, "syscalls")
        got = await value(small, (
            "import ctypes\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "def outcome(rc):\n"
            "    return [rc, ctypes.get_errno() if rc < 0 else 0]\n"
            f"[outcome(libc.shmget(0, ctypes.c_size_t({512 * MiB}), 0o1600)),\n"
            " outcome(libc.semget(0, 1, 0o1600)), outcome(libc.msgget(0, 0o1600))]"))
    assert [call[0] for call in got] == [-1, -1, -1], got
    assert got[0][1] == errno.EPERM, got


async def test_socket_buffers_cannot_grow_past_the_default(session):
    """Socket buffers are the kernel's memory, not the process's: no RLIMIT_AS counts them. Five hundred
    socketpairs with SO_SNDBUF/SO_RCVBUF raised to 4 MiB held 1.1 GB of host memory under a 512M limit.
    The raise is refused and the buffer keeps the system's default."""
    require(session, "syscalls")
    got = await value(session, (
        "import socket\n"
        "a, b = socket.socketpair()\n"
        "default = a.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)\n"
        "refused = []\n"
        "for option in (socket.SO_SNDBUF, socket.SO_RCVBUF, 32, 33):\n"
        "    try:\n"
        "        a.setsockopt(socket.SOL_SOCKET, option, 4 << 20)\n"
        "    except PermissionError:\n"
        "        refused.append(option)\n"
        "a.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)  # other options still work\n"
        "[refused, a.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) == default]"))
    assert got == [[7, 8, 32, 33], True], got


@pytest.fixture
def host_unix_listeners(tmp_path: Path):
    """The test's own UNIX sockets, as tmux's or an SSH agent's: pathname stream and datagram,
    and an abstract one; all non-blocking, so looking for a connection never waits."""
    path_stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path_stream.bind(str(tmp_path / "tmux.sock"))
    path_dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path_dgram.bind(str(tmp_path / "agent.sock"))
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(f"\0gradrepl-test-{uuid.uuid4().hex}")
    for server in (path_stream, abstract):
        server.listen()
    for server in (path_stream, path_dgram, abstract):
        server.setblocking(False)
    yield {"stream": path_stream, "dgram": path_dgram, "abstract": abstract}
    for server in (path_stream, path_dgram, abstract):
        server.close()


def reached(listeners: dict) -> list[str]:
    """Which listeners saw a connection or a datagram."""
    seen = []
    for name, server in listeners.items():
        try:
            (server.recv if name == "dgram" else server.accept)(*((64,) if name == "dgram" else ()))
            seen.append(name)
        except BlockingIOError:
            pass
    return seen


def unix_attack(listeners: dict) -> str:
    addresses = {name: server.getsockname() for name, server in listeners.items()}
    if isinstance(addresses["abstract"], bytes):
        addresses["abstract"] = addresses["abstract"].decode()
    return (
        "import socket\n"
        "def attempt(action):\n"
        "    try:\n"
        "        action()\n"
        "        return 'ok'\n"
        "    except OSError as exc:\n"
        "        return exc.errno\n"
        "def connect(address, kind=socket.SOCK_STREAM):\n"
        "    s = socket.socket(socket.AF_UNIX, kind)\n"
        "    s.settimeout(5)\n"
        "    (s.sendto(b'ls', address) if kind == socket.SOCK_DGRAM else s.connect(address))\n"
        f"addresses = {addresses!r}\n"
        "{'stream': attempt(lambda: connect(addresses['stream'])),\n"
        " 'dgram': attempt(lambda: connect(addresses['dgram'], socket.SOCK_DGRAM)),\n"
        " 'abstract': attempt(lambda: connect(addresses['abstract'])),\n"
        " 'inet': attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()),\n"
        " 'inet6_udp': attempt(lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close()),\n"
        " 'pair': attempt(lambda: [s.close() for s in socket.socketpair()])}")


async def test_allow_network_opens_internet_sockets_and_no_unix_socket(host_unix_listeners):
    async with Session(KernelOptions(allow_network=True, warm_later=False)) as networked:
        require(networked, "syscalls")
        got = await value(networked, unix_attack(host_unix_listeners))
    assert reached(host_unix_listeners) == [], got
    assert got["stream"] != "ok" and got["dgram"] != "ok" and got["abstract"] != "ok", got
    assert got["inet"] == got["inet6_udp"] == got["pair"] == "ok", got


async def test_without_network_no_unix_socket_either(session, host_unix_listeners):
    require(session, "syscalls")
    got = await value(session, unix_attack(host_unix_listeners))
    assert reached(host_unix_listeners) == [], got
    assert got["pair"] == "ok", got


async def test_the_syscalls_layer_says_what_it_denies(session):
    require(session, "syscalls")
    detail = session.sandbox["syscalls"]["detail"]
    for words in ("ENOSYS", "inotify", "fanotify", "SysV", "AF_INET"):
        assert words in detail, (words, detail)


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize("sockets", ["inet", "none"])
def test_the_filter_assembles_for_each_architecture(arch: str, sockets: str):
    """Only one architecture runs here; the other's program must still assemble (jumps in range)
    and name every call this one refuses by name, where that architecture has it."""
    from gradrepl.kernel.sandbox import seccomp

    table = seccomp._ARCHES[arch]
    assert len(seccomp.build(sockets, 4242, table).assemble()) > 0
    assert table.newest == seccomp.NEWEST and table.numbers["open_tree_attr"] == 467
    wanted = {"inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark", "shmget", "shmat",
              "semget", "msgget", "open_tree", "mount_setattr"}
    assert wanted <= set(table.numbers), wanted - set(table.numbers)
    assert all(number <= table.newest for number in table.numbers.values())


async def test_no_set_uid_or_set_gid_file_can_be_made(tmp_path: Path):
    """The kernel's uid may be the host's root (a frontend run as root, a container): a set-uid copy of
    a program left in scratch or the workspace would outlive the sandbox. chmod, fchmod, fchmodat and
    open/mknod with a set-id mode are refused; ordinary modes still work. Judged from outside too."""
    async with Session(KernelOptions(workspace=str(tmp_path), warm_later=False)) as session:
        require(session, "syscalls")
        got = await value(session, (
            f"import ctypes, os, stat\nos.chdir({str(tmp_path)!r})\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "open('prog', 'w').close()\n"
            "out = {}\n"
            "for name, call in (('chmod', lambda: os.chmod('prog', 0o4755)),\n"
            "                   ('fchmod', lambda: os.fchmod(os.open('prog', os.O_RDONLY), 0o2755)),\n"
            "                   ('fchmodat', lambda: os.chmod('prog', 0o6755, dir_fd=os.open('.', os.O_RDONLY))),\n"
            "                   ('open', lambda: os.open('made', os.O_CREAT | os.O_WRONLY, 0o4755)),\n"
            "                   ('mknod', lambda: os.mknod('node', 0o4644 | stat.S_IFREG)),\n"
            "                   ('plain', lambda: os.chmod('prog', 0o755))):\n"
            "    try:\n"
            "        call()\n"
            "        out[name] = 'ok'\n"
            "    except PermissionError:\n"
            "        out[name] = 'refused'\n"
            "out['mode'] = oct(os.stat('prog').st_mode & 0o7777)\n"
            "out['openat2'] = libc.syscall(437, -100, b'prog', 0, 0) == -1 and ctypes.get_errno()\n"
            "out"))
    assert {key: got[key] for key in ("chmod", "fchmod", "fchmodat", "open", "mknod", "plain")} == {
        "chmod": "refused", "fchmod": "refused", "fchmodat": "refused", "open": "refused", "mknod": "refused",
        "plain": "ok"}, got
    assert got["mode"] == "0o755" and got["openat2"] == errno.ENOSYS, got
    assert os.stat(tmp_path / "prog").st_mode & 0o7777 == 0o755  # as the host sees it
    assert not (tmp_path / "made").exists() and not (tmp_path / "node").exists()
