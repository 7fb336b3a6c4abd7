"""Run a command as on a machine whose memfds cannot be sealed: fcntl(F_ADD_SEALS) fails with EINVAL,
as on Linux before 3.17 (or under a filter that refuses it).

Usage: python tests/no_memfd_sealing.py COMMAND [ARGS...]   (x86_64 only)
"""

import ctypes
import os
import struct
import sys

_LD, _JEQ, _RET = 0x20, 0x15, 0x06                        # classic BPF: load word, jump if equal, return
_ALLOW, _ERRNO, _EINVAL = 0x7FFF0000, 0x00050000, 22
_FCNTL, _F_ADD_SEALS = 72, 1033                           # x86_64 number; fcntl.F_ADD_SEALS
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


PROGRAM = b"".join([
    _op(_LD, 0),                                           # the syscall number
    _op(_JEQ, _FCNTL, 0, 3),
    _op(_LD, 24),                                          # fcntl's command (second argument, low word)
    _op(_JEQ, _F_ADD_SEALS, 0, 1), _op(_RET, _ERRNO | _EINVAL),
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
