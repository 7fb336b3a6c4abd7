"""KernelClient: start kernels, talk to them, and replace them when they die.

Every frontend reaches the kernel through this one class (via Session). It owns
the interrupt ladder: SIGINT, a grace period, then SIGKILL and a fresh kernel,
with the reason put in words for the learner.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field

from gradrepl.kernel import protocol
from gradrepl.kernel.options import KernelOptions

OUTPUT_CAP = 1 << 20     # bytes per stream per step, again on the raw pipes
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
    """Reads one learner stream and cuts it into steps at the kernel's sentinels."""

    def __init__(self, fd: int, nonce: str):
        self.fd = fd
        self.prefix = f"\x1egradrepl:{nonce}:".encode()
        self.buffer = bytearray()
        self.current = bytearray()
        self.dropped = 0
        self.finished: dict[int, tuple[str, int]] = {}
        self.eof = False
        self.changed = asyncio.Event()
        self.task: asyncio.Task | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 22)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(self.fd, "rb", 0))
        self.task = asyncio.create_task(self._pump(reader))

    async def _pump(self, reader: asyncio.StreamReader) -> None:
        while chunk := await reader.read(1 << 16):
            self.buffer += chunk
            self._scan()
        self.eof = True
        self._take(bytes(self.buffer))
        self.buffer.clear()
        self.changed.set()

    def _scan(self) -> None:
        while True:
            start = self.buffer.find(self.prefix)
            if start < 0:
                keep = len(self.prefix) + 24  # a sentinel may be split across reads
                if len(self.buffer) > keep:
                    self._take(bytes(self.buffer[:-keep]))
                    del self.buffer[:-keep]
                return
            end = self.buffer.find(b"\x1e\n", start + len(self.prefix))
            if end < 0:
                self._take(bytes(self.buffer[:start]))
                del self.buffer[:start]
                return
            step = int(self.buffer[start + len(self.prefix):end] or 0)
            self._take(bytes(self.buffer[:start]))
            del self.buffer[:end + 2]
            self.finished[step] = (self.current.decode("utf-8", "replace"), self.dropped)
            self.current.clear()
            self.dropped = 0
            self.changed.set()

    def _take(self, data: bytes) -> None:
        room = OUTPUT_CAP - len(self.current)
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
            return self.finished.pop(step)
        text, dropped = self.current.decode("utf-8", "replace"), self.dropped
        self.current.clear()
        self.dropped = 0
        return text, dropped


@dataclass
class KernelProcess:
    """One running kernel as the client sees it."""

    pid: int
    nonce: str
    commands: asyncio.WriteTransport
    replies: asyncio.StreamReader
    stdout: OutputPipe
    stderr: OutputPipe
    exited: asyncio.Future  # resolves to the wait status
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
        for pipe in (self.stdout, self.stderr):
            if pipe.task:
                pipe.task.cancel()


class Zygote:
    """The warm template process and the socket to it."""

    def __init__(self, env: dict[str, str]):
        self.env = env
        self.sock: socket.socket | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.forked: asyncio.Queue = asyncio.Queue()
        self.exits: dict[int, asyncio.Future] = {}
        self.ready = asyncio.get_running_loop().create_future()
        self.lock = asyncio.Lock()
        self.reader_task: asyncio.Task | None = None

    async def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = ours
        ours.setblocking(False)
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "gradrepl.kernel.zygote", str(theirs.fileno()),
            pass_fds=[theirs.fileno()], stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=self.env)
        theirs.close()
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
        error = (await self.process.stderr.read()).decode(errors="replace")[-4000:] if self.process else ""
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

    async def fork(self, fds: list[int], nonce: str, policy: dict) -> tuple[int, asyncio.Future]:
        await self.ready
        async with self.lock:
            message = (json.dumps({"op": "fork", "nonce": nonce, "policy": policy}) + "\n").encode()
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
        if self.process and self.process.returncode is None:
            try:
                await asyncio.wait_for(self.process.wait(), 2)
            except asyncio.TimeoutError:
                self.process.kill()


