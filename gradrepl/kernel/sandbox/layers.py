"""Hardening applied once in a fresh kernel process, before any learner code runs.

Each layer is detected at run time: where this machine or our privileges lack it,
the layer is reported missing with the reason and the others still apply.
``apply`` must run while the process has a single thread (user namespaces and
Landlock need it), after everything the kernel imports eagerly, and before the
first torch op starts torch's thread pool.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
import site
import sys
from dataclasses import dataclass
from typing import Callable

from gradrepl.host import import_path
from gradrepl.host.budgets import size_text
from gradrepl.kernel.sandbox import capabilities, landlock, mounts, seccomp
from gradrepl.kernel.sandbox import threads as thread_bound  # ("threads" is a count in apply)

_PR_SET_PDEATHSIG, _PR_GET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 2, 38
_M_ARENA_MAX = -8
# What learner code may read besides scratch and the workspace: Python, its libraries, the
# system's shared libraries and data, the course, and the few /proc, /sys, /dev and /etc
# entries that Python, torch and the C library read. Not the home folder, not terminals.
SYSTEM_READABLE = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/usr/local/lib", "/usr/share",
                   "/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/sys/devices/system/cpu",
                   "/dev/null", "/dev/zero", "/dev/full", "/dev/urandom", "/dev/random",
                   "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
                   "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/host.conf",
                   "/etc/gai.conf", "/etc/mime.types")
LESSONS_ENV = "GRADREPL_LESSONS"
OPEN_FILES = 1024            # RLIMIT_NOFILE: plenty for a REPL, bounded for a runaway loop
MALLOC_ARENAS = 2            # fewer arenas keep virtual size close to real use under RLIMIT_AS



@dataclass(frozen=True)
class Policy:
    memory_limit: int            # bytes the learner may allocate on top of the kernel itself
    allow_network: bool
    scratch_dir: str             # the session's scratch dir: cwd, the only writable place
    workspace: str | None        # one more writable folder
    readable: tuple[str, ...] = ()   # more folders learner code may read (a course elsewhere)
    disk: dict | None = None         # the "disk" layer, set up by whoever made scratch (own_scratch)


def own_scratch(folder: str, size: int) -> dict:
    """The "disk" layer: a private, size-capped tmpfs on scratch. Call while single-threaded,
    before any kernel is forked from this process (kernels inherit the mount)."""
    try:
        mounts.unshare(mounts.CLONE_NEWNS)
        return {"active": True, "detail": mounts.private_scratch(folder, size)}
    except OSError as exc:
        return {"active": False, "detail": _reason(exc) + "; scratch is an ordinary folder without a total cap "
                                                          "or a cap on its number of files"}


def readable_folders(policy: Policy) -> list[str]:
    """Every place learner code may read, writable folders aside (see SYSTEM_READABLE)."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    python = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, *site.getsitepackages()}
    user_site = site.getusersitepackages()
    course = [os.environ.get(LESSONS_ENV, ""), os.path.join(os.path.dirname(package), "lessons"),
              os.path.join(package, "course")]
    places = [*sorted(python), user_site, package, *course, *policy.readable, *SYSTEM_READABLE]
    return list(dict.fromkeys(os.path.realpath(p) if not p.startswith("/proc/") else p
                              for p in places if p and os.path.exists(p)))


def apply(policy: Policy) -> dict[str, dict]:
    """Apply every layer this machine supports; returns {layer: {"active", "detail"}}.

    Order matters: namespaces before no_new_privs/Landlock/seccomp, limits before the
    syscall filter (which forbids raising them), RLIMIT_AS late so it measures the process
    as it will be when learner code starts, every capability dropped once nothing needs one,
    the filter last.
    """
    report: dict[str, dict] = {}

    def layer(name: str, step: Callable[[], str]) -> bool:
        try:
            report[name] = {"active": True, "detail": step()}
        except (OSError, ValueError) as exc:
            report[name] = {"active": False, "detail": _reason(exc)}
        return report[name]["active"]

    threads = thread_count()
    layer("process_group", _new_session)
    layer("oom_score", _oom_first)
    finish_threads = thread_bound.start()  # its cgroup first: the host's mounts turn read-only in the namespace
    netns = _namespaces(policy, report)
    report["disk"] = policy.disk or {"active": False, "detail": "missing: scratch was not given a tmpfs of "
                                                                "its own, so its total size is not capped"}
    report["inodes"] = _inode_cap(policy.scratch_dir, report["disk"]["active"])
    layer("parent_death", _parent_death_signal)
    layer("scratch", lambda: _enter_scratch(policy.scratch_dir))
    layer("limits", lambda: _file_limits(policy.memory_limit))
    report["threads"] = finish_threads()
    nnp = layer("no_new_privs", _no_new_privs)
    if nnp:
        report["files"], report["signals"] = _landlock(policy, threads)
    else:
        report["files"] = {"active": False, "detail": "needs no_new_privs"}
        report["signals"] = {"active": False, "detail": "needs no_new_privs"}
    layer("memory", lambda: _address_space(policy.memory_limit))
    layer("capabilities", lambda: _drop_capabilities(threads))
    # Internet sockets where a namespace empties the network or the learner allowed it; never UNIX ones.
    sockets = "inet" if policy.allow_network or netns else "none"
    if nnp:
        filtered = layer("syscalls", lambda: seccomp.install(sockets))
    else:
        filtered = False
        report["syscalls"] = {"active": False, "detail": "needs no_new_privs"}
    if not policy.allow_network:
        report["network"] = _network_report(report["network"], netns, filtered)
    if report["ipc"]["active"]:
        report["ipc"]["detail"] += ("; no SysV segment, semaphore or queue can be made (syscall filter), so "
                                    "none outgrows the memory limit" if filtered else
                                    "; missing: SysV shared memory is not capped without the syscall filter")
    layer("import_path", lambda: import_path.confined([policy.scratch_dir] + _existing(policy.workspace),
                                                      landlocked=report["files"]["active"]))
    applied.update(policy=policy, report=report)
    return report


