"""KernelClient: start kernels, talk to them, and replace them when they die.

Every frontend reaches the kernel through this one class (via Session). It
gives the rungs of the interrupt ladder (interrupt, kill, replace); Session
climbs it: SIGINT, a grace period, then SIGKILL and a fresh kernel, with the
reason put in words for the learner.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from gradrepl.client import launch
from gradrepl.client.deaths import ForkFailed, KernelDied, KernelOverdue, describe_exit
from gradrepl.client.interrupt_target import InterruptTarget
from gradrepl.client.options import KernelOptions
from gradrepl.client.pipes import OutputPipe, ReplyChannel, REPLIES_LAYER
from gradrepl.client.zygote_handle import ZygoteHandle
from gradrepl.host import cgroups, scratch
from gradrepl.host.budgets import default_disk_limit, default_memory_limit
from gradrepl.protocol import messages as protocol
from gradrepl.protocol.interrupt_word import ANY_STEP

INTERRUPT_GRACE = 2.0    # seconds a step gets to stop after SIGINT before it is killed
OUTPUT_SETTLE = 2.0      # seconds to wait for a step's output after its reply
ZYGOTE_NEWS_WAIT = 2.0   # seconds a failed start waits to hear whether the template process died
# Seconds the frontend waits for the reply to a request other than a step before it kills the kernel: past
# the kernel's own limit (OP_SECONDS, its SIGALRM), which learner code run by the request can ignore or
# catch, and which a kernel that stopped itself (SIGSTOP) never reaches. SIGINT stops no request (only a
# step), so this is the ladder's one rung for requests.
REQUEST_DEADLINE = protocol.OP_SECONDS + 10.0
STOPPED_KILLED = "the kernel had stopped itself (SIGSTOP), so it answered nothing, and it was killed"


@dataclass
class KernelProcess:
    """One running kernel as the client sees it."""

    pid: int
    nonce: str
    commands: asyncio.WriteTransport
    replies: ReplyChannel
    stdout: OutputPipe
    stderr: OutputPipe
    exited: asyncio.Future  # resolves to the wait status
    target: InterruptTarget | None = None  # which step a SIGINT is meant for
    ready: dict = field(default_factory=dict)
    started_ms: float = 0.0
    death: str | None = None  # why it ended, once a request lost it: for a request that waited behind that one

    def kill(self) -> None:
        """SIGKILL the kernel's whole process group (its pipes stay readable for last words)."""
        for target in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, signal.SIGKILL)):
            try:
                target()
            except (ProcessLookupError, PermissionError):
                pass

    def close(self) -> None:
        """Kill the kernel and let go of its pipes: nothing more will be read from it."""
        self.kill()
        self.commands.close()
        for transport in (self.stdout.transport, self.stderr.transport, self.replies.transport):
            if transport:
                transport.close()
        if self.target:
            self.target.close()
            self.target = None


