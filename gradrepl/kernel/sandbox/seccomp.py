"""A seccomp filter for the kernel process, as a hand-built BPF program (ctypes only).

A deny-list over the calls the filter knows, and a default-deny above them: any number
past the newest call reviewed here (``_Arch.newest``) answers ENOSYS, as on an older Linux,
so a call added to Linux later (open_tree_attr passed that way once) is refused until it
is reviewed, and the C library and Python fall back as they do on older kernels (EPERM
would read as a real refusal and break that fallback). Every named denial fails with
EPERM, so learner code sees a PermissionError and the kernel lives on. Threads stay
allowed (torch's pools): ``clone`` passes only with CLONE_THREAD, and ``clone3`` (whose
flags hide behind a pointer) answers ENOSYS so the C library falls back to ``clone``.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from dataclasses import dataclass

# struct seccomp_data: nr at 0, arch at 4, args[i] at 16 + 8*i (little-endian halves).
_ARCH_OFFSET = 4
_NR_OFFSET = 0

# Classic BPF opcodes.
_LD_ABS = 0x20     # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15        # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35        # BPF_JMP | BPF_JGE | BPF_K (unsigned)
_JSET = 0x45       # BPF_JMP | BPF_JSET | BPF_K
_AND = 0x54        # BPF_ALU | BPF_AND | BPF_K
_RET = 0x06        # BPF_RET | BPF_K

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_PR_SET_PDEATHSIG = 1
_CLONE_THREAD = 0x00010000
# CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: a thread must not take new namespaces.
_CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10
# Socket types: socket() makes internet stream and datagram sockets only (no raw, no SCTP);
# a UNIX socketpair may also be a seqpacket one.
_INET_TYPES = (1, 2)
_PAIR_TYPES = (1, 2, 5)
_SOCKET_TYPE_MASK = 0xF        # SOCK_NONBLOCK and SOCK_CLOEXEC live above it
# setsockopt(SOL_SOCKET, ...) options that grow a socket's buffers past the system default: memory the
# kernel holds for a socket is not the process's, so RLIMIT_AS never counts it (SO_SNDBUF, SO_RCVBUF
# and their FORCE forms). At the default (net.core.wmem_default) open files bound it.
_SOL_SOCKET = 1
# Calls that set a file's mode, and which argument holds it: no set-uid or set-gid bit. The kernel's uid
# may be the host's root (a frontend run as root, a container), and a set-uid copy of a program left in
# the workspace would outlive the sandbox. openat2 hides its mode behind a pointer: ENOSYS, so libc
# falls back to openat.
_MODE_ARG = {"chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2, "open": 2, "openat": 3, "creat": 1,
             "mknod": 1, "mknodat": 2}
_SET_ID_BITS = 0o6000
_BUFFER_OPTIONS = (7, 8, 32, 33)
_PRIO_PROCESS, _IOPRIO_WHO_PROCESS = 0, 1
# What socket() may create: AF_INET/AF_INET6 only ("inet", also with --allow-network: a UNIX
# socket reaches the host's tmux server or SSH agent by path or abstract name), or nothing.
SOCKETS = ("inet", "none")
_X32_SYSCALL_BIT = 0x40000000


@dataclass(frozen=True)
class _Arch:
    audit: int                 # AUDIT_ARCH_* value seen in seccomp_data.arch
    seccomp: int               # number of the seccomp syscall itself
    numbers: dict[str, int]    # syscall name -> number
    newest: int                # the newest call reviewed for this table: every number above it is refused


# From the kernel's unistd_64.h (x86_64) and asm-generic/unistd.h (aarch64). Both tables were
# reviewed up to open_tree_attr (467, Linux 6.15); file_getattr/file_setattr (468, 469) and later
# calls answer ENOSYS until someone reviews them and raises NEWEST.
NEWEST = 467
_X86_64 = _Arch(0xC000003E, 317, {
    "socket": 41, "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "kill": 62,
    "ptrace": 101, "rt_sigqueueinfo": 129, "personality": 135, "pivot_root": 155,
    "prctl": 157, "adjtimex": 159, "setrlimit": 160, "chroot": 161, "acct": 163,
    "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168,
    "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173,
    "init_module": 175, "delete_module": 176, "quotactl": 179, "tkill": 200,
    "clock_settime": 227, "tgkill": 234, "kexec_load": 246, "add_key": 248,
    "request_key": 249, "keyctl": 250, "unshare": 272, "rt_tgsigqueueinfo": 297,
    "perf_event_open": 298, "prlimit64": 302, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313,
    "kexec_file_load": 320, "bpf": 321, "execveat": 322, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438,
    "mount_setattr": 442, "socketpair": 53, "setsockopt": 54, "setpriority": 141, "sched_setparam": 142,
    "sched_setscheduler": 144, "sched_setaffinity": 203, "ioprio_set": 251, "migrate_pages": 256,
    "move_pages": 279, "sched_setattr": 314, "memfd_create": 319, "memfd_secret": 447,
    "open_tree_attr": 467, "inotify_init": 253, "inotify_init1": 294, "inotify_add_watch": 254,
    "fanotify_init": 300, "fanotify_mark": 301, "shmget": 29, "shmat": 30, "semget": 64, "msgget": 68,
    "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "open": 2, "openat": 257, "creat": 85,
    "mknod": 133, "mknodat": 259, "openat2": 437,
}, NEWEST)
_AARCH64 = _Arch(0xC00000B7, 277, {
    "socket": 198, "clone": 220, "execve": 221, "kill": 129, "ptrace": 117,
    "rt_sigqueueinfo": 138, "personality": 92, "pivot_root": 41, "prctl": 167,
    "adjtimex": 171, "setrlimit": 164, "chroot": 51, "acct": 89, "settimeofday": 170,
    "mount": 40, "umount2": 39, "swapon": 224, "swapoff": 225, "reboot": 142,
    "sethostname": 161, "setdomainname": 162, "init_module": 105, "delete_module": 106,
    "quotactl": 60, "tkill": 130, "clock_settime": 112, "tgkill": 131, "kexec_load": 104,
    "add_key": 217, "request_key": 218, "keyctl": 219, "unshare": 97,
    "rt_tgsigqueueinfo": 240, "perf_event_open": 241, "prlimit64": 261,
    "name_to_handle_at": 264, "open_by_handle_at": 265, "clock_adjtime": 266,
    "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271, "finit_module": 273,
    "kexec_file_load": 294, "bpf": 280, "execveat": 281, "userfaultfd": 282,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438,
    "mount_setattr": 442, "socketpair": 199, "setsockopt": 208, "setpriority": 140, "sched_setparam": 118,
    "sched_setscheduler": 119, "sched_setaffinity": 122, "ioprio_set": 30, "migrate_pages": 238,
    "move_pages": 239, "sched_setattr": 274, "memfd_create": 279, "memfd_secret": 447,
    "fchmod": 52, "fchmodat": 53, "fchmodat2": 452, "openat": 56, "mknodat": 33, "openat2": 437,
    "open_tree_attr": 467, "inotify_init1": 26, "inotify_add_watch": 27,
    "fanotify_init": 262, "fanotify_mark": 263, "shmget": 194, "shmat": 196, "semget": 190, "msgget": 186,
}, NEWEST)
_ARCHES = {"x86_64": _X86_64, "amd64": _X86_64, "aarch64": _AARCH64, "arm64": _AARCH64}

# Denied outright: new programs, other processes' memory, the machine's state.
_DENIED = (
    "fork", "vfork", "execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev",
    "mount", "umount2", "pivot_root", "chroot", "open_tree", "open_tree_attr", "move_mount", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns", "bpf",
    "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "settimeofday", "clock_settime",
    "adjtimex", "clock_adjtime", "sethostname", "setdomainname", "iopl", "ioperm",
    "personality", "keyctl", "add_key", "request_key", "name_to_handle_at",
    "open_by_handle_at", "pidfd_open", "pidfd_getfd", "setrlimit", "tkill",
    # memfd pages are counted by no limit; moving pages reaches other processes' memory.
    "memfd_create", "memfd_secret", "migrate_pages", "move_pages",
    # Watches report names and activity in folders Landlock hides, and keystroke timing on a terminal.
    "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark",
    # SysV segments outlive their mappings and no limit counts them (RLIMIT_AS only while attached):
    # denied rather than capped, since the namespace's shmmax/shmall sysctls are writable only by its
    # root, which an ordinary user's kernel does not map. No 64-bit ABI here has the ipc() multiplexer.
    "shmget", "shmat", "semget", "msgget",
)
# Scheduling and I/O priority calls: (syscall, ((argument, allowed values but the pid), ...)).
# The pid argument may only name the kernel itself (0 or its own pid).
_SELF_ONLY = (
    ("setpriority", ((0, (_PRIO_PROCESS,)),), 1),
    ("ioprio_set", ((0, (_IOPRIO_WHO_PROCESS,)),), 1),
    ("sched_setaffinity", (), 0),
    ("sched_setscheduler", (), 0),
    ("sched_setparam", (), 0),
    ("sched_setattr", (), 0),
)


class _Program:
    """A tiny assembler: instructions whose jump targets are labels, resolved at the end."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int]] = []
        self.labels: dict[str, int] = {}
        self._fresh = 0

    def label(self) -> str:
        self._fresh += 1
        return f"L{self._fresh}"

    def mark(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def emit(self, code: int, k: int = 0, jt: int | str = 0, jf: int | str = 0) -> None:
        self.code.append((code, jt, jf, k & 0xFFFFFFFF))

    def load(self, offset: int) -> None:
        self.emit(_LD_ABS, offset)

    def ret(self, value: int) -> None:
        self.emit(_RET, value)

    def assemble(self) -> ctypes.Array:
        filters = (_SockFilter * len(self.code))()
        for pos, (code, jt, jf, k) in enumerate(self.code):
            filters[pos] = _SockFilter(code, self._offset(pos, jt), self._offset(pos, jf), k)
        return filters

    def _offset(self, pos: int, target: int | str) -> int:
        if isinstance(target, int):
            return target
        offset = self.labels[target] - pos - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"seccomp jump out of range: {offset}")
        return offset


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _arg_low(index: int) -> int:
    return 16 + 8 * index


