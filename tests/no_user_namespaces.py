"""Run a command as Docker's default seccomp profile would let it run: unshare, and clone into new
namespaces, refused with EPERM (clone3 with ENOSYS, so the C library falls back to clone).

Usage: python tests/no_user_namespaces.py COMMAND [ARGS...]   (x86_64 only)
"""

import ctypes
import os
import struct
import sys

_LD, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06          # classic BPF: load word, jumps, return
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_UNSHARE, _CLONE, _CLONE3 = 272, 56, 435                  # x86_64 numbers
_CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


PROGRAM = b"".join([
    _op(_LD, 0),                                           # the syscall number
    _op(_JEQ, _UNSHARE, 0, 1), _op(_RET, _ERRNO | _EPERM),
    _op(_JEQ, _CLONE3, 0, 1), _op(_RET, _ERRNO | _ENOSYS),
    _op(_JEQ, _CLONE, 0, 3),
    _op(_LD, 16),                                          # clone's flags (first argument, low word)
    _op(_JSET, _CLONE_NEW_ANY, 0, 1), _op(_RET, _ERRNO | _EPERM),
    _op(_RET, _ALLOW),
])


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


if __name__ == "__main__":
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        sys.exit(f"no_new_privs: errno {ctypes.get_errno()}")
    program = _Filter(len(PROGRAM) // 8, PROGRAM)
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        sys.exit(f"seccomp: errno {ctypes.get_errno()}")
    os.execvp(sys.argv[1], sys.argv[1:])