class KernelClient:
    """Starts a kernel, sends it requests, and keeps one running."""

    def __init__(self, options: KernelOptions | None = None):
        self.options = options or KernelOptions()
        self.scratch_dir = tempfile.mkdtemp(prefix="gradrepl-scratch-")
        self.kernel: KernelProcess | None = None
        self.zygote: Zygote | None = None
        self.mode = "spawn" if self.options.spawn else "fork"
        self._ids = 0
        self._lock = asyncio.Lock()
        self._death_reason: str | None = None
        self.restarts = 0

    # -- lifecycle ------------------------------------------------------
    def policy(self) -> dict:
        from gradrepl.kernel.sandbox import default_memory_limit

        return {"memory_limit": self.options.memory_limit or default_memory_limit(),
                "allow_network": self.options.allow_network, "scratch_dir": self.scratch_dir,
                "workspace": self.options.workspace}

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("MALLOC_ARENA_MAX", "2")  # keeps the address space (RLIMIT_AS) predictable
        # torch starts a thread pool at import unless told not to, and a process with
        # threads cannot be forked safely; each kernel sets its own count after forking.
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
        env.update(self.options.extra_env)
        return env

    async def start(self) -> KernelProcess:
        """Start the zygote (unless spawning) and one kernel; returns when it is ready."""
        if self.mode == "fork" and self.zygote is None:
            self.zygote = Zygote(self.env())
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
        theirs = [cmd_r, reply_w, out_w, err_w]
        try:
            if self.mode == "fork":
                try:
                    pid, exited = await self.zygote.fork(theirs, nonce, self.policy())
                except KernelDied:
                    self.mode = "spawn"  # no warm template: fall back to a fresh interpreter
            if self.mode == "spawn":
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "gradrepl.kernel.worker", *map(str, theirs), nonce,
                    json.dumps(self.policy()), pass_fds=theirs, env=self.env(),
                    stdin=asyncio.subprocess.DEVNULL, stdout=err_w, stderr=err_w)  # start-up errors stay off the screen
                pid = process.pid
                exited = asyncio.get_running_loop().create_future()
                asyncio.create_task(_resolve_wait(process, exited))
        finally:
            for fd in theirs:
                os.close(fd)
        loop = asyncio.get_running_loop()
        commands, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(cmd_w, "wb", 0))
        replies = asyncio.StreamReader(limit=1 << 26)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(replies), os.fdopen(reply_r, "rb", 0))
        stdout, stderr = OutputPipe(out_r, nonce), OutputPipe(err_r, nonce)
        await stdout.start()
        await stderr.start()
        kernel = KernelProcess(pid, nonce, commands, replies, stdout, stderr, exited)
        line = await replies.readline()
        if not line:
            status = await _status_soon(exited)
            text, _ = await stderr.step_output(-1, 0.5)
            raise KernelDied(f"the kernel failed to start: {describe_exit(status)}\n{text.strip()}")
        kernel.ready = json.loads(line)
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
    async def request(self, op: str, timeout: float | None = None, **fields) -> dict:
        """Send one request and wait for its reply; raises KernelDied if the kernel dies."""
        async with self._lock:
            kernel = self.kernel
            if kernel is None:
                raise KernelDied("no kernel is running")
            self._ids += 1
            self._death_reason = None
            kernel.commands.write(protocol.encode(protocol.request(op, self._ids, **fields)))
            line = await asyncio.wait_for(kernel.replies.readline(), timeout)
            if not line.endswith(b"\n"):  # EOF, perhaps halfway through a reply: the kernel died
                status = await _status_soon(kernel.exited)
                raise KernelDied(self._death_reason or describe_exit(status))
            return protocol.decode(line)

    async def execute(self, source: str, step: int, **fields) -> tuple[dict, str, str]:
        """Run one step (`fields`: filename, first_line, timeit); returns (reply payload, stdout, stderr).
        Raises KernelDied."""
        kernel = self.kernel
        reply = await self.request("execute", source=source, step=step, **fields)
        out, out_dropped = await kernel.stdout.step_output(step, OUTPUT_SETTLE)
        err, err_dropped = await kernel.stderr.step_output(step, OUTPUT_SETTLE)
        notes = reply.setdefault("notes", [])
        for name, dropped in (("stdout", out_dropped), ("stderr", err_dropped)):
            if dropped:
                notes.append(f"{name} truncated: {dropped:,} bytes not shown (raw output past "
                             f"{OUTPUT_CAP // 1024} KiB per step)")
        return reply, out, err

    async def leftover_output(self, kernel: KernelProcess) -> tuple[str, str]:
        """What a dead kernel printed last (its faulthandler report, for one)."""
        out, _ = await kernel.stdout.step_output(-1, 0.5)
        err, _ = await kernel.stderr.step_output(-1, 0.5)
        return out, err

    def interrupt(self) -> bool:
        """Send SIGINT to the running step. Returns False if no kernel runs."""
        if self.kernel is None:
            return False
        try:
            os.kill(self.kernel.pid, signal.SIGINT)
        except ProcessLookupError:
            return False
        return True

    def kill(self, reason: str) -> None:
        """Kill the kernel now; the pending request fails with `reason`."""
        if self.kernel is not None:
            self._death_reason = reason
            self.kernel.kill()


async def _resolve_wait(process: asyncio.subprocess.Process, future: asyncio.Future) -> None:
    await process.wait()
    if not future.done():
        # asyncio gives a return code; turn it back into a wait status for describe_exit.
        code = process.returncode
        future.set_result((-code) & 0x7F if code < 0 else (code & 0xFF) << 8)


async def _status_soon(exited: asyncio.Future) -> int | None:
    try:
        return await asyncio.wait_for(asyncio.shield(exited), 1.0)
    except asyncio.TimeoutError:
        return None
