"""A warm template for the learners' tutor processes of `gradrepl serve`: a new tab costs one fork.

Every tutor is the same program (`gradrepl` with the server's flags, Textual's web driver), and
before its first frame it spends most of its time starting Python and importing Textual and the
TUI. The template does that once, and draws that first screen once too (headless, without a kernel:
what Textual and Rich keep from it comes with the fork); for each tab it forks a child that takes the tab's pipes as its
standard streams, the tab's environment (HOME, XDG folders, terminal size, the shared zygote's
socket) and working folder, and runs `gradrepl`'s main. Ten learners opening at once then wait for
ten forks and ten first frames, not for ten interpreters.

The template process runs gradrepl/tutor_fork.py (`python -m gradrepl.tutor_fork FD`, outside this
room: it becomes a TUI, which serve/ may not import): one thread, a socket to the server, SIGCHLD
to reap its children and report their exits. The server's side is here: TutorTemplate; a forked
tutor is a TemplateChild, shaped as the asyncio Process textual-serve reads.
Textual reads its TEXTUAL_* settings at import, so the template is started with the environment
every tutor gets (tutor_service.TutorService builds both); a fork whose settings differ is refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess

from gradrepl.client import launch

READY_WAIT = 60.0  # seconds the template gets to import what a tutor needs
SETTINGS_PREFIX = "TEXTUAL_"  # read at import: the template's and every child's must agree


# -- the server's side -------------------------------------------------------------------------

class TemplateChild:
    """A tutor forked by the template, as textual-serve reads an asyncio subprocess: its pid, its
    three streams, its return code once the template says it ended."""

    def __init__(self, pid: int, stdin: asyncio.StreamWriter, stdout: asyncio.StreamReader,
                 stderr: asyncio.StreamReader, exited: asyncio.Future):
        self.pid, self.stdin, self.stdout, self.stderr = pid, stdin, stdout, stderr
        self._exited = exited
        self.returncode: int | None = None
        exited.add_done_callback(self._ended)

    def _ended(self, future: asyncio.Future) -> None:
        status = future.result()
        self.returncode = os.waitstatus_to_exitcode(status) if status is not None else -signal.SIGKILL

    async def wait(self) -> int:
        await asyncio.shield(self._exited)
        return self.returncode


class TutorTemplate:
    """The template process and the fork requests sent to it, one at a time."""

    def __init__(self, env: dict[str, str], flags: list[str]):
        self.env = env
        self.flags = flags
        self.process: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.exits: dict[int, asyncio.Future] = {}
        self.replies: asyncio.Queue = asyncio.Queue()
        self.lock = asyncio.Lock()
        self.reader: asyncio.Task | None = None

    async def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.process = subprocess.Popen(
            [*launch.python_command("gradrepl.tutor_fork", str(theirs.fileno()))],
            pass_fds=[theirs.fileno()], env=self.env, cwd="/", stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        theirs.close()
        ours.setblocking(False)
        self.sock = ours
        self.reader = asyncio.create_task(self._read())
        ready = await asyncio.wait_for(self.replies.get(), READY_WAIT)
        if ready.get("event") != "ready":
            raise RuntimeError(f"the tutor template did not start: {ready}")

    @property
    def alive(self) -> bool:
        return self.reader is not None and not self.reader.done()

    def serves(self, env: dict[str, str]) -> bool:
        """Whether a tutor with this environment can be forked: Textual's settings are the template's."""
        settings = lambda e: {k: v for k, v in e.items() if k.startswith(SETTINGS_PREFIX)}  # noqa: E731
        return self.alive and settings(env) == settings(self.env)

    async def _read(self) -> None:
        from gradrepl.client.zygote_handle import zygote_events  # JSON lines on a socket, until it closes

        async for event in zygote_events(self.sock):
            if event.get("event") == "exit":
                future = self.exits.setdefault(event["pid"], asyncio.get_running_loop().create_future())
                if not future.done():
                    future.set_result(event["status"])
            else:
                self.replies.put_nowait(event)
        self.replies.put_nowait({"event": "error", "error": "the tutor template stopped"})
        for future in self.exits.values():  # its children got SIGKILL with it (parent-death signal)
            if not future.done():
                future.set_result(None)

    async def fork(self, env: dict[str, str], cwd: str, on_pid=None) -> TemplateChild:
        """A tutor with this environment and working folder; OSError if the template cannot make one.
        `on_pid(pid)` is called as soon as the pid is known: a fork starts fast, and the tutor may ask
        the shared zygote for a kernel (which checks who asks by pid) before its streams are set up."""
        loop = asyncio.get_running_loop()
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        theirs = [stdin_r, stdout_w, stderr_w]
        try:
            async with self.lock:
                request = json.dumps({"env": env, "cwd": cwd, "flags": self.flags}).encode() + b"\n"
                socket.send_fds(self.sock, [request], theirs)
                reply = await self.replies.get()
        except BaseException:
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        if reply.get("event") != "forked":
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            raise OSError(reply.get("error", "the tutor template did not fork"))
        pid = reply["pid"]
        if on_pid is not None:
            on_pid(pid)
        exited = self.exits.setdefault(pid, loop.create_future())
        stdout, stderr = await _reader(loop, stdout_r), await _reader(loop, stderr_r)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                            os.fdopen(stdin_w, "wb", 0))
        stdin = asyncio.StreamWriter(transport, protocol, None, loop)
        return TemplateChild(pid, stdin, stdout, stderr, exited)

    async def close(self) -> None:
        if self.reader is not None:
            self.reader.cancel()
            try:
                await self.reader
            except BaseException:
                pass
        if self.sock is not None:
            self.sock.close()
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()


async def _reader(loop, fd: int) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0))
    return reader