class KernelClient:
    """Starts a kernel, sends it requests, and keeps one running."""

    def __init__(self, options: KernelOptions | None = None):
        self.options = options or KernelOptions()
        shared = launch.shared_zygote()
        self.scratch_dir = shared[1] if shared else (
            launch.claim_early_scratch(self.env(), self.policy_disk_limit()) or scratch.make())
        self.kernel: KernelProcess | None = None
        self.zygote: ZygoteHandle | None = None
        self.mode = "spawn" if self.options.spawn else "fork"
        self._lock = asyncio.Lock()  # one request at a time, or one Pipeline
        self._replacing = asyncio.Lock()  # one fresh kernel for one death, however many requests it took
        self._death_reason: str | None = None
        self.restarts = 0

    # -- lifecycle ------------------------------------------------------
    def policy_disk_limit(self) -> int:
        return self.options.disk_limit or default_disk_limit()

    def policy(self) -> dict:
        return {"memory_limit": self.options.memory_limit or default_memory_limit(),
                "disk_limit": self.policy_disk_limit(),
                "allow_network": self.options.allow_network, "scratch_dir": self.scratch_dir,
                "workspace": self.options.workspace, "readable": list(self.options.readable),
                "script": self.options.script, "argv": list(self.options.argv)}

    def env(self) -> dict[str, str]:
        return launch.kernel_env(self.options.extra_env)

    async def start(self) -> KernelProcess:
        """Start the zygote (unless spawning) and one kernel; returns when it is ready."""
        if self.mode == "fork" and self.zygote is None:
            self.zygote = ZygoteHandle(self.env(), self.scratch_dir, self.policy()["disk_limit"])
            await self.zygote.start()
        self.kernel = await self._new_kernel()
        return self.kernel

    async def _new_kernel(self) -> KernelProcess:
        if self.mode == "fork":
            try:
                return await self._open_kernel()
            except KernelDied as died:
                if not await self._zygote_unusable(died):
                    raise
            self._without_zygote()
            try:
                return await self._open_kernel()
            except KernelDied:
                # The fresh interpreter started while the server raised a new template on a loaded
                # machine: one more start before the learner is told there is no kernel.
                return await self._open_kernel()
        return await self._open_kernel()

    async def _zygote_unusable(self, died: KernelDied) -> bool:
        """Whether a fork that failed with `died` leaves the template no use: it could not fork, or took our
        pipes and died (ForkFailed: a kernel it may have forked on them must not share the next one's), or
        the kernel died with it (parent-death signal, a moment before the template's socket says so)."""
        return isinstance(died, ForkFailed) or await self.zygote.stopped(ZYGOTE_NEWS_WAIT)

    def _without_zygote(self) -> None:
        self.mode = "spawn"  # no warm template: fall back to a fresh interpreter on fresh pipes
        if launch.shared_zygote():  # its scratch was inside the server's zygote: gone with it
            self.scratch_dir = scratch.make()

    async def _open_kernel(self) -> KernelProcess:
        started = time.perf_counter()
        nonce = secrets.token_hex(8)
        cmd_r, cmd_w = os.pipe()
        reply_r, reply_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        target, target_fd, page_layer = InterruptTarget.create()
        theirs, ours = [cmd_r, reply_w, out_w, err_w, target_fd], [cmd_w, reply_r, out_r, err_r]
        try:
            if self.mode == "fork":
                pid, exited = await self.zygote.fork(theirs, nonce, self.policy(), self.options.warm_later)
            else:
                # As the zygote is started (launch.py): safe path, from "/", in a session of its own.
                process = await asyncio.create_subprocess_exec(
                    *launch.python_command(self.options.kernel_module, *map(str, theirs), nonce,
                                           json.dumps(self.policy())),
                    pass_fds=theirs, env=self.env(), cwd=launch.KERNEL_CWD, start_new_session=True,
                    stdin=asyncio.subprocess.DEVNULL, stdout=err_w, stderr=err_w)  # start-up errors stay off the screen
                pid = process.pid
                exited = asyncio.get_running_loop().create_future()
                asyncio.create_task(_resolve_wait(process, exited))
        except BaseException:
            for fd in ours:
                os.close(fd)
            if target is not None:
                target.close()
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        loop = asyncio.get_running_loop()
        commands, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(cmd_w, "wb", 0))
        stdout, stderr = OutputPipe(out_r, nonce), OutputPipe(err_r, nonce)
        await stdout.start()
        await stderr.start()
        kernel = KernelProcess(pid, nonce, commands, None, stdout, stderr, exited, target)
        kernel.replies = ReplyChannel(reply_r, kernel.kill)
        await kernel.replies.start()
        ready = await kernel.replies.await_reply(None, None)
        if ready is None:
            kernel.close()
            status = await _status_soon(exited)
            # An exited kernel's pipe ends soon: wait for all it said (on a loaded machine that is not 0.5 s).
            text, _ = await stderr.step_output(-1, 5.0 if status is not None else 0.5)
            reason = kernel.replies.broken or describe_exit(status, self.options.runs_learner_code)
            raise KernelDied(f"the kernel failed to start: {reason}\n{text.strip()}")
        # The frontend's own layers, beside those the kernel applied to itself (gradrepl doctor lists both).
        ready["sandbox"].update(interrupt_page=page_layer, replies=REPLIES_LAYER)
        kernel.ready = ready
        kernel.started_ms = round((time.perf_counter() - started) * 1000, 2)
        return kernel

    async def replace(self, dead: KernelProcess | None = None) -> KernelProcess:
        """Kill the current kernel (if alive) and start a fresh one. With ``dead``, the kernel a request lost:
        when another request that lost it already started the fresh one, that one is kept."""
        async with self._replacing:
            if dead is not None and self.kernel is not None and self.kernel is not dead:
                return self.kernel
            old = self.kernel
            if old is not None:
                old.close()
            self.kernel = None
            self.restarts += 1
            self.kernel = await self._new_kernel()
            return self.kernel

    async def close(self) -> None:
        if self.kernel:
            self.kernel.close()
            self.kernel = None
        if self.zygote:
            await self.zygote.close()
            self.zygote = None
        shutil.rmtree(self.scratch_dir, ignore_errors=True)

    # -- requests -------------------------------------------------------
    @property
    def in_flight(self) -> bool:
        """A request waits for its reply."""
        return self.kernel is not None and bool(self.kernel.replies.waiting)

    async def request(self, op: str, timeout: float | None = None, **fields) -> dict:
        """Send one request and wait for its reply; raises KernelDied if the kernel dies, KernelOverdue
        (the kernel killed) when no reply came within `timeout` seconds."""
        meant = self.kernel
        async with self._lock:
            if meant is not None and meant.death is not None:
                # The kernel was lost while this request waited behind another (a completion asked while
                # typing, stuck on a stopped kernel): that one's reason is this one's. A kernel replaced by
                # a restart, not lost, leaves the request to the fresh one, as before.
                raise KernelDied(meant.death)
            kernel = self.kernel
            if kernel is None:
                raise KernelDied("no kernel is running")
            self._death_reason = None
            reply = None
            if not kernel.replies.ended:
                msg_id = self._write(kernel, op, fields)
                try:
                    reply = await kernel.replies.await_reply(msg_id, op, timeout)
                except asyncio.TimeoutError:
                    raise self._overdue(kernel, op, timeout) from None
            if reply is None:
                raise await self.lost(kernel)
            return reply

    @contextlib.asynccontextmanager
    async def pipeline(self) -> AsyncIterator["Pipeline"]:
        """Requests sent ahead of their replies (`gradrepl run`): no other request meanwhile."""
        async with self._lock:
            self._death_reason = None
            yield Pipeline(self)

    def _write(self, kernel: KernelProcess, op: str, fields: dict) -> int:
        # Unguessable ids: learner code cannot forge the reply to a request it never saw.
        msg_id = secrets.randbits(52)
        kernel.commands.write(protocol.encode(protocol.request(op, msg_id, **fields)))
        return msg_id

    def _overdue(self, kernel: KernelProcess, op: str, seconds: float) -> KernelOverdue:
        """Kill `kernel`, which left request `op` unanswered for `seconds`, and say why in words."""
        stopped = _stopped_words(kernel)
        kernel.death = f"the kernel did not answer the {op} request within {seconds:g} s{stopped}, so it was killed"
        kernel.kill()
        return KernelOverdue(kernel.death, seconds, bool(stopped))

    async def lost(self, kernel: KernelProcess) -> KernelDied:
        """Why `kernel` gave no reply: the reason it was killed for, a broken protocol, or its exit."""
        reason, self._death_reason = self._death_reason, None  # said once: a later death has its own
        status = await _status_soon(kernel.exited)
        kernel.death = reason or kernel.death or kernel.replies.broken or describe_exit(
            status, self.options.runs_learner_code)
        return KernelDied(kernel.death)

    async def step_output(self, kernel: KernelProcess, step: int, reply: dict) -> tuple[str, str]:
        """What step `step` printed on stdout and stderr, once its `execute` reply is in; notes on the
        reply say what was cut. The kernel may already be running a later step: its sentinels cut the pipes."""
        out, out_dropped = await kernel.stdout.step_output(step, OUTPUT_SETTLE)
        err, err_dropped = await kernel.stderr.step_output(step, OUTPUT_SETTLE)
        notes = reply.setdefault("notes", [])
        for name, dropped in (("stdout", out_dropped), ("stderr", err_dropped)):
            if dropped:
                notes.append(f"{name} truncated: {dropped:,} bytes not shown (raw output past "
                             f"{protocol.OUTPUT_CAP // 1024} KiB per step)")
        return out, err

    async def leftover_output(self, kernel: KernelProcess) -> tuple[str, str]:
        """What a dead kernel printed last (its faulthandler report, for one)."""
        out, _ = await kernel.stdout.step_output(-1, 0.5)
        err, _ = await kernel.stderr.step_output(-1, 0.5)
        return out, err

    def interrupt(self, step: int = ANY_STEP) -> bool:
        """Send SIGINT to the running step, if it is `step`. Returns False if no kernel runs."""
        if self.kernel is None:
            return False
        if self.kernel.target:
            self.kernel.target.aim(step)
        try:
            os.kill(self.kernel.pid, signal.SIGINT)
        except ProcessLookupError:
            return False
        return True

    def kill(self, reason: str) -> None:
        """Kill the kernel now if a request waits on it; that request fails with `reason`."""
        if self.kernel is not None and self.in_flight:
            # A stopped kernel ignored the interrupt for no fault of its code's: that is the reason, not `reason`.
            self._death_reason = STOPPED_KILLED if _stopped(self.kernel.pid) else reason
            self.kernel.kill()


