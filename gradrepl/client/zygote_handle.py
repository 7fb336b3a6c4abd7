"""The client's side of the zygote: launch (or adopt) it, ask it to fork kernels, hear their exits."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from collections.abc import AsyncIterator

from gradrepl.client import launch
from gradrepl.client.deaths import ForkFailed, KernelDied
from gradrepl.terminal_text import visible

LAST_WORDS_WAIT = 2.0    # seconds to wait for the zygote's last words once its socket closed


async def zygote_events(sock) -> AsyncIterator[dict]:
    """The zygote's events (JSON lines on its socket) until it closes: a client's handle reads them, and
    so does gradrepl serve's shared zygote (serve/shared_zygote.py)."""
    loop = asyncio.get_running_loop()
    buffer = b""
    while True:
        try:
            data = await loop.sock_recv(sock, 1 << 16)
        except OSError:
            data = b""
        if not data:
            return
        buffer += data
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield json.loads(line)


class ZygoteHandle:
    """The client's handle on the warm template process (kernel/zygote.py): its socket, its
    stderr, the kernels it forked and their exits."""

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
        shared = launch.shared_zygote()
        if shared:  # gradrepl serve's zygote: the server owns it (and its stderr)
            self.sock = launch.connect_shared_zygote(shared[0])
            self.stderr.feed_eof()
        else:
            self.process, self.sock = launch.adopt_early(self.env, self.args) or launch.launch_zygote(self.env, self.args)
            self.stderr_transport, _ = await asyncio.get_running_loop().connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(self.stderr), self.process.stderr)
        self.sock.setblocking(False)
        self.reader_task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for event in zygote_events(self.sock):
            self._dispatch(event)
        try:
            error = visible((await asyncio.wait_for(self.stderr.read(), LAST_WORDS_WAIT)).decode(errors="replace")[-4000:])
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

    async def stopped(self, within: float) -> bool:
        """Whether the template process has stopped (its socket closed), waiting up to `within` seconds
        for the news: a kernel it forked dies with it, a moment before its socket says so."""
        if self.reader_task is None:
            return True
        done, _ = await asyncio.wait([self.reader_task], timeout=within)
        return bool(done)

    async def fork(self, fds: list[int], nonce: str, policy: dict, warm_later: bool) -> tuple[int, asyncio.Future]:
        await self.ready
        async with self.lock:
            request = {"op": "fork", "nonce": nonce, "policy": policy, "warm_later": warm_later}
            message = (json.dumps(request) + "\n").encode()
            try:
                socket.send_fds(self.sock, [message], fds)
            except OSError as exc:  # the template is gone (its socket closed)
                raise ForkFailed(f"the kernel template process stopped ({exc.strerror or exc})") from exc
            event = await self.forked.get()
        if event["event"] != "forked":
            raise ForkFailed(event.get("error", "fork failed"))
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
