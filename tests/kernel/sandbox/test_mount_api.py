"""The read-only view of host files holds against the mount API, judged from the test process.

Learner code once cloned a mount of GRADREPL_HOME with open_tree_attr (a syscall the filter
did not know), cleared its read-only flag and changed modes, times and xattrs of host files
through the clone. Each attack below ends with chmod (a setuid bit), utime and setxattr on
a host file; the test then looks at that file from outside.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
from pathlib import Path

import pytest
from tests.support.process import run_in_fork

from gradrepl.kernel.sandbox import mounts


def attack(point: str, folder: str, name: str) -> dict:
    """Every way the mount API offers to make ``folder`` writable again, each followed by metadata
    writes to ``folder/name``. Runs inside the sandbox; returns [rc, errno] per call and, per view,
    what the writes did ("changed" or the errno)."""
    import ctypes
    import os

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    class MountAttr(ctypes.Structure):
        _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                    ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]

    at_fdcwd, at_empty_path, at_recursive = -100, 0x1000, 0x8000
    open_tree_clone, o_cloexec = 1, 0o2000000
    ms_remount, ms_bind = 32, 4096
    kept = {"nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048, "relatime": 1 << 21}
    writable = MountAttr(0, 1, 0, 0)                    # clear MOUNT_ATTR_RDONLY
    out: dict = {}

    def call(key: str, rc: int) -> int:
        out[key] = [int(rc), ctypes.get_errno() if rc < 0 else 0]
        return int(rc)

    def writes(view: str, dir_fd: int | None) -> None:
        path = f"/proc/self/fd/{dir_fd}/{name}" if dir_fd is not None else os.path.join(folder, name)
        results = []
        for action in (lambda: os.chmod(path, 0o4777), lambda: os.utime(path, (0, 0)),
                       lambda: os.setxattr(path, "user.pwned", b"1")):
            try:
                action()
                results.append("changed")
            except OSError as exc:
                results.append(exc.errno)
        out[view] = results

    flags = ms_remount | ms_bind
    for line in open("/proc/self/mountinfo"):
        fields = line.split()
        if fields[4] == point:
            flags |= sum(kept.get(option, 0) for option in fields[5].split(","))
    call("remount_rw", libc.mount(None, point.encode(), None, flags, None))
    writes("after_remount", None)
    call("setattr_rw", libc.syscall(442, at_fdcwd, point.encode(), 0, ctypes.byref(writable),
                                    ctypes.sizeof(writable)))
    writes("after_setattr", None)
    clone = call("open_tree", libc.syscall(428, at_fdcwd, folder.encode(), open_tree_clone | o_cloexec | at_recursive))
    if clone >= 0:
        call("clone_setattr_rw", libc.syscall(442, clone, b"", at_empty_path, ctypes.byref(writable),
                                              ctypes.sizeof(writable)))
        writes("through_open_tree", clone)
    clone = call("open_tree_attr", libc.syscall(467, at_fdcwd, folder.encode(),
                                                open_tree_clone | o_cloexec | at_recursive,
                                                ctypes.byref(writable), ctypes.sizeof(writable)))
    if clone >= 0:
        writes("through_open_tree_attr", clone)
    return out


def mount_point(path: Path) -> str:
    """The mount point holding ``path`` (the longest one that is a prefix of it)."""
    real = os.path.realpath(path)
    points = [line.split()[4] for line in open("/proc/self/mountinfo")]
    return max((p for p in points if real == p or real.startswith(p.rstrip("/") + "/")), key=len)


@pytest.fixture
def host_file(gradrepl_home: Path) -> Path:
    """An executable in GRADREPL_HOME, as the tutor's own files are."""
    gradrepl_home.mkdir(exist_ok=True)
    victim = gradrepl_home / "tool"
    victim.write_text("#!/bin/sh\n")
    victim.chmod(0o755)
    return victim


def metadata(path: Path) -> tuple:
    info = path.stat()
    return info.st_mode, info.st_mtime_ns, info.st_atime_ns, sorted(os.listxattr(path))


def refused(out: dict, allowed: tuple[str, ...] = ()) -> None:
    """Every call that could make the folder writable failed (but the ``allowed`` ones), and no
    write went through."""
    for key, value in out.items():
        if key.startswith(("after_", "through_")):
            assert "changed" not in value, (key, value, out)
        elif key not in allowed:
            assert value[0] == -1, (key, value, out)


async def test_no_mount_api_call_makes_host_files_writable_in_a_kernel(session, host_file: Path):
    before = metadata(host_file)
    source = inspect.getsource(attack)
    arguments = (mount_point(host_file.parent), str(host_file.parent), host_file.name)
    result = await session.execute(f"{source}\nimport json\njson.dumps(attack(*{arguments!r}))")
    assert result.error is None, result.error
    out = json.loads(ast.literal_eval(result.result))
    assert metadata(host_file) == before, (metadata(host_file), before, out)
    refused(out)


def test_the_read_only_mounts_are_locked_even_with_every_capability(tmp_path: Path, host_file: Path):
    """The lock alone, without the filter or the capability drop: a process with full capabilities
    in its user namespace still cannot make the read-only mounts writable again."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    before = metadata(host_file)

    def child() -> dict:
        try:
            mounts.unshare(mounts.CLONE_NEWNS)
        except OSError as exc:
            return {"skip": f"no mount namespace here: {exc}"}
        detail = mounts.read_only_except([str(scratch)])
        return {"detail": detail, "out": attack(mount_point(host_file.parent), str(host_file.parent),
                                                host_file.name)}

    got = run_in_fork(child)
    if "skip" in got:
        pytest.skip(got["skip"])
    assert metadata(host_file) == before, (metadata(host_file), before, got)
    refused(got["out"], allowed=("open_tree",))          # a clone, yes; a writable one, no
    assert "through_open_tree" in got["out"], got        # the clone was tried for writes
    assert "locked in" in got["detail"], got["detail"]