applied: dict = {}  # the policy and report of this process, for refusals.refusal()


def _inode_cap(scratch_dir: str, own_tmpfs: bool) -> dict:
    """The "inodes" layer: scratch's own tmpfs also caps its number of files (mounts.scratch_inodes)."""
    if not own_tmpfs:
        return {"active": False, "detail": "missing: scratch is no tmpfs of its own, so the number of files in "
                                           "it is not capped (each costs kernel memory no size limit counts)"}
    try:
        files = os.statvfs(scratch_dir).f_files
    except OSError as exc:
        return {"active": False, "detail": _reason(exc)}
    return {"active": True, "detail": f"scratch holds at most {files:,} files and folders in all: each costs "
                                      "kernel memory no size limit counts"}


def _network_report(namespace: dict, netns: bool, filtered: bool) -> dict:
    # A namespace alone leaves UNIX sockets in the filesystem reachable; the filter closes them.
    if netns and filtered:
        return {"active": True, "detail": namespace["detail"] + "; UNIX sockets refused by the syscall filter"}
    if filtered:
        return {"active": True, "detail": f"no namespace ({namespace['detail']}); "
                                          "the syscall filter refuses every new socket"}
    if netns:
        return {"active": False, "detail": "missing: sockets in the filesystem stay reachable without "
                                           "the syscall filter; " + namespace["detail"]}
    return namespace


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"missing: {exc.strerror}" + (f" ({exc.filename})" if exc.filename else "")
    return f"missing: {exc}"


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def thread_count() -> int:
    """Threads of this process (the zygote must fork with one; layers report it)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _existing(folder: str | None) -> list[str]:
    return [folder] if folder and os.path.isdir(folder) else []


def _new_session() -> str:
    # A session of its own: the frontend kills the whole group, and Ctrl-C at the terminal stays out.
    if os.getsid(0) != os.getpid():
        os.setsid()
    return f"own session and process group {os.getpgid(0)}"


def _oom_first() -> str:
    with open("/proc/self/oom_score_adj", "w") as file:
        file.write("1000")
    return "oom_score_adj 1000: the kernel dies first if the machine runs out of memory"


def _namespaces(policy: Policy, report: dict) -> bool:
    """The "network", "ipc" and "mounts" layers: one unshare, then the read-only view. Returns netns."""
    wanted = mounts.CLONE_NEWNS | mounts.CLONE_NEWIPC | (0 if policy.allow_network else mounts.CLONE_NEWNET)
    try:
        got = mounts.unshare(wanted)
    except OSError as exc:
        for name in ("network", "ipc", "mounts"):
            report[name] = {"active": False, "detail": _reason(exc)}
        got = 0
    else:
        user = "user and " if got & mounts.CLONE_NEWUSER else ""
        report["network"] = {"active": True, "detail": f"own {user}network namespace: no interface but a downed "
                                                       "loopback, and no capabilities outside it"}
        report["ipc"] = {"active": True, "detail": "own IPC namespace: the host's SysV shared memory, semaphores "
                                                   "and message queues and its POSIX queues are out of reach"}
        try:
            report["mounts"] = {"active": True, "detail": mounts.read_only_except(
                [policy.scratch_dir] + _existing(policy.workspace))}
        except OSError as exc:
            report["mounts"] = {"active": False, "detail": _reason(exc)}
    if policy.allow_network:
        report["network"] = {"active": False, "detail": "off: network allowed by --allow-network"}
    return bool(got & mounts.CLONE_NEWNET)


def _parent_death_signal() -> str:
    libc = _libc()
    _check(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")
    value = ctypes.c_int(0)
    _check(libc.prctl(_PR_GET_PDEATHSIG, ctypes.byref(value), 0, 0, 0), "prctl(PR_GET_PDEATHSIG)")
    if value.value != signal.SIGKILL:
        raise OSError(errno.EINVAL, "parent-death signal did not stick")
    return f"SIGKILL when parent {os.getppid()} exits"


def _enter_scratch(scratch_dir: str) -> str:
    os.chdir(scratch_dir)
    os.environ["TMPDIR"] = scratch_dir
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = None       # forget a temp dir chosen before
    return f"cwd and TMPDIR {scratch_dir}"


def _file_limits(file_size: int) -> str:
    # Python ignores SIGXFSZ already; say so anyway: an oversized write must be an OSError, not a kill.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    files = OPEN_FILES if hard == resource.RLIM_INFINITY else min(OPEN_FILES, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return f"open files {files}, file size {size_text(file_size)}, core dumps off"


def _address_space(budget: int) -> str:
    arenas = ""
    try:
        if _libc().mallopt(_M_ARENA_MAX, MALLOC_ARENAS) == 1:
            arenas = f", malloc arenas {MALLOC_ARENAS}"
    except AttributeError:                            # not glibc
        pass
    current = _vm_size()
    limit = current + budget
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return f"address space {size_text(limit)} = kernel {size_text(current)} + budget {size_text(budget)}{arenas}"


def out_of_memory(exc: BaseException) -> bool:
    """MemoryError; the SystemError ("error return without exception set", "returned NULL without
    setting an exception") that C code in sympy, torch or the import machinery gives when an allocation
    fails on the limit and it forgets to set MemoryError; or an OSError ENOMEM (the import machinery
    listing a package's folder, such as mpmath's, under a limit of a few MiB); or the ImportError of a
    compiled module whose file is larger than the room the limit leaves (dlopen's "failed to map segment")."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError):
        return exc.errno == errno.ENOMEM
    if isinstance(exc, ImportError):
        return bool(exc.path) and _no_room_for(exc.path)
    return isinstance(exc, SystemError) and address_space_reached()


def _no_room_for(path: str) -> bool:
    """Whether mapping the file at `path` would pass RLIMIT_AS from this process's address space now."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return False
    try:
        return limit - _vm_size() < os.path.getsize(path)
    except MemoryError:
        return True
    except OSError:
        return False


def address_space_reached(slack: int = 1 << 20) -> bool:
    """Whether this process's address space has ever come within `slack` bytes of RLIMIT_AS: the sign
    that an allocation failed on the limit, also where C code then raised no MemoryError."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return False
    try:
        return _status_bytes("VmPeak") >= limit - slack
    except MemoryError:  # too little left even to read the status
        return True
    except OSError:
        return False


def _vm_size() -> int:
    return _status_bytes("VmSize")


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    raise OSError(errno.ENOENT, f"no {field} in /proc/self/status")


def _drop_capabilities(threads: int) -> str:
    detail = capabilities.drop_all()
    if threads > 1:
        detail += f"; {threads - 1} thread(s) started before the sandbox keep theirs"
    return detail


def _no_new_privs() -> str:
    _check(_libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    return "no set-uid or file-capability elevation"


def _landlock(policy: Policy, threads: int) -> tuple[dict, dict]:
    """The "files" and "signals" layers: one Landlock ruleset enforces both."""
    writable = [policy.scratch_dir] + _existing(policy.workspace)
    readable = readable_folders(policy)
    applied["readable"] = readable
    try:
        outcome = landlock.restrict(writable, readable, deny_network=not policy.allow_network)
    except OSError as exc:
        return {"active": False, "detail": _reason(exc)}, {"active": False, "detail": "needs Landlock"}
    extra = []
    if outcome.tcp_denied:
        extra.append("TCP bind/connect refused")
    if outcome.abstract_unix_scoped:
        extra.append("abstract UNIX sockets scoped")
    if policy.workspace and policy.workspace not in outcome.writable:
        extra.append(f"workspace {policy.workspace} missing, not granted")
    if threads > 1:
        extra.append(f"{threads - 1} thread(s) started before the sandbox are not confined")
    tail = "; " + ", ".join(extra) if extra else ""
    files = {"active": True, "detail": f"Landlock ABI {outcome.abi}: read only Python, its libraries, the course "
                                       f"and {len(readable)} allowed places; write only in "
                                       f"{', '.join(outcome.writable)}{tail}"}
    if outcome.signals_scoped:
        return files, {"active": True, "detail": "signals only within the kernel (Landlock scope)"}
    return files, {"active": False, "detail": f"missing: needs Landlock ABI 6 (Linux 6.12), this one has {outcome.abi}"}
