"""A warm template process: imports torch once, then forks a kernel per request.

Forking a warm process gives a fresh kernel in milliseconds instead of the
second or two that importing torch takes. Only what every step needs is
imported before the first kernel; the rest (worker.WARM_LATER: sympy, jedi,
torch._dynamo) follows one module at a time while the zygote and its kernels
are idle (a kernel that used the CPU since the last look is running a step: the
import waits, so it never takes a core from the learner's code), so
later kernels (restarts) have it too. The zygote must never run a tensor
op (an OpenMP thread pool would make a later fork hang) and must stay
single-threaded, which it checks before every fork.

Before importing anything heavy the zygote starts the scratch janitor (janitor.py)
and, in a mount namespace of its own, puts a size-capped tmpfs on scratch: every
kernel it forks shares that tmpfs, so files survive a kernel restart, and they
vanish with the zygote.

Wire: a Unix socketpair with the client. Requests are JSON lines carrying five
file descriptors (SCM_RIGHTS: commands, replies, stdout, stderr, the interrupt target): ``{"op": "fork", "nonce", "policy", "warm_later"}``
(warm_later false: a one-shot command; skip the idle imports). Replies are
JSON lines: ``{"event": "forked", "pid"}``, ``{"event": "exit", "pid", "status"}``
and, once at start, ``{"event": "ready", "pid", "threads"}``.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import select
import signal
import socket
import sys

from gradrepl.host import cgroups
from gradrepl.kernel.sandbox.layers import thread_count


def _send(sock: socket.socket, message: dict) -> None:
    sock.sendall((json.dumps(message) + "\n").encode())


IDLE_BEFORE_WARMING = 0.2  # seconds without a request (and without a busy kernel) before importing the next of worker.WARM_LATER


def _cpu_ticks(pid: int) -> int | None:
    """The CPU time a process has used (user and system, all its threads), in clock ticks; None once gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()  # the name, in parentheses, may hold spaces
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])  # utime and stime, fields 14 and 15 of proc(5)


def _kernels_busy(kernels: dict[int, int | None]) -> bool:
    """Whether any kernel used the CPU since the last look (pid -> its ticks then, updated here): it is
    running a step, and on a small machine an import now would take a core from that step."""
    busy = False
    for pid, seen in kernels.items():
        kernels[pid] = now = _cpu_ticks(pid)
        busy = busy or (now is not None and now != seen)
    return busy


def main() -> None:
    sock = socket.socket(fileno=int(sys.argv[1]))
    sock.setblocking(True)
    scratch_dir, disk_limit = sys.argv[2], int(sys.argv[3])
    from gradrepl.kernel import janitor
    from gradrepl.kernel.sandbox import own_scratch

    janitor_fd = janitor.start(scratch_dir)
    disk = own_scratch(scratch_dir, disk_limit)  # single-threaded still: a user namespace needs that
    # Import what a kernel needs before the first fork, then freeze it so
    # the kernels' garbage collections never rescan these objects. Collections
    # during the import would only rescan what is being frozen (a tenth of torch's import time).
    gc.disable()
    from gradrepl.kernel import worker

    worker.warm_up()

    gc.collect()
    gc.freeze()
    gc.enable()
    later = list(worker.WARM_LATER)
    warm = False  # set by the fork requests: import `later` while idle
    kernels: dict[int, int | None] = {}  # the kernels forked and not yet reaped -> their CPU ticks at the last look
    wakeup_r, wakeup_w = os.pipe()
    os.set_blocking(wakeup_w, False)
    signal.set_wakeup_fd(wakeup_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    _send(sock, {"event": "ready", "pid": os.getpid(), "threads": thread_count()})
    buffer = b""
    while True:
        idle = IDLE_BEFORE_WARMING if later and warm else None
        try:
            readable, _, _ = select.select([sock, wakeup_r], [], [], idle)
        except InterruptedError:
            continue
        if not readable:  # idle, with a kernel running: import one more module for the next kernels
            if _kernels_busy(kernels):
                continue  # a step is running: the learner's code has the CPU first
            importlib.import_module(later.pop(0))
            if not later:
                gc.collect()
                gc.freeze()
            continue
        if wakeup_r in readable:
            os.read(wakeup_r, 512)
            for pid in _reap(sock):
                kernels.pop(pid, None)
        if sock in readable:
            data, fds, _, _ = socket.recv_fds(sock, 1 << 16, 8)
            if not data:
                break  # the client is gone: so are we
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                request = json.loads(line)
                request.get("policy", {})["disk"] = disk
                pid = _fork_kernel(sock, request, fds, wakeup_r, wakeup_w, janitor_fd)
                if pid is not None:
                    kernels[pid] = None  # busy at the first look: it is starting
                fds = []
                warm = bool(request.get("warm_later", True))
    os._exit(0)


def _fork_kernel(sock: socket.socket, request: dict, fds: list[int], *own_fds: int) -> int | None:
    """Fork a kernel on the client's `fds`; its pid (None when refused)."""
    if len(fds) != 5:
        _send(sock, {"event": "error", "error": f"expected 5 fds, got {len(fds)}"})
        for fd in fds:
            os.close(fd)
        return None
    threads = thread_count()
    if threads != 1:
        _send(sock, {"event": "error", "error": f"zygote has {threads} threads; forking is unsafe"})
        for fd in fds:
            os.close(fd)  # else the kernel's pipes never reach EOF when it dies
        return None
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sock.close()
        for fd in own_fds:
            os.close(fd)
        from gradrepl.kernel.worker import serve

        try:
            serve(*fds, request["nonce"], request["policy"])
        finally:
            os._exit(1)
    for fd in fds:
        os.close(fd)
    _send(sock, {"event": "forked", "pid": pid})
    return pid


def _reap(sock: socket.socket) -> list[int]:
    """Wait for the kernels that ended and tell the client; their pids."""
    reaped = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped.append(pid)
        cgroups.forget(pid)  # the kernel's pids cgroup, if it made one
        _send(sock, {"event": "exit", "pid": pid, "status": status})


if __name__ == "__main__":
    main()
