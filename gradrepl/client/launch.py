"""The zygote's process, launched first thing (cli.main, before argparse and asyncio are imported),
so that its torch import overlaps with everything the frontend does until it asks for a kernel.

Imports only what launching needs; client/zygote_handle.ZygoteHandle adopts the early zygote when its settings match.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys

from gradrepl.host import scratch
from gradrepl.host.budgets import default_disk_limit


# What the zygote and kernels see of the frontend's environment: what Python, torch and the tutor
# read, nothing else. Agent sockets (SSH_AUTH_SOCK), display and bus addresses, tokens and keys stay
# out, as do the PYTHON* variables that would change how code is found or run (PYTHONSTARTUP,
# PYTHONPYCACHEPREFIX, PYTHONINSPECT ...). HOME stays for Python to find the user's site-packages
# at start-up; each kernel then points HOME, the XDG folders and TMPDIR at its scratch folder.
# LD_PRELOAD and LD_AUDIT (code the loader runs in every process) never pass. LD_LIBRARY_PATH does: a
# Python built with a shared libpython (an HPC `module load python`, some conda setups) cannot start
# without it; it adds no folder the frontend did not load from already, and no --workspace may lie
# over one of its folders (host/import_path.unsafe_to_write).
KEPT_ENV = {"PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR",
            "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONUTF8", "PYTHONIOENCODING", "LD_LIBRARY_PATH",
            "MALLOC_ARENA_MAX", "OPENBLAS_NUM_THREADS", "GRADREPL_LESSONS"}
KEPT_ENV_PREFIXES = ("LC_", "OMP_", "MKL_", "KMP_", "GOMP_")
# Lists of folders: an empty or relative entry names a folder under the current one, never kept.
FOLDER_LISTS = ("PATH", "PYTHONPATH", "LD_LIBRARY_PATH")
FOLDER_VALUES = ("GRADREPL_LESSONS",)  # read by the kernel after it moved to scratch: made absolute
# Python's flags for the zygote and spawned kernels. -P (safe path): neither the folder gradrepl was
# started in nor a script's folder goes first on sys.path. Not -I: it would also drop PYTHONPATH and
# the user's site-packages, so a `pip install --user` or a checkout run through PYTHONPATH would no
# longer find the code the frontend found; the allow-list above already keeps every other PYTHON*
# variable out, and host/import_path.py checks that no writable folder of the kernel is an import folder.
PYTHON_FLAGS = ("-P",)
# Their working folder, which no kernel can write (not even with --workspace: import_path refuses "/").
KERNEL_CWD = "/"


def kernel_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the zygote and of spawned kernels: an allow-list of the frontend's."""
    env = {name: value for name, value in os.environ.items()
           if name in KEPT_ENV or name.startswith(KEPT_ENV_PREFIXES)}
    for name in FOLDER_LISTS:
        if name in env:
            env[name] = os.pathsep.join(entry for entry in env[name].split(os.pathsep) if os.path.isabs(entry))
    for name in FOLDER_VALUES:
        if env.get(name):
            env[name] = os.path.abspath(env[name])
    env.setdefault("MALLOC_ARENA_MAX", "2")  # keeps the address space (RLIMIT_AS) predictable
    # torch starts a thread pool at import unless told not to, and a process with
    # threads cannot be forked safely; each kernel sets its own count after forking.
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    env.update(extra or {})
    return env


def python_command(module: str, *args: str) -> list[str]:
    """The command line that runs `module` for the kernel side (the zygote, a spawned worker)."""
    return [sys.executable, *PYTHON_FLAGS, "-m", module, *args]


def launch_zygote(env: dict[str, str], args: list[str]) -> tuple[subprocess.Popen, socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    # A session of its own: the terminal's Ctrl-C (SIGINT to its foreground process group) must not reach
    # the zygote, only the kernel and only through the client. It still ends with the frontend: at EOF
    # on its socket, and its kernels by their parent-death signal.
    process = subprocess.Popen(
        python_command("gradrepl.kernel.zygote", str(theirs.fileno()), *args), pass_fds=[theirs.fileno()],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=KERNEL_CWD,
        start_new_session=True)
    theirs.close()
    return process, ours


class EarlyZygote:
    """A zygote started before the frontend knew it needed one (start_zygote_early)."""

    def __init__(self, env: dict[str, str], args: list[str]):
        self.env = env
        self.args = args  # [scratch folder, disk limit], as ZygoteHandle passes them
        self.process, self.sock = launch_zygote(env, args)
        self.claimed = False  # a KernelClient took its scratch folder and will adopt it


_early: EarlyZygote | None = None

# `gradrepl serve` shares one warm zygote among its learners' tutor processes (gradrepl/serve/): the path
# of its socket, and this learner's scratch folder inside that zygote's tmpfs.
SHARED_ZYGOTE_ENV, SHARED_SCRATCH_ENV = "GRADREPL_SHARED_ZYGOTE", "GRADREPL_SHARED_SCRATCH"


def shared_zygote() -> tuple[str, str] | None:
    """The server's zygote socket and this learner's scratch folder, when a server started this frontend."""
    path, folder = os.environ.get(SHARED_ZYGOTE_ENV), os.environ.get(SHARED_SCRATCH_ENV)
    return (path, folder) if path and folder else None


def connect_shared_zygote(path: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    return sock


def start_zygote_early() -> None:
    """Launch the zygote now, unless one was launched already."""
    global _early
    if _early is None and shared_zygote() is None:
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
    """The early zygote's process and socket for the ZygoteHandle it was claimed for; an early zygote
    started for other settings is of no use and is ended."""
    global _early
    if _early is not None and _early.claimed and (_early.env, _early.args) == (env, args):
        adopted, _early = _early, None
        return adopted.process, adopted.sock
    if _early is not None and not _early.claimed:
        discard_early_zygote()
    return None


def discard_early_zygote() -> None:
    """End an early zygote no ZygoteHandle adopted (the command stopped before it needed a kernel)."""
    global _early
    if _early is not None:
        ended, _early = _early, None
        ended.sock.close()
        ended.process.kill()
        ended.process.wait()
        ended.process.stderr.close()
        if not ended.claimed:
            shutil.rmtree(ended.args[0], ignore_errors=True)
