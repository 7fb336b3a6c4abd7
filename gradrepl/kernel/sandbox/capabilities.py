"""Drop every capability of this thread through ctypes: bounding, ambient, then the three capset sets.

The kernel sets up its sandbox with full capabilities in a user namespace of its own; any of
them left (CAP_SYS_ADMIN above all) lets the mount API undo the read-only view. The bounding
set goes first because dropping from it needs CAP_SETPCAP, which the capset drop takes away.
Capabilities are per thread: call this while the process has its only thread, and threads
started later inherit the empty sets.
"""

from __future__ import annotations

import ctypes
import errno
import os

_PR_CAPBSET_READ, _PR_CAPBSET_DROP = 23, 24
_PR_SET_SECUREBITS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 28, 47, 4
# Root keeps no capability across exec and the ambient set can never be raised, both locked.
_SECBIT_NOROOT, _SECBIT_NOROOT_LOCKED = 1 << 0, 1 << 1
_SECBIT_NO_CAP_AMBIENT_RAISE, _SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED = 1 << 6, 1 << 7
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _fail(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


def last_cap() -> int:
    """The highest capability this Linux knows (/proc/sys/kernel/cap_last_cap, which Landlock hides
    by the time this runs): the last number PR_CAPBSET_READ accepts."""
    libc, cap = _libc(), 0
    while libc.prctl(_PR_CAPBSET_READ, cap + 1, 0, 0, 0) >= 0:
        cap += 1
    return cap


def drop_all() -> str:
    """Empty the bounding, ambient, inheritable, permitted and effective sets; raise OSError if any
    capability is left afterwards (as /proc/self/status reports it)."""
    libc = _libc()
    top = last_cap()
    locked = libc.prctl(_PR_SET_SECUREBITS, _SECBIT_NOROOT | _SECBIT_NOROOT_LOCKED | _SECBIT_NO_CAP_AMBIENT_RAISE
                        | _SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) == 0
    kept = [cap for cap in range(top + 1)           # EPERM without CAP_SETPCAP (no user namespace)
            if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and libc.prctl(_PR_CAPBSET_READ, cap, 0, 0, 0) != 0]
    if libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        raise _fail("prctl(PR_CAP_AMBIENT_CLEAR_ALL)")
    header, data = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise _fail("capset")
    left = {name: value for name, value in held().items() if value}
    if set(left) == {"CapBnd"} and kept:
        raise OSError(errno.EPERM, f"the bounding set keeps {len(kept)} capabilities (dropping them needs "
                                   "CAP_SETPCAP, which this process never had); the other four sets are "
                                   "empty and no_new_privs keeps exec from using it")
    if left:
        raise OSError(errno.EPERM, "capabilities left: " + ", ".join(f"{k} {v:#x}" for k, v in left.items()))
    root = ", root keeps none across exec" if locked else ""
    return (f"every capability dropped (0..{top}): effective, permitted, inheritable, ambient and "
            f"bounding sets empty{root}")


def held() -> dict[str, int]:
    """This thread's capability sets, as Linux reports them."""
    sets = {}
    with open("/proc/thread-self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in SETS:
                sets[name] = int(value, 16)
    return sets
