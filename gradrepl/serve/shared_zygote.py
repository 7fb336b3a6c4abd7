"""One warm zygote for every learner of `gradrepl serve`: a new learner costs one fork, not one torch import.

The zygote (kernel/zygote.py) talks to one client over a socketpair. The server holds that pair and
relays: each tutor process connects to a Unix socket in the server's private folder (the tutor's
client.ZygoteHandle does so when launch.shared_zygote() says so), and its fork requests go to the zygote one
at a time, its exit events back to the connection that forked the kernel.

A connection is accepted only from a tutor process the server started (SO_PEERCRED's pid), and its
kernels' scratch folder is forced to that learner's own folder inside the zygote's tmpfs, made and
removed through /proc/<zygote>/root (the tmpfs exists only in the zygote's mount namespace). Kernels
cannot reach the socket anyway: their syscall filter makes no UNIX sockets. When a connection ends
its kernels are killed (one stuck in a loop would not read the EOF on its command pipe).

If the zygote dies (killed, out of memory), its kernels die with it and the server starts another:
the tutors' connections stay, so a tutor's next kernel is a fork again, and every learner's scratch
folder is made anew in the new zygote's tmpfs (what was in the old one is gone with it). A zygote
that dies again and again (RESTARTS within RESTART_WINDOW seconds) is not restarted: tutors then
start kernels of their own.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import struct
from collections.abc import Callable

from gradrepl.client import launch
from gradrepl.client.zygote_handle import zygote_events
from gradrepl.host import scratch

RESTARTS, RESTART_WINDOW = 3, 60.0
# The zygote, and so every kernel it forks (they inherit it), runs at a lower priority than the tutors:
# a training loop in one tab, ten kernels starting at once, or the zygote's own idle imports (sympy,
# jedi, torch._dynamo, while a class is connecting) never slow another learner's typing and screens.
KERNEL_NICE = 5


class SharedZygote:
    """The zygote process, the listening socket, and the relay between them."""

    def __init__(self, folder: str, disk_limit: int, scratch_for_pid: Callable[[int], str | None]):
        self.folder = folder  # the server's private folder (0700): the socket lives here
        self.path = os.path.join(folder, "zygote.sock")
        self.disk_limit = disk_limit
        self.scratch_for_pid = scratch_for_pid  # a tutor pid -> its learner's scratch folder, or None
        self.scratch_dir = scratch.make()
        self.process = None
        self.stderr_transport = None
        self.sock: socket.socket | None = None
        self.ready: dict | None = None
        self.lock = asyncio.Lock()  # one fork in flight: the zygote answers in order
        self.forked: asyncio.Queue = asyncio.Queue()
        self.owners: dict[int, socket.socket] = {}  # kernel pid -> the tutor connection that forked it
        self.unclaimed_exits: dict[int, dict] = {}  # exits read before their "forked" reached its owner
        self.server: asyncio.base_events.Server | None = None
        self.tasks: set[asyncio.Task] = set()
        self.folders: set[str] = set()  # the learners' scratch folders, made again in a restarted zygote
        self.restarts: list[float] = []  # when the zygote was restarted (monotonic)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        await self._launch(loop)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        os.chmod(self.path, 0o600)
        listener.listen(64)
        listener.setblocking(False)
        self.listener = listener
        self.tasks.add(asyncio.create_task(self._accept(loop)))

    async def _launch(self, loop) -> None:
        """Start the zygote and wait until it is warm (torch imported); then relay its events."""
        self.process, self.sock = launch.launch_zygote(launch.kernel_env(), [self.scratch_dir, str(self.disk_limit)])
        os.setpriority(os.PRIO_PROCESS, self.process.pid, KERNEL_NICE)
        self.sock.setblocking(False)
        self.forked = asyncio.Queue()  # answers of this zygote only (an old one's could pair a fork with a wrong pid)
        self.ready = await self._read_event(loop)
        if self.ready.get("event") != "ready":
            raise RuntimeError(f"the shared kernel template did not start: {self.ready}")
        # Its stderr is read (and dropped) so that it never blocks on a full pipe; kernels have their own.
        self.stderr_transport, _ = await loop.connect_read_pipe(asyncio.Protocol, self.process.stderr)
        for folder in self.folders:
            os.makedirs(self._inside(folder), 0o700, exist_ok=True)
        task = asyncio.create_task(self._read_zygote(loop))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _restart(self, loop) -> None:
        """The zygote died: reap it and start another, unless it keeps dying."""
        now = loop.time()
        self.restarts = [at for at in self.restarts if now - at < RESTART_WINDOW] + [now]
        self._reap()
        if len(self.restarts) > RESTARTS:
            return
        try:
            await self._launch(loop)
        except (OSError, RuntimeError):
            self._reap()

    def _reap(self) -> None:
        if self.sock:
            self.sock.close()
            self.sock = None
        if self.stderr_transport:
            self.stderr_transport.close()
            self.stderr_transport = None
        if self.process:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            if self.process.stderr and not self.process.stderr.closed:
                self.process.stderr.close()
            self.process = None

    # -- the learner's folder inside the zygote's tmpfs ----------------------
    def _inside(self, folder: str) -> str:
        return f"/proc/{self.process.pid}/root{folder}"

    def make_scratch(self, name: str) -> str:
        """A new scratch folder for one learner's kernels (the path their kernels see)."""
        folder = os.path.join(self.scratch_dir, name)
        if self.process is not None:
            os.mkdir(self._inside(folder), 0o700)
        self.folders.add(folder)
        return folder

    def remove_scratch(self, folder: str) -> None:
        self.folders.discard(folder)
        if self.process and self.process.poll() is None:
            shutil.rmtree(self._inside(folder), ignore_errors=True)

    # -- relay ---------------------------------------------------------------
    async def _read_event(self, loop) -> dict:
        buffer = b""
        while b"\n" not in buffer:
            data = await loop.sock_recv(self.sock, 1)  # byte by byte: nothing past the ready line is taken
            if not data:
                return {"event": "error", "error": "the kernel template process stopped"}
            buffer += data
        return json.loads(buffer)

    async def _read_zygote(self, loop) -> None:
        async for event in zygote_events(self.sock):
            if event.get("event") in ("forked", "error"):
                self.forked.put_nowait(event)
            elif event.get("event") == "exit":
                owner = self.owners.pop(event["pid"], None)
                if owner is not None:
                    await _send(loop, owner, event)
                elif self.lock.locked():  # its fork's reply is still on its way to the tutor
                    self.unclaimed_exits[event["pid"]] = event
        if self.lock.locked():  # a fork in flight gets its answer; none is left for the next zygote's first fork
            self.forked.put_nowait({"event": "error", "error": "the shared kernel template process stopped"})
        # Its kernels died with it (parent-death signal): their tutors hear it as the zygote would say it.
        for pid, owner in list(self.owners.items()):
            self.owners.pop(pid, None)
            await _send(loop, owner, {"event": "exit", "pid": pid, "status": signal.SIGKILL})
        await self._restart(loop)

    async def _accept(self, loop) -> None:
        while True:
            conn, _ = await loop.sock_accept(self.listener)
            task = asyncio.create_task(self._serve_tutor(loop, conn))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _serve_tutor(self, loop, conn: socket.socket) -> None:
        conn.setblocking(False)
        pid, _, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        folder = self.scratch_for_pid(pid)
        if folder is None:  # not a tutor this server started
            conn.close()
            return
        mine: set[int] = set()
        try:
            await _send(loop, conn, self.ready)
            buffer, fds = b"", []
            while True:
                await _readable(loop, conn)
                try:
                    data, more, _, _ = socket.recv_fds(conn, 1 << 16, 8)
                except BlockingIOError:
                    continue
                except OSError:
                    break
                fds += more
                if not data:
                    break
                buffer += data
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    request = json.loads(line)
                    policy = request.setdefault("policy", {})
                    policy["scratch_dir"] = folder  # its learner's, whatever it asked
                    event = await self._fork(loop, request, fds)
                    fds = []
                    await _send(loop, conn, event)
                    if event.get("event") == "forked":
                        mine.add(event["pid"])
                        self.owners[event["pid"]] = conn
                        if early := self.unclaimed_exits.pop(event["pid"], None):  # it died at once
                            self.owners.pop(event["pid"])
                            await _send(loop, conn, early)
        finally:
            for pid in mine:
                if self.owners.pop(pid, None) is not None:  # still running: its tutor is gone
                    _kill_group(pid)
            conn.close()

    async def _fork(self, loop, request: dict, fds: list[int]) -> dict:
        async with self.lock:
            if self.sock is None:  # between zygotes, or none any more
                for fd in fds:
                    os.close(fd)
                return {"event": "error", "error": "the shared kernel template is gone"}
            try:
                message = (json.dumps(request) + "\n").encode()
                await _writable(loop, self.sock)
                socket.send_fds(self.sock, [message], fds)
            except OSError as exc:
                return {"event": "error", "error": f"the shared kernel template is gone ({exc})"}
            finally:
                for fd in fds:
                    os.close(fd)
            return await self.forked.get()

    async def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        for task in list(self.tasks):
            try:
                await task
            except BaseException:
                pass
        for pid in list(self.owners):
            _kill_group(pid)
        if getattr(self, "listener", None):
            self.listener.close()
        self._reap()  # its kernels end with it (parent-death signal); its janitor then removes scratch
        shutil.rmtree(self.scratch_dir, ignore_errors=True)


def _kill_group(pid: int) -> None:
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass


async def _send(loop, conn: socket.socket, event: dict) -> None:
    try:
        await loop.sock_sendall(conn, (json.dumps(event) + "\n").encode())
    except OSError:
        pass  # that tutor is gone; its end is handled where its connection is read


async def _readable(loop, sock: socket.socket) -> None:
    await _until_ready(loop, sock, loop.add_reader, loop.remove_reader)


async def _writable(loop, sock: socket.socket) -> None:
    await _until_ready(loop, sock, loop.add_writer, loop.remove_writer)


async def _until_ready(loop, sock: socket.socket, watch, unwatch) -> None:
    """Wait until the loop's `watch` (add_reader or add_writer) says `sock` is ready; `unwatch` after."""
    ready = loop.create_future()
    watch(sock.fileno(), lambda: ready.done() or ready.set_result(None))
    try:
        await ready
    finally:
        unwatch(sock.fileno())
