"""Which layer refused an error of learner code, as data: a code and the names its words need.

The words are the frontend's (views/refusals.py); the kernel knows the policy (folders, caps) and
the error, so it sends those. An error the sandbox did not cause gives None.
"""

from __future__ import annotations

import errno
import os
import socket
import traceback

from gradrepl.host import import_path
from gradrepl.kernel.sandbox import mounts
from gradrepl.kernel.sandbox import threads as thread_bound
from gradrepl.kernel.sandbox.layers import applied, thread_count

# Words in the failing frames (file, function, line) that tell which layer refused.
_PROCESS_WORDS = ("fork", "exec", "spawn", "subprocess", "popen", "system(", "multiprocessing", "dataloader")
_NETWORK_WORDS = ("socket", "connect", "urlopen", "http", "requests")

Refusal = tuple[str, dict[str, str]]


def refusal(exc: BaseException) -> Refusal | None:
    """(code, names) for an error the sandbox caused in learner code, or None if it is not one of ours."""
    if not applied:
        return None
    policy, report = applied["policy"], applied["report"]
    reason = getattr(exc, "reason", None)              # urllib wraps the socket error
    if isinstance(reason, BaseException) and reason is not exc:
        return refusal(reason)
    writable = [policy.scratch_dir] + ([policy.workspace] if policy.workspace else [])
    places = {"places": " or ".join(writable)}
    network = report["network"]["active"]
    if network and isinstance(exc, socket.gaierror):
        return "no_network_lookup", {}
    # torch.save and other C++ writers say the errno in a RuntimeError's words.
    read_only = (isinstance(exc, OSError) and exc.errno == errno.EROFS) or (
        type(exc) is RuntimeError and os.strerror(errno.EROFS) in str(exc))
    if read_only and report["mounts"]["active"]:
        return _read_only_cwd(writable) or ("read_only_outside", places)
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC and report["disk"]["active"]:
        files = _files_if_all_used(policy.scratch_dir)
        if files is not None:
            return "scratch_files_used", {"scratch": policy.scratch_dir, "files": f"{files:,}",
                                          "per_file": f"{mounts.BYTES_PER_INODE >> 10} KiB"}
        return "scratch_full", {"scratch": policy.scratch_dir}
    if type(exc) is RuntimeError and "can't start new thread" in str(exc) and report["threads"]["active"] \
            and thread_count() >= thread_bound.THREAD_LIMIT - 1:
        return "thread_limit", {"threads": str(thread_bound.THREAD_LIMIT)}
    if not isinstance(exc, PermissionError):
        return None
    if exc.filename and report["files"]["active"]:
        if not _beneath(str(exc.filename), applied.get("readable", []) + writable):
            return "read_refused", {**places, "given": "".join(f"{folder}, " for folder in policy.readable)}
        return _read_only_cwd(writable) or ("write_outside", places)
    frames = traceback.extract_tb(exc.__traceback__)
    text = " ".join(f"{frame.filename} {frame.name} {frame.line}" for frame in frames).lower()
    if report["syscalls"]["active"] and any(word in text for word in _PROCESS_WORDS):
        return "no_processes", {}
    if network and any(word in text for word in _NETWORK_WORDS):
        return "no_network", {}
    if report["syscalls"]["active"] and exc.errno == errno.EPERM and not exc.filename:
        return "syscall_refused", {}
    return None


def _read_only_cwd(writable: list[str]) -> Refusal | None:
    """A write refused in the current folder when that is no writable one (a run's script folder,
    kernel/script_run.py), or None."""
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    if _beneath(cwd, writable):
        return None
    return "read_only_script_folder", {"cwd": cwd, "places": " or ".join(writable)}


def _files_if_all_used(scratch_dir: str) -> int | None:
    """Scratch's cap on files when no file is left (an ENOSPC from inodes, not bytes), else None."""
    try:
        state = os.statvfs(scratch_dir)
    except OSError:
        return None
    return state.f_files if state.f_files and not state.f_ffree else None


def _beneath(path: str, folders: list) -> bool:
    try:
        path = os.path.realpath(path)
    except (OSError, ValueError):
        return False
    return any(folder and import_path.within(path, folder) for folder in folders)
