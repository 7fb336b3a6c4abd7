"""The "threads" layer: a bound on how many threads one kernel runs at once.

No size limit counts threads: RLIMIT_AS counts only their stacks, which
``threading.stack_size`` makes small, so a loop starting threads could take every
pid of the machine (pid_max is often 32,768) and the kernel memory of each task.
Two bounds, each used where the machine offers it:

- **a pids cgroup** of the kernel's own (cgroup v1's pids hierarchy, or v2 where the
  frontend's cgroup delegates the pids controller): ``pids.max`` counts every task
  in it. It is made and joined before the namespaces, while the host's mounts can
  still be written. A cgroup is a folder outside scratch, so it is removed once its
  kernel is gone: by the zygote when it reaps a kernel, by the janitor when the
  zygote ends, and by every kernel start for those of kernels that died unreaped.
- **RLIMIT_NPROC inside the kernel's own user namespace**: Linux counts tasks per
  (user namespace, uid), so the bound holds for this kernel alone, not for the other
  kernels and processes of the same user. It never binds root (uid 0), and without a
  user namespace of its own it would count every process of the user on the
  machine; in those cases it is not set.
"""

from __future__ import annotations

import os
import resource
from typing import Callable

from gradrepl.host.cgroups import CGROUP_PREFIX, pids_parent, remove, sweep

THREAD_LIMIT = 256           # threads of one kernel at once: torch's pools take a handful


def start(limit: int = THREAD_LIMIT) -> Callable[[], dict]:
    """Join a pids cgroup of this process's own now (before unshare); the returned call, made after
    the namespaces, sets RLIMIT_NPROC where it counts this kernel alone and gives the layer's report."""
    namespace = _user_namespace()
    try:
        cgroup, why_not = join_cgroup(limit), ""
    except (OSError, ValueError, IndexError) as exc:  # IndexError, ValueError: a table we could not read
        cgroup, why_not = None, getattr(exc, "strerror", None) or str(exc)

    def finish() -> dict:
        try:
            rlimit, why_no_rlimit = _own_nproc_limit(limit, namespace)
        except (OSError, ValueError) as exc:
            rlimit, why_no_rlimit = False, f"could not be set ({exc})"
        ways = ([f"pids.max of its own cgroup {cgroup}"] if cgroup else []) + (
            ["RLIMIT_NPROC in its own user namespace"] if rlimit else [])
        if ways:
            return {"active": True, "detail": f"at most {limit} threads at once: " + " and ".join(ways)}
        return {"active": False, "detail": f"missing: no pids cgroup ({why_not}), and RLIMIT_NPROC "
                                           f"{why_no_rlimit}; threads are bounded only by the memory limit"}

    return finish


def join_cgroup(limit: int) -> str:
    """Make a pids cgroup for this process with pids.max = ``limit`` and move into it; returns its path."""
    parent = pids_parent()
    sweep(parent)
    own = os.path.join(parent, f"{CGROUP_PREFIX}{os.getpid()}")
    try:
        os.mkdir(own, 0o755)
    except FileExistsError:
        pass  # left by a dead kernel that had this pid: empty, so ours now
    except OSError as exc:
        raise OSError(exc.errno, f"{parent} cannot be written here ({exc.strerror})") from None
    try:
        for name, value in (("pids.max", limit), ("cgroup.procs", os.getpid())):
            with open(os.path.join(own, name), "w") as file:
                file.write(str(value))
    except OSError as exc:
        remove(own)
        raise OSError(exc.errno, f"joining {own}: {exc.strerror}") from None
    return own


def room_for_stacks(threads: int, spare: int = 0) -> bool:
    """Whether RLIMIT_AS leaves room for ``threads`` more thread stacks (glibc's default size: RLIMIT_STACK)
    and ``spare`` bytes besides."""
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return True
    stack = resource.getrlimit(resource.RLIMIT_STACK)[0]
    stack = 8 << 20 if stack == resource.RLIM_INFINITY else stack
    try:
        with open("/proc/self/status") as status:
            size = next(int(line.split()[1]) << 10 for line in status if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return False
    return size + threads * (stack + (64 << 10)) + spare <= limit  # 64 KiB: guard page and thread data


def _own_nproc_limit(limit: int, namespace_before: int | None) -> tuple[bool, str]:
    """Set RLIMIT_NPROC if it counts this kernel's tasks alone; (set, why not)."""
    if os.getuid() == 0:
        return False, "does not bind root (uid 0)"
    if namespace_before is None or _user_namespace() == namespace_before:
        return False, "would count every process of this user without a user namespace of the kernel's own"
    _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    bound = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(resource.RLIMIT_NPROC, (bound, bound))
    return True, ""


def _user_namespace() -> int | None:
    try:
        return os.stat("/proc/self/ns/user").st_ino
    except OSError:
        return None
