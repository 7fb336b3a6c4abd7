"""Run a command on a machine that refuses some calls, as seccomp profiles in the wild do (x86_64 only):

  python tests/refusing_syscalls.py namespaces COMMAND [ARGS...]
      Docker's default profile: unshare, and clone into new namespaces, fail with EPERM (clone3 with
      ENOSYS, so the C library falls back to clone).
  python tests/refusing_syscalls.py memfd-seals COMMAND [ARGS...]
      memfds cannot be sealed: fcntl(F_ADD_SEALS) fails with EINVAL, as on Linux before 3.17.
"""

import ctypes
import os
import struct
import sys

_LD, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06           # classic BPF: load word, jumps, return
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _EINVAL, _ENOSYS = 1, 22, 38
_FCNTL, _UNSHARE, _CLONE, _CLONE3 = 72, 272, 56, 435      # x86_64 numbers
_F_ADD_SEALS = 1033
_CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_NR, _ARG0, _ARG1 = 0, 16, 24                              # offsets in seccomp_data (low words)
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


PROGRAMS = {
    "namespaces": [
        _op(_LD, _NR),
        _op(_JEQ, _UNSHARE, 0, 1), _op(_RET, _ERRNO | _EPERM),
        _op(_JEQ, _CLONE3, 0, 1), _op(_RET, _ERRNO | _ENOSYS),
        _op(_JEQ, _CLONE, 0, 3),
        _op(_LD, _ARG0),                                   # clone's flags
        _op(_JSET, _CLONE_NEW_ANY, 0, 1), _op(_RET, _ERRNO | _EPERM),
        _op(_RET, _ALLOW),
    ],
    "memfd-seals": [
        _op(_LD, _NR),
        _op(_JEQ, _FCNTL, 0, 3),
        _op(_LD, _ARG1),                                   # fcntl's command
        _op(_JEQ, _F_ADD_SEALS, 0, 1), _op(_RET, _ERRNO | _EINVAL),
        _op(_RET, _ALLOW),
    ],
}


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def command(refused: str, *argv: str) -> list[str]:
    """The command line that runs `argv` with `refused` calls refused."""
    assert refused in PROGRAMS, refused
    return [sys.executable, os.path.abspath(__file__), refused, *argv]


if __name__ == "__main__":
    program = b"".join(PROGRAMS[sys.argv[1]])
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        sys.exit(f"no_new_privs: errno {ctypes.get_errno()}")
    installed = _Filter(len(program) // 8, program)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(installed), 0, 0) != 0:
        sys.exit(f"seccomp: errno {ctypes.get_errno()}")
    os.execvp(sys.argv[2], sys.argv[2:])
