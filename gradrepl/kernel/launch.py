"""The zygote's process, launched first thing (cli.main, before argparse and asyncio are imported),
so that its torch import overlaps with everything the frontend does until it asks for a kernel.

Imports only what launching needs; client.Zygote adopts the early zygote when its settings match.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys

from gradrepl.kernel import scratch
from gradrepl.kernel.machine import default_disk_limit


def kernel_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the zygote and of spawned kernels."""
    env = dict(os.environ)
    env.setdefault("MALLOC_ARENA_MAX", "2")  # keeps the address space (RLIMIT_AS) predictable
    # torch starts a thread pool at import unless told not to, and a process with
    # threads cannot be forked safely; each kernel sets its own count after forking.
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    env.update(extra or {})
    return env


def launch_zygote(env: dict[str, str], args: list[str]) -> tuple[subprocess.Popen, socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    process = subprocess.Popen(
        [sys.executable, "-m", "gradrepl.kernel.zygote", str(theirs.fileno()), *args], pass_fds=[theirs.fileno()],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    theirs.close()
    return process, ours


class EarlyZygote:
    """A zygote started before the frontend knew it needed one (start_zygote_early)."""

    def __init__(self, env: dict[str, str], args: list[str]):
        self.env = env
        self.args = args  # [scratch folder, disk limit], as Zygote passes them
        self.process, self.sock = launch_zygote(env, args)
        self.claimed = False  # a KernelClient took its scratch folder and will adopt it


_early: EarlyZygote | None = None


def start_zygote_early() -> None:
    """Launch the zygote now, unless one was launched already."""
    global _early
    if _early is None:
        _early = EarlyZygote(kernel_env(), [scratch.make(), str(default_disk_limit())])


def early() -> EarlyZygote | None:
    """The early zygote nobody has adopted yet, if any."""
    return _early


def claim_early_scratch(env: dict[str, str], disk_limit: int) -> str | None:
    """The early zygote's scratch folder, for the first client whose settings it was started with."""
    if _early is None or _early.claimed or (_early.env, _early.args[1]) != (env, str(disk_limit)):
        return None
    _early.claimed = True
    return _early.args[0]


def adopt_early(env: dict[str, str], args: list[str]) -> tuple[subprocess.Popen, socket.socket] | None:
    """The early zygote's process and socket for the Zygote it was claimed for; an early zygote
    started for other settings is of no use and is ended."""
    global _early
    if _early is not None and _early.claimed and (_early.env, _early.args) == (env, args):
        adopted, _early = _early, None
        return adopted.process, adopted.sock
    if _early is not None and not _early.claimed:
        discard_early_zygote()
    return None


def discard_early_zygote() -> None:
    """End an early zygote no Zygote adopted (the command stopped before it needed a kernel)."""
    global _early
    if _early is not None:
        ended, _early = _early, None
        ended.sock.close()
        ended.process.kill()
        ended.process.wait()
        ended.process.stderr.close()
        if not ended.claimed:
            shutil.rmtree(ended.args[0], ignore_errors=True)