def _arg_high(index: int) -> int:
    return 20 + 8 * index


def _errno(code: int) -> int:
    return _RET_ERRNO | code


def build(sockets: str, own_pid: int, arch: _Arch) -> _Program:
    """The filter: a deny-list over ``arch``, default-deny above its newest call; ``sockets`` is one of SOCKETS."""
    if sockets not in SOCKETS:
        raise ValueError(f"sockets must be one of {SOCKETS}, not {sockets!r}")
    prog = _Program()
    eperm = _errno(errno.EPERM)
    prog.load(_ARCH_OFFSET)
    prog.emit(_JEQ, arch.audit, 1, 0)
    prog.ret(eperm)                                   # a foreign ABI (e.g. int 0x80) gets nothing
    prog.load(_NR_OFFSET)
    if arch is _X86_64:
        prog.emit(_JGE, _X32_SYSCALL_BIT, 0, 1)
        prog.ret(eperm)                               # the x32 ABI reuses numbers with a high bit
    prog.emit(_JGE, arch.newest + 1, 0, 1)
    prog.ret(_errno(errno.ENOSYS))                    # newer than this table: unknown, so refused
    for name in _DENIED:
        if name in arch.numbers:
            nxt = prog.label()
            prog.emit(_JEQ, arch.numbers[name], 0, nxt)
            prog.ret(eperm)
            prog.mark(nxt)
    _clone_needs_thread(prog, arch)
    _nonzero_arg_denied(prog, arch.numbers["prlimit64"], 2)         # reading limits is fine
    _arg_denied(prog, arch.numbers["prctl"], 0, _PR_SET_PDEATHSIG)
    # A connected pair reaches nothing outside (asyncio's event loop makes one): UNIX pairs only.
    _socket_kinds(prog, arch.numbers["socketpair"], (_AF_UNIX,), _PAIR_TYPES)
    _socket_buffers_fixed(prog, arch.numbers["setsockopt"])
    for name, index in _MODE_ARG.items():
        if name in arch.numbers:
            _arg_denied(prog, arch.numbers[name], index, _SET_ID_BITS, _JSET)
    nxt = prog.label()
    prog.emit(_JEQ, arch.numbers["openat2"], 0, nxt)
    prog.ret(_errno(errno.ENOSYS))
    prog.mark(nxt)
    if sockets == "none":
        nxt = prog.label()
        prog.emit(_JEQ, arch.numbers["socket"], 0, nxt)
        prog.ret(eperm)
        prog.mark(nxt)
    else:
        # Internet stream and datagram sockets only: no UNIX socket (a network namespace does not
        # cover those bound in the filesystem, and --allow-network means the internet, not the
        # host's tmux server), no netlink, packet, vsock or raw sockets.
        _socket_kinds(prog, arch.numbers["socket"], (_AF_INET, _AF_INET6), _INET_TYPES)
    for name, fixed, pid_arg in _SELF_ONLY:
        _self_only(prog, arch.numbers[name], fixed, pid_arg, own_pid)
    # Signals only to itself: the kernel must not reach the frontend or other processes.
    own = (own_pid, -own_pid & 0xFFFFFFFF)
    _arg_in_allowed(prog, arch.numbers["kill"], 0, (0, *own))
    for name in ("tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        _arg_in_allowed(prog, arch.numbers[name], 0, (own_pid,))
    prog.ret(_RET_ALLOW)
    return prog


def _clone_needs_thread(prog: _Program, arch: _Arch) -> None:
    nxt, allow = prog.label(), prog.label()
    prog.emit(_JEQ, arch.numbers["clone3"], 0, nxt)
    prog.ret(_errno(errno.ENOSYS))                   # libc then retries with clone()
    prog.mark(nxt)
    nxt = prog.label()
    prog.emit(_JEQ, arch.numbers["clone"], 0, nxt)
    prog.load(_arg_low(0))
    prog.emit(_JSET, _CLONE_NEW_ANY, 0, 1)
    prog.ret(_errno(errno.EPERM))                    # a thread in new namespaces escapes the filter's intent
    prog.emit(_JSET, _CLONE_THREAD, allow, 0)
    prog.ret(_errno(errno.EPERM))
    prog.mark(allow)
    prog.ret(_RET_ALLOW)
    prog.mark(nxt)
    prog.load(_NR_OFFSET)


def _nonzero_arg_denied(prog: _Program, nr: int, index: int) -> None:
    nxt, deny = prog.label(), prog.label()
    prog.emit(_JEQ, nr, 0, nxt)
    prog.load(_arg_low(index))
    prog.emit(_JEQ, 0, 0, deny)
    prog.load(_arg_high(index))
    prog.emit(_JEQ, 0, 0, deny)
    prog.ret(_RET_ALLOW)
    prog.mark(deny)
    prog.ret(_errno(errno.EPERM))
    prog.mark(nxt)
    prog.load(_NR_OFFSET)


def _arg_denied(prog: _Program, nr: int, index: int, value: int, test: int = _JEQ) -> None:
    """Deny ``nr`` when its argument passes ``test`` against ``value`` (_JEQ: equals; _JSET: has any of
    those bits)."""
    nxt = prog.label()
    prog.emit(_JEQ, nr, 0, nxt)
    prog.load(_arg_low(index))
    prog.emit(test, value, 0, 1)
    prog.ret(_errno(errno.EPERM))
    prog.ret(_RET_ALLOW)
    prog.mark(nxt)


def _socket_kinds(prog: _Program, nr: int, domains: tuple[int, ...], kinds: tuple[int, ...]) -> None:
    nxt, deny, domain_ok = prog.label(), prog.label(), prog.label()
    prog.emit(_JEQ, nr, 0, nxt)
    prog.load(_arg_low(0))
    _one_of(prog, domains, domain_ok, deny)
    prog.mark(domain_ok)
    prog.load(_arg_low(1))
    prog.emit(_AND, _SOCKET_TYPE_MASK)
    for kind in kinds:
        prog.emit(_JEQ, kind, 0, 1)
        prog.ret(_RET_ALLOW)
    prog.mark(deny)
    prog.ret(_errno(errno.EPERM))
    prog.mark(nxt)
    prog.load(_NR_OFFSET)


def _socket_buffers_fixed(prog: _Program, nr: int) -> None:
    nxt, allow = prog.label(), prog.label()
    prog.emit(_JEQ, nr, 0, nxt)
    prog.load(_arg_low(1))
    prog.emit(_JEQ, _SOL_SOCKET, 0, allow)
    prog.load(_arg_low(2))
    for option in _BUFFER_OPTIONS:
        prog.emit(_JEQ, option, 0, 1)
        prog.ret(_errno(errno.EPERM))
    prog.mark(allow)
    prog.ret(_RET_ALLOW)
    prog.mark(nxt)
    prog.load(_NR_OFFSET)


def _one_of(prog: _Program, values: tuple[int, ...], match: str, otherwise: str) -> None:
    """Jump to ``match`` if the accumulator is one of ``values``, else to ``otherwise``."""
    for position, value in enumerate(values):
        prog.emit(_JEQ, value, match, otherwise if position == len(values) - 1 else 0)


def _self_only(prog: _Program, nr: int, fixed: tuple, pid_arg: int, own_pid: int) -> None:
    """Allow ``nr`` only when each fixed argument has an allowed value and the pid is 0 or ours."""
    nxt, deny = prog.label(), prog.label()
    prog.emit(_JEQ, nr, 0, nxt)
    for index, values in fixed:
        ok = prog.label()
        prog.load(_arg_low(index))
        _one_of(prog, values, ok, deny)
        prog.mark(ok)
    prog.load(_arg_low(pid_arg))
    prog.emit(_JEQ, 0, 1, 0)
    prog.emit(_JEQ, own_pid, 0, deny)
    prog.ret(_RET_ALLOW)
    prog.mark(deny)
    prog.ret(_errno(errno.EPERM))
    prog.mark(nxt)
    prog.load(_NR_OFFSET)


def _arg_in_allowed(prog: _Program, nr: int, index: int, values: tuple[int, ...]) -> None:
    # pid_t is 32 bits and the kernel reads only the low half, so comparing it is exact.
    nxt, allow = prog.label(), prog.label()
    prog.emit(_JEQ, nr, 0, nxt)
    prog.load(_arg_low(index))
    for value in values:
        prog.emit(_JEQ, value, allow, 0)
    prog.ret(_errno(errno.EPERM))
    prog.mark(allow)
    prog.ret(_RET_ALLOW)
    prog.mark(nxt)
    prog.load(_NR_OFFSET)


def install(sockets: str) -> str:
    """Load the filter on every thread of this process; returns what it denies.

    Raises OSError with the reason when the machine or architecture lacks seccomp.
    Needs no_new_privs (or CAP_SYS_ADMIN) to be set first.
    """
    arch = _ARCHES.get(platform.machine().lower())
    if arch is None:
        raise OSError(errno.ENOSYS, f"no syscall table for architecture {platform.machine()}")
    prog = build(sockets, os.getpid(), arch)
    filters = prog.assemble()
    fprog = _SockFprog(len(filters), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    rc = libc.syscall(ctypes.c_long(arch.seccomp), ctypes.c_long(_SECCOMP_SET_MODE_FILTER),
                      ctypes.c_long(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(fprog))
    if rc != 0:
        code = ctypes.get_errno() if rc < 0 else errno.EBUSY
        raise OSError(code, f"seccomp filter refused: {os.strerror(code)}")
    sockets_words = {"inet": "sockets other than AF_INET/AF_INET6 stream or datagram (no UNIX socket "
                              "by path or abstract name; UNIX socketpairs only)",
                     "none": "every new socket (UNIX socketpairs only)"}[sockets]
    return (f"{len(filters)}-instruction BPF filter: calls newer than {arch.newest} answer ENOSYS; denied: "
            f"exec, fork (threads allowed), ptrace, mount API (open_tree_attr too), namespaces (threads "
            f"too), bpf, io_uring, memfd, inotify and fanotify, SysV IPC (shmget, shmat, semget, msgget), "
            f"raising limits, signals and scheduling of other processes, socket buffers grown past the "
            f"system default (SO_SNDBUF, SO_RCVBUF), set-uid and set-gid modes, {sockets_words}")
