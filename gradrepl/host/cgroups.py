"""Where a kernel's pids cgroup lives, and its removal once the kernel is gone (kernel/sandbox/threads.py
makes and joins it). Only the standard library: the zygote, the janitor and the client (for a spawned
kernel, which no zygote reaps) each clear the cgroups of kernels they saw end."""

from __future__ import annotations

import errno
import os
import time

from gradrepl.host.scratch import pid_alive

CGROUP_PREFIX = "gradrepl-kernel-"   # + the kernel's pid


def pids_parent() -> str:
    """The folder of this process's cgroup in a hierarchy with the pids controller (OSError if none)."""
    with open("/proc/self/cgroup") as table:
        entries = [line.rstrip("\n").split(":", 2) for line in table if line.count(":") >= 2]
    v1 = next((path for _, controllers, path in entries if "pids" in controllers.split(",")), None)
    v2 = next((path for _, controllers, path in entries if controllers == ""), None)
    for root, point, fstype, options in _cgroup_mounts():
        if v1 is not None and fstype == "cgroup" and "pids" in options:
            return os.path.normpath(os.path.join(point, _below(v1, root)))
        if v1 is None and v2 is not None and fstype == "cgroup2":
            folder = os.path.normpath(os.path.join(point, _below(v2, root)))
            with open(os.path.join(folder, "cgroup.subtree_control")) as control:
                if "pids" not in control.read().split():
                    raise OSError(errno.ENOTSUP, f"the pids controller is not delegated to {folder}")
            return folder
    raise OSError(errno.ENOENT, "no pids cgroup controller on this machine")


def sweep(parent: str | None = None) -> None:
    """Remove the cgroups of kernels that are gone (an rmdir of one still in use fails, harmlessly)."""
    try:
        parent = parent or pids_parent()
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        pid = name[len(CGROUP_PREFIX):]
        if name.startswith(CGROUP_PREFIX) and pid.isdigit() and not pid_alive(int(pid)):
            remove(os.path.join(parent, name))


def forget(pid: int) -> None:
    """Remove the cgroup of a kernel just reaped (the zygote, or the client for a spawned kernel)."""
    try:
        remove(os.path.join(pids_parent(), f"{CGROUP_PREFIX}{pid}"))
    except OSError:
        pass


def sweep_after_exit(seconds: float = 2.0) -> None:
    """Sweep a few times while the kernels of a zygote that just ended die (the janitor calls this)."""
    deadline = time.monotonic() + seconds
    while True:
        sweep()
        if time.monotonic() > deadline:
            return
        time.sleep(0.2)


def _cgroup_mounts() -> list[tuple[str, str, str, list[str]]]:
    """(root, mount point, fstype, super options) of the cgroup mounts this process sees."""
    found = []  # (mount points of cgroups hold no spaces: mountinfo's escapes are not undone)
    with open("/proc/self/mountinfo") as table:
        for line in table:
            fields = line.split()
            if " - " not in line:
                continue
            tail = line.split(" - ", 1)[1].split()
            if tail and tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[3], fields[4], tail[0], tail[2].split(",") if len(tail) > 2 else []))
    return found


def _below(path: str, root: str) -> str:
    # A mount of a hierarchy's subtree (a container's) shows paths below its root.
    if root != "/" and (path == root or path.startswith(root.rstrip("/") + "/")):
        path = path[len(root):]
    return path.lstrip("/")


def remove(folder: str) -> None:
    try:
        os.rmdir(folder)
    except OSError:
        pass
