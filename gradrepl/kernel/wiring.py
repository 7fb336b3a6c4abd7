"""What every kernel process does around its requests, torch or not: the full kernel (worker.py) and
the sympy-only one (symbolic_kernel.py) hold only the descriptors they need, keep caches in scratch,
and never send a reply past the protocol's cap. Imports neither torch nor sympy."""

from __future__ import annotations

import gc
import io
import json
import os
import sys
from typing import Callable, NamedTuple

from gradrepl.kernel import sandbox
from gradrepl.kernel.guard import cap
from gradrepl.kernel.streams import write_all
from gradrepl.protocol import messages as protocol


def home_in_scratch(scratch: str) -> None:
    """Caches (jedi's, torch's, matplotlib's) go to scratch: the sandbox refuses writes anywhere else."""
    for var in ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        os.environ[var] = scratch


def close_all_but(keep: set[int]) -> None:
    """Close every descriptor the kernel was handed or inherited but does not need: learner code can
    reach each one it holds (through /proc/self/fd)."""
    try:
        held = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        held = range(os.sysconf("SC_OPEN_MAX"))
    for fd in held:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the listing's own descriptor, closed already


def bounded_reply(answer: dict) -> bytes:
    """The reply as one line the client accepts: never past protocol.REPLY_CAP."""
    data = protocol.encode(answer)
    if len(data) <= protocol.REPLY_CAP:
        return data
    return protocol.encode(protocol.reply(answer.get("id"), ok=False, error={  # views/remarks.REQUEST_ERRORS
        "code": "reply_too_large", "names": {"mib": len(data) >> 20, "cap_mib": protocol.REPLY_CAP >> 20}}))


class SpawnArgs(NamedTuple):
    """What a spawned kernel is given on its command line, as its serve() takes it."""
    cmd_fd: int
    reply_fd: int
    out_fd: int
    err_fd: int
    interrupt_fd: int
    nonce: str
    policy: dict


def spawn_args(argv: list[str] | None = None) -> SpawnArgs:
    """``CMD REPLY OUT ERR INTERRUPT NONCE POLICY_JSON`` (client/kernel_client.py spawns so), sys.argv's
    unless given. No zygote: the policy's disk is a scratch tmpfs of this kernel's own (files do not outlive it)."""
    args = sys.argv[1:] if argv is None else argv
    cmd_fd, reply_fd, out_fd, err_fd, interrupt_fd = (int(a) for a in args[:5])
    policy = json.loads(args[6])
    policy["disk"] = sandbox.own_scratch(policy["scratch_dir"], policy["disk_limit"])
    return SpawnArgs(cmd_fd, reply_fd, out_fd, err_fd, interrupt_fd, args[5], policy)


def send_ready(reply_fd: int, layers: dict, **more) -> None:
    """The ready line the client waits for: this kernel's pid and sandbox layers, and `more` (torch's version)."""
    write_all(reply_fd, protocol.encode({"v": protocol.PROTOCOL_VERSION, "type": "ready", "pid": os.getpid(),
                                         "sandbox": layers, **more}))


def wire_fds(cmd_fd: int, reply_fd: int, out_fd: int, err_fd: int) -> None:
    """stdout and stderr to their pipes, stdin from /dev/null, and no other descriptor held."""
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    close_all_but({0, 1, 2, cmd_fd, reply_fd})


def harden(policy: dict) -> dict:
    """Into scratch, then every sandbox layer the policy asks for; the layers as the ready line reports them."""
    os.chdir(policy["scratch_dir"])
    home_in_scratch(policy["scratch_dir"])
    if policy.get("nice"):  # gradrepl serve's kernels yield the CPU to its learners' screens
        os.nice(max(0, min(19, int(policy["nice"]))))
    return sandbox.apply(sandbox.Policy(
        memory_limit=policy["memory_limit"], allow_network=policy["allow_network"],
        scratch_dir=policy["scratch_dir"], workspace=policy.get("workspace"),
        readable=tuple(policy.get("readable", ())), disk=policy.get("disk")))


def out_of_memory_reply(msg_id) -> dict:
    """The failed reply of a request the kernel ran out of memory answering, as both kernels say it."""
    return protocol.reply(msg_id, ok=False, exhausted="memory",
                          error="MemoryError: the kernel ran out of memory while answering")


def _failed(msg_id, exc: Exception) -> dict:
    """The reply to a request that raised: the error's own words; out of memory (a limit of a few MiB:
    decoding the request, or the words of the error, can fail again) said as the kernels say it, in a
    reply built after what the failed work held is freed."""
    if not sandbox.out_of_memory(exc):
        try:
            return protocol.reply(msg_id, ok=False, error=cap(f"{type(exc).__name__}: {exc}"))
        except MemoryError:
            pass
    del exc
    gc.collect()
    return out_of_memory_reply(msg_id)


def answer_requests(cmd_fd: int, reply_fd: int, handle: Callable[[dict], dict], bounded=None) -> None:
    """Read a request, `handle` it, reply, until EOF or `shutdown`. A request that raises gets a failed
    reply; it never ends the kernel. `bounded` is the reply's encoder (worker.py's, bendable by tests)."""
    bounded = bounded or bounded_reply
    reader = io.BufferedReader(os.fdopen(cmd_fd, "rb", buffering=0), 1 << 16)
    while True:
        try:
            line = reader.readline()
        except KeyboardInterrupt:  # an interrupt that arrived between steps: nothing to stop
            continue
        if not line:
            break
        message: dict = {}
        try:
            message = protocol.decode(line)
            answer = handle(message)
        except KeyboardInterrupt:
            answer = protocol.reply(message.get("id"), ok=False, error="interrupted")
        except Exception as exc:  # a bad request must not kill the kernel
            answer = _failed(message.get("id"), exc)
        try:
            try:
                write_all(reply_fd, bounded(answer))
            except MemoryError:  # the reply itself did not fit under the limit: say so in a small one
                answer = None
                gc.collect()
                write_all(reply_fd, bounded(out_of_memory_reply(message.get("id"))))
        except BrokenPipeError:
            break
        if message.get("op") == "shutdown":
            break
