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
import socket
import subprocess
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from gradrepl.kernel import launch, protocol, reply_schema, scratch
from gradrepl.kernel.interrupt_target import ANY_STEP, InterruptTarget
from gradrepl.kernel.machine import default_disk_limit, default_memory_limit
from gradrepl.kernel.options import KernelOptions
from gradrepl.terminal_text import visible

INTERRUPT_GRACE = 2.0    # seconds a step gets to stop after SIGINT before it is killed
OUTPUT_SETTLE = 2.0      # seconds to wait for a step's output after its reply


class KernelDied(Exception):
    """The kernel process ended while we waited on it; `reason` says why, in words."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def describe_exit(status: int | None) -> str:
    """A wait status in words a learner can act on."""
    if status is None:
        return "the kernel process ended"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        names = {signal.SIGSEGV: "a segmentation fault (the process touched invalid memory)",
                 signal.SIGKILL: "it was killed (SIGKILL: stopped by gradrepl, or out of memory)",
                 signal.SIGABRT: "it aborted (SIGABRT)", signal.SIGBUS: "a bus error (SIGBUS)",
                 signal.SIGFPE: "a floating-point exception (SIGFPE)",
                 signal.SIGSYS: "a forbidden system call (SIGSYS)"}
        return f"the kernel crashed: {names.get(sig, f'signal {sig}')}"
    code = os.WEXITSTATUS(status)
    return f"the kernel process exited with status {code} (os._exit or a fatal error)"


class OutputPipe:
    """Reads one learner stream and cuts it into steps at the kernel's sentinels.

    Learner code can write anything here, forged sentinels included, so the scan
    never trusts a sentinel's shape: a prefix not followed by at most
    STEP_DIGITS digits and the terminator is ordinary text. Each byte is looked
    at a bounded number of times, so a flood costs linear time. A step's text is
    made visible (terminal_text) as it is cut.
    """

    STEP_DIGITS = 20

    def __init__(self, fd: int, nonce: str):
        self.fd = fd
        self.prefix = f"\x1egradrepl:{nonce}:".encode()
        self.buffer = bytearray()
        self.current = bytearray()
        self.dropped = 0
        self.finished: dict[int, tuple[str, int]] = {}
        self.eof = False
        self.changed = asyncio.Event()
        self.transport: asyncio.ReadTransport | None = None

    async def start(self) -> None:
        self.transport = await _read_pipe(self.fd, self._received, self._ended)

    def _received(self, data: bytes) -> None:
        self.buffer += data
        self._scan()

    def _ended(self) -> None:
        self.eof = True
        self._take(bytes(self.buffer))
        self.buffer.clear()
        self.changed.set()

    def _scan(self) -> None:
        buffer, prefix = self.buffer, self.prefix
        pos = 0
        while True:
            start = buffer.find(prefix, pos)
            if start < 0:
                # Keep a tail that may be the start of a sentinel split across reads.
                keep = max(pos, len(buffer) - len(prefix) + 1)
                self._take(bytes(buffer[pos:keep]))
                del buffer[:keep]
                return
            head = start + len(prefix)
            digits = head
            while digits < len(buffer) and digits - head < self.STEP_DIGITS and 48 <= buffer[digits] <= 57:
                digits += 1
            tail = buffer[digits:digits + 2]
            if tail == b"\x1e\n" and digits > head:
                self._take(bytes(buffer[pos:start]))
                self._finish(int(buffer[head:digits]))
                pos = digits + 2
            elif digits == len(buffer) or tail == b"\x1e":
                self._take(bytes(buffer[pos:start]))  # perhaps a sentinel still arriving
                del buffer[:start]
                return
            else:
                self._take(bytes(buffer[pos:head]))   # not a sentinel: the learner's own text
                pos = head

    def _finish(self, step: int) -> None:
        self.finished[step] = (visible(self.current.decode("utf-8", "replace")), self.dropped)
        self.current.clear()
        self.dropped = 0
        self.changed.set()

    def _take(self, data: bytes) -> None:
        room = protocol.OUTPUT_CAP - len(self.current)
        self.current += data[:max(room, 0)]
        self.dropped += max(len(data) - max(room, 0), 0)

    async def step_output(self, step: int, timeout: float) -> tuple[str, int]:
        """The text of one step (waits for its sentinel, or EOF, or the timeout)."""
        deadline = time.monotonic() + timeout
        while step not in self.finished and not self.eof:
            self.changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                break
        if step in self.finished:
            text = self.finished.pop(step)
            for stale in [number for number in self.finished if number < step]:
                del self.finished[stale]      # forged or late sentinels of earlier steps
            return text
        text, dropped = visible(self.current.decode("utf-8", "replace")), self.dropped
        self.current.clear()
        self.dropped = 0
        return text, dropped


# The layer the reply channel adds to the kernel's sandbox report (gradrepl doctor).
REPLIES_LAYER = {"active": True, "detail": "every reply checked against its op's schema (types, known keys, "
                                           "sizes) and its text made visible; one that does not fit replaces "
                                           "the kernel"}


class ReplyChannel:
    """The reply pipe: bounded lines, each of which must be the one reply awaited, in its op's shape.

    Learner code runs in the kernel and can write to this pipe, or rewrite the kernel's reply
    writer. A line that is oversize, not a protocol message, not the awaited reply, or not of the
    shape its op answers with (reply_schema.py) means the kernel can no longer be believed: the
    channel ends with the reason, the kernel is killed, and the request waiting on it fails with
    those words. A reply that fits is delivered with its text made visible.
    """

    def __init__(self, fd: int, on_broken):
        self.fd = fd
        self.on_broken = on_broken
        # The replies awaited, oldest first (id, op, future; id and op None: the ready line): the
        # kernel answers requests in the order they were sent.
        self.waiting: deque[tuple[object, str | None, asyncio.Future]] = deque()
        self.ended = False
        self.broken: str | None = None
        self.buffer = bytearray()
        self.scanned = 0  # bytes of the buffer known to hold no newline
        self.transport: asyncio.ReadTransport | None = None

    async def start(self) -> None:
        self.transport = await _read_pipe(self.fd, self._received, lambda: self._end(None))

    def _received(self, data: bytes) -> None:
        if self.ended:
            return
        self.buffer += data
        while (end := self.buffer.find(b"\n", self.scanned)) >= 0:
            if end >= protocol.REPLY_CAP:
                break
            line = bytes(self.buffer[:end + 1])
            del self.buffer[:end + 1]
            self.scanned = 0
            reason = self._deliver(line)
            if reason:
                self._end(reason)
                return
        self.scanned = len(self.buffer)
        if self.scanned >= protocol.REPLY_CAP:
            self._end(f"the kernel sent a reply line longer than {protocol.REPLY_CAP >> 20} MiB")

    def _deliver(self, line: bytes) -> str | None:
        try:
            message = protocol.decode(line)
        except (ValueError, RecursionError) as exc:
            return f"the kernel sent a line that is not a protocol message ({str(exc)[:120]})"
        if not self.waiting:
            return "the kernel sent a reply nobody asked for"
        awaited, op, future = self.waiting[0]
        kind = "ready" if awaited is None else "reply"
        if message.get("type") != kind or (awaited is not None and message.get("id") != awaited):
            return "the kernel sent a reply to a request that was not asked"
        try:
            message = reply_schema.check(op, message)
        except reply_schema.Violation as violation:
            what = "ready line is not of the shape it has" if op is None else f"reply to {op} is not of the shape {op} answers with"
            return f"its {what}: {violation}"
        except RecursionError:
            return f"its reply to {op} nests too deep to be read"
        self.waiting.popleft()
        if not future.done():
            future.set_result(message)
        return None

    def _end(self, reason: str | None) -> None:
        self.ended = True
        if reason:
            self.broken = visible(f"the kernel broke the reply protocol ({reason}; learner code may have written "
                                  "to the kernel's reply pipe or rewritten its replies), so it was stopped")
            self.on_broken()
        for _, _, future in self.waiting:
            if not future.done():
                future.set_result(None)
        self.waiting.clear()

    def expect(self, msg_id: object, op: str | None) -> asyncio.Future:
        """A future for the reply with this id to `op` (both None for the ready line), after those
        expected before it; it resolves to None if the channel ends first."""
        future = asyncio.get_running_loop().create_future()
        if self.ended:
            future.set_result(None)
        else:
            self.waiting.append((msg_id, op, future))
        return future

    async def await_reply(self, msg_id: object, op: str | None, timeout: float | None = None) -> dict | None:
        """The reply with this id, or None if the channel ended first. A reply given up on (timeout,
        cancel) is no longer expected: if it comes after all, the channel breaks."""
        future = self.expect(msg_id, op)
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            if not future.done() or future.cancelled():
                self.waiting = deque(entry for entry in self.waiting if entry[2] is not future)


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


class _Reading(asyncio.Protocol):
    """A read pipe's data handed to `received` as it arrives (no reader task in between); `ended` once,
    at EOF or when the pipe fails, a partial line or step then being whatever arrived."""

    def __init__(self, received, ended):
        self.received = received
        self.ended = ended
        self.done = False

    def data_received(self, data: bytes) -> None:
        self.received(data)

    def eof_received(self) -> None:
        self.connection_lost(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done:
            self.done = True
            self.ended()


async def _read_pipe(fd: int, received, ended) -> asyncio.ReadTransport:
    transport, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: _Reading(received, ended), os.fdopen(fd, "rb", 0))
    return transport


class Zygote:
    """The warm template process and the socket to it."""

    def __init__(self, env: dict[str, str], scratch_dir: str, disk_limit: int):
        self.env = env
        self.args = [scratch_dir, str(disk_limit)]
        self.sock: socket.socket | None = None
        self.process: subprocess.Popen | None = None
        self.stderr = asyncio.StreamReader()
        self.stderr_transport: asyncio.ReadTransport | None = None
        self.forked: asyncio.Queue = asyncio.Queue()
        self.exits: dict[int, asyncio.Future] = {}
        self.ready = asyncio.get_running_loop().create_future()
        self.lock = asyncio.Lock()
        self.reader_task: asyncio.Task | None = None

    async def start(self) -> None:
        self.process, self.sock = launch.adopt_early(self.env, self.args) or launch.launch_zygote(self.env, self.args)
        self.sock.setblocking(False)
        self.stderr_transport, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(self.stderr), self.process.stderr)
        self.reader_task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        buffer = b""
        while True:
            try:
                data = await loop.sock_recv(self.sock, 1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                self._dispatch(json.loads(line))
        try:
            error = visible((await asyncio.wait_for(self.stderr.read(), OUTPUT_SETTLE)).decode(errors="replace")[-4000:])
        except asyncio.TimeoutError:
            error = ""
        dead = KernelDied(f"the kernel template process stopped{': ' + error.strip() if error.strip() else ''}")
        if not self.ready.done():
            self.ready.set_exception(dead)
        self.forked.put_nowait({"event": "error", "error": str(dead)})
        for future in self.exits.values():
            if not future.done():
                future.set_result(None)

    def _dispatch(self, event: dict) -> None:
        kind = event.get("event")
        if kind == "ready" and not self.ready.done():
            self.ready.set_result(event)
        elif kind in ("forked", "error"):
            self.forked.put_nowait(event)
        elif kind == "exit":
            future = self.exits.setdefault(event["pid"], asyncio.get_running_loop().create_future())
            if not future.done():
                future.set_result(event["status"])

    async def fork(self, fds: list[int], nonce: str, policy: dict, warm_later: bool) -> tuple[int, asyncio.Future]:
        await self.ready
        async with self.lock:
            request = {"op": "fork", "nonce": nonce, "policy": policy, "warm_later": warm_later}
            message = (json.dumps(request) + "\n").encode()
            socket.send_fds(self.sock, [message], fds)
            event = await self.forked.get()
        if event["event"] != "forked":
            raise KernelDied(event.get("error", "fork failed"))
        pid = event["pid"]
        return pid, self.exits.setdefault(pid, asyncio.get_running_loop().create_future())

    async def close(self) -> None:
        # Stop reading before closing: a pending read on a closed fd leaves the event
        # loop watching a number that the next open file will reuse.
        if self.reader_task:
            self.reader_task.cancel()
            try:
                await self.reader_task
            except BaseException:
                pass
        if self.sock:
            self.sock.close()
        if self.process:
            # Its kernels are gone and it holds nothing else (the janitor clears scratch): killed at
            # once rather than waited for while it reads EOF or finishes a WARM_LATER import.
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
        if self.stderr_transport:
            self.stderr_transport.close()


class KernelClient:
    """Starts a kernel, sends it requests, and keeps one running."""

    def __init__(self, options: KernelOptions | None = None):
        self.options = options or KernelOptions()
        self.scratch_dir = launch.claim_early_scratch(self.env(), self.policy_disk_limit()) or scratch.make()
        self.kernel: KernelProcess | None = None
        self.zygote: Zygote | None = None
        self.mode = "spawn" if self.options.spawn else "fork"
        self._lock = asyncio.Lock()  # one request at a time, or one Pipeline
        self._death_reason: str | None = None
        self.restarts = 0

    # -- lifecycle ------------------------------------------------------
    def policy_disk_limit(self) -> int:
        return self.options.disk_limit or default_disk_limit()

    def policy(self) -> dict:
        return {"memory_limit": self.options.memory_limit or default_memory_limit(),
                "disk_limit": self.policy_disk_limit(),
                "allow_network": self.options.allow_network, "scratch_dir": self.scratch_dir,
                "workspace": self.options.workspace, "readable": list(self.options.readable)}

    def env(self) -> dict[str, str]:
        return launch.kernel_env(self.options.extra_env)

    async def start(self) -> KernelProcess:
        """Start the zygote (unless spawning) and one kernel; returns when it is ready."""
        if self.mode == "fork" and self.zygote is None:
            self.zygote = Zygote(self.env(), self.scratch_dir, self.policy()["disk_limit"])
            await self.zygote.start()
        self.kernel = await self._new_kernel()
        return self.kernel

    async def _new_kernel(self) -> KernelProcess:
        started = time.perf_counter()
        nonce = secrets.token_hex(8)
        cmd_r, cmd_w = os.pipe()
        reply_r, reply_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        target, target_fd, page_layer = InterruptTarget.create()
        theirs = [cmd_r, reply_w, out_w, err_w, target_fd]
        try:
            if self.mode == "fork":
                try:
                    pid, exited = await self.zygote.fork(theirs, nonce, self.policy(), self.options.warm_later)
                except KernelDied:
                    self.mode = "spawn"  # no warm template: fall back to a fresh interpreter
            if self.mode == "spawn":
                # As the zygote is started (launch.py): safe path, from "/", in a session of its own.
                process = await asyncio.create_subprocess_exec(
                    *launch.python_command("gradrepl.kernel.worker", *map(str, theirs), nonce,
                                           json.dumps(self.policy())),
                    pass_fds=theirs, env=self.env(), cwd=launch.KERNEL_CWD, start_new_session=True,
                    stdin=asyncio.subprocess.DEVNULL, stdout=err_w, stderr=err_w)  # start-up errors stay off the screen
                pid = process.pid
                exited = asyncio.get_running_loop().create_future()
                asyncio.create_task(_resolve_wait(process, exited))
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
            text, _ = await stderr.step_output(-1, 0.5)
            reason = kernel.replies.broken or describe_exit(status)
            raise KernelDied(f"the kernel failed to start: {reason}\n{text.strip()}")
        # The frontend's own layers, beside those the kernel applied to itself (gradrepl doctor lists both).
        ready["sandbox"].update(interrupt_page=page_layer, replies=REPLIES_LAYER)
        kernel.ready = ready
        kernel.started_ms = round((time.perf_counter() - started) * 1000, 2)
        return kernel

    async def replace(self) -> KernelProcess:
        """Kill the current kernel (if alive) and start a fresh one."""
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
        """Send one request and wait for its reply; raises KernelDied if the kernel dies."""
        async with self._lock:
            kernel = self.kernel
            if kernel is None:
                raise KernelDied("no kernel is running")
            self._death_reason = None
            reply = None
            if not kernel.replies.ended:
                msg_id = self._write(kernel, op, fields)
                reply = await kernel.replies.await_reply(msg_id, op, timeout)
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

    async def lost(self, kernel: KernelProcess) -> KernelDied:
        """Why `kernel` gave no reply: the reason it was killed for, a broken protocol, or its exit."""
        reason, self._death_reason = self._death_reason, None  # said once: a later death has its own
        status = await _status_soon(kernel.exited)
        return KernelDied(reason or kernel.replies.broken or describe_exit(status))

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
            self._death_reason = reason
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
    from gradrepl.kernel.sandbox import threads  # only spawned kernels get here: no zygote reaps them

    threads.forget(process.pid)  # the kernel's pids cgroup, if it made one
    if not future.done():
        # asyncio gives a return code; turn it back into a wait status for describe_exit.
        code = process.returncode
        future.set_result((-code) & 0x7F if code < 0 else (code & 0xFF) << 8)


async def _status_soon(exited: asyncio.Future) -> int | None:
    try:
        return await asyncio.wait_for(asyncio.shield(exited), 1.0)
    except asyncio.TimeoutError:
        return None
