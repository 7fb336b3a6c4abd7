"""Namespaces and mounts through ctypes: own IPC, network and mount namespaces; a read-only view.

Landlock has no right for metadata (chmod, chown, utime, xattrs), so in a private
mount namespace every mount but scratch and the workspace is remounted read-only:
those calls then fail with EROFS everywhere else. The view is then copied into one more
user and mount namespace: Linux locks the flags of mounts copied into a namespace owned
by a less privileged user namespace, so even with every capability there no remount,
mount_setattr or open_tree clone can clear the read-only flag. The scratch folder can also get
a size-limited tmpfs of its own (``private_scratch``), which caps what learner code
writes in total and vanishes with the last process that sees it. Its number of files
is capped too: an empty file costs about 1 KiB of kernel memory that no size counts.
"""

from __future__ import annotations

import ctypes
import errno
import os

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x08000000, 0x10000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_NOATIME, _MS_NODIRATIME = 32, 4096, 1024, 2048
_MS_REC, _MS_PRIVATE, _MS_RELATIME, _MS_STRICTATIME = 16384, 1 << 18, 1 << 21, 1 << 24
# Per-mount options a remount must repeat: an unprivileged namespace may not drop them.
BYTES_PER_INODE = 16 << 10   # scratch holds one file or folder per 16 KiB of its size...
MIN_INODES = 1024            # ...and at least this many, for a small --disk-limit
_KEPT = {"nosuid": _MS_NOSUID, "nodev": _MS_NODEV, "noexec": _MS_NOEXEC, "noatime": _MS_NOATIME,
         "nodiratime": _MS_NODIRATIME, "relatime": _MS_RELATIME, "strictatime": _MS_STRICTATIME}
_PROC = "/proc"     # made read-only after the lock, which writes the new user namespace's id maps there


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _fail(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


def unshare(flags: int) -> int:
    """Enter new namespaces; with CLONE_NEWUSER our own uid and gid stay mapped. Returns the flags got.

    Without a user namespace (not offered, or the process already has threads) the
    same namespaces are tried alone, which works for root only.
    """
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(flags | CLONE_NEWUSER) == 0:
        _map_ids(uid, gid)
        return flags | CLONE_NEWUSER
    first = _fail("unshare with a user namespace")
    if libc.unshare(flags) == 0:
        return flags
    second = _fail("unshare without one")
    hint = " (the process already had threads)" if first.errno == errno.EINVAL else ""
    raise OSError(second.errno, f"{first.strerror}{hint}; {second.strerror}")


def _map_ids(uid: int, gid: int) -> bool:
    # Files keep showing their real owners, and tmpfs can be mounted; unmapped ids would read as nobody.
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as file:
                file.write(text)
        except OSError:
            return False
    return True


def scratch_inodes(size: int) -> int:
    """How many files and folders a scratch tmpfs of ``size`` bytes holds (its nr_inodes)."""
    return max(MIN_INODES, size // BYTES_PER_INODE)


def private_scratch(folder: str, size: int) -> str:
    """Mount a tmpfs of ``size`` bytes and scratch_inodes(size) files on ``folder`` (needs a mount
    namespace of our own)."""
    libc = _libc()
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise _fail("making mounts private")
    inodes = scratch_inodes(size)
    options = f"size={size},nr_inodes={inodes},mode=0700,uid={os.getuid()},gid={os.getgid()}".encode()
    if libc.mount(b"gradrepl-scratch", folder.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options) != 0:
        raise _fail(f"mounting a tmpfs on {folder}")
    return (f"scratch is a private tmpfs of {size >> 20} MiB and {inodes:,} files and folders: "
            "writes past either fail with ENOSPC")


def read_only_except(writable: list[str]) -> str:
    """Remount every mount read-only except the ``writable`` folders (bound onto themselves first),
    then lock that view (``lock``). /proc goes read-only last: the lock writes this process's id maps there."""
    libc = _libc()
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise _fail("making mounts private")
    for folder in writable:
        if libc.mount(folder.encode(), folder.encode(), None, _MS_BIND | _MS_REC, None) != 0:
            raise _fail(f"binding {folder}")
    kept, failed = 0, []
    table = _mounts()
    for point, options in table:
        if point == _PROC or any(point == folder or point.startswith(folder.rstrip("/") + "/")
                                 for folder in writable):
            continue
        if _remount_read_only(libc, point, options):
            kept += 1
        elif point == "/":
            raise _fail("remounting / read-only")
        else:
            failed.append(point)
    try:
        locked = lock()
    except OSError as exc:
        locked = (f"not locked ({exc.strerror}): only the capability drop and the syscall filter keep "
                  "them read-only")
    for options in [options for point, options in table if point == _PROC]:
        if _remount_read_only(libc, _PROC, options):
            kept += 1
        else:
            failed.append(_PROC)
    tail = f"; still writable: {', '.join(failed)}" if failed else ""
    return (f"own mount namespace: {kept} mounts read-only, so permissions, owners, times and "
            f"extended attributes change only in {', '.join(writable)}; {locked}{tail}")


def _remount_read_only(libc: ctypes.CDLL, point: str, options: str) -> bool:
    flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
    for option in options.split(","):
        flags |= _KEPT.get(option, 0)
    return libc.mount(None, point.encode(), None, flags, None) == 0


def lock() -> str:
    """Enter one more user and mount namespace. Linux locks the flags (read-only, nosuid, nodev,
    noexec, atime) of every mount copied into a namespace owned by a less privileged user namespace,
    and mounts' places too, so nothing here can clear them again: not a remount, not mount_setattr,
    not an open_tree clone. The namespaces made before (network, IPC) stay owned by the outer one."""
    uid, gid = os.getuid(), os.getgid()
    if _libc().unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        raise _fail("unshare of a user and mount namespace")
    mapped = "" if _map_ids(uid, gid) else " (ids not mapped: owners read as nobody)"
    return f"locked in a further user namespace, so no remount or mount API call can clear read-only{mapped}"


def _mounts() -> list[tuple[str, str]]:
    """(mount point, per-mount options) of this namespace, parents first."""
    points = []
    with open("/proc/self/mountinfo") as table:
        for line in table:
            fields = line.split()
            points.append((_unescape(fields[4]), fields[5]))
    return points


def _unescape(field: str) -> str:
    # mountinfo writes space, tab, newline and backslash as octal escapes.
    for code in ("\\040", "\\011", "\\012", "\\134"):
        field = field.replace(code, chr(int(code[1:], 8)))
    return field