class Pipeline:
    """Requests written one after another without waiting: each `send` gives the future of its
    reply (None: the kernel ended before answering; `KernelClient.lost` says why). Kernels answer
    in order, so the first unanswered request is the one the kernel died on."""

    def __init__(self, client: KernelClient):
        self.client = client

    def send(self, op: str, **fields) -> tuple[KernelProcess | None, asyncio.Future]:
        kernel = self.client.kernel
        if kernel is None or kernel.replies.ended:
            future = asyncio.get_running_loop().create_future()
            future.set_result(None)
            return kernel, future
        msg_id = self.client._write(kernel, op, fields)
        return kernel, kernel.replies.expect(msg_id, op)


async def _resolve_wait(process: asyncio.subprocess.Process, future: asyncio.Future) -> None:
    await process.wait()
    cgroups.forget(process.pid)  # the kernel's pids cgroup, if it made one: no zygote reaps a spawned kernel
    if not future.done():
        # asyncio gives a return code; turn it back into a wait status for describe_exit.
        code = process.returncode
        future.set_result((-code) & 0x7F if code < 0 else (code & 0xFF) << 8)


def _stopped_words(kernel: KernelProcess) -> str:
    """What to add to why `kernel` was killed when it was stopped (then no signal but SIGKILL reached it)."""
    return " (it had stopped itself, SIGSTOP)" if _stopped(kernel.pid) else ""


def _stopped(pid: int) -> bool:
    """Whether process `pid` is stopped (SIGSTOP, SIGTSTP): its state in /proc is T."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] in (b"T", b"t")
    except (OSError, IndexError):
        return False


async def _status_soon(exited: asyncio.Future) -> int | None:
    try:
        return await asyncio.wait_for(asyncio.shield(exited), 1.0)
    except asyncio.TimeoutError:
        return None
