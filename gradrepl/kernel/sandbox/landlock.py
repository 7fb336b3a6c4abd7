"""Landlock through ctypes: read only an allow-list of folders, write only in a few.

Depending on the ABI the running Linux offers, the same ruleset also refuses TCP
bind/connect (ABI 4) and signals or abstract UNIX sockets that leave the sandbox
(ABI 6). Landlock confines the calling thread and its future threads, so apply it
before any other thread starts.
"""

from __future__ import annotations

import ctypes
import errno
import os
from dataclasses import dataclass

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446   # the same on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# Filesystem rights, by the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

_READ = READ_FILE | READ_DIR
_WRITE_DIR = (WRITE_FILE | READ_FILE | READ_DIR | REMOVE_DIR | REMOVE_FILE | MAKE_DIR
              | MAKE_REG | MAKE_SYM | MAKE_FIFO | REFER | TRUNCATE)
# Device files learner code (and Python) may open for writing.
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@dataclass(frozen=True)
class Outcome:
    """What the ruleset enforces, for the sandbox report."""

    abi: int
    writable: tuple[str, ...]
    tcp_denied: bool
    signals_scoped: bool
    abstract_unix_scoped: bool


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """The Landlock ABI this Linux offers; raises OSError with the reason when it has none."""
    rc = _libc().syscall(ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0),
                         ctypes.c_uint32(_CREATE_RULESET_VERSION))
    if rc < 0:
        code = ctypes.get_errno()
        reason = {errno.ENOSYS: "not built into this Linux", errno.EOPNOTSUPP: "disabled at boot"}
        raise OSError(code, f"Landlock {reason.get(code, os.strerror(code))}")
    return int(rc)


def restrict(writable: list[str], readable: list[str], deny_network: bool) -> Outcome:
    """Confine this thread: reads only under ``readable`` and ``writable``, writes only under
    ``writable`` and a few devices. Paths that do not exist are left out.

    With ``deny_network`` (and ABI >= 4), TCP bind/connect are refused too. Signals and
    abstract UNIX sockets leaving the sandbox are always refused (ABI >= 6): --allow-network
    opens the internet, not the host's abstract sockets.
    Requires no_new_privs. Raises OSError with the reason on failure.
    """
    abi = abi_version()
    libc = _libc()
    handled_fs = _FS_BY_ABI.get(abi, _FS_BY_ABI[5])
    attr = _RulesetAttr(handled_fs, 0, 0)
    size = 8                                                   # ABI 1-3 know only the fs field
    if abi >= 4:
        size = 16
        if deny_network:
            attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        attr.scoped = _SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET
    ruleset = libc.syscall(ctypes.c_long(_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"landlock_create_ruleset: {os.strerror(code)}")
    try:
        for path in readable:
            if os.path.isdir(path):
                _allow(libc, ruleset, path, _READ & handled_fs)
            elif os.path.exists(path):
                _allow(libc, ruleset, path, READ_FILE & handled_fs)  # directory rights are refused on files
        granted = []
        for folder in writable:
            _allow(libc, ruleset, folder, _WRITE_DIR & handled_fs)
            granted.append(folder)
        for device in WRITABLE_DEVICES:
            if os.path.exists(device):
                _allow(libc, ruleset, device, (WRITE_FILE | TRUNCATE) & handled_fs)
        if libc.syscall(ctypes.c_long(_RESTRICT_SELF), ctypes.c_long(ruleset), ctypes.c_uint32(0)) < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"landlock_restrict_self: {os.strerror(code)}")
    finally:
        os.close(ruleset)
    return Outcome(abi, tuple(granted), deny_network and abi >= 4, abi >= 6, abi >= 6)


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneathAttr(access, fd)
        rc = libc.syscall(ctypes.c_long(_ADD_RULE), ctypes.c_long(ruleset), ctypes.c_long(_RULE_PATH_BENEATH),
                          ctypes.byref(rule), ctypes.c_uint32(0))
        if rc < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"landlock_add_rule({path}): {os.strerror(code)}")
    finally:
        os.close(fd)
