"""Helpers for the `gradrepl serve` tests: a real server on a free loopback port, learners as aiohttp
websockets whose frames a terminal emulator (pyte) reads, and the server's process tree."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pyte

GRADREPL = Path(sys.executable).with_name("gradrepl")
DEADLINE = 120.0  # a safety net on a loaded machine, never a measure


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fresh_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    home = tmp_path / "home"
    env["HOME"] = str(home)
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        (home / name.lower()).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / name.lower())
    env.pop("GRADREPL_TOKEN", None)
    return env


class Served:
    """A running `gradrepl serve`."""

    def __init__(self, tmp_path: Path, *args: str, token: str | None = "t0ken-" + secrets.token_hex(4),
                 base_url: str = "/"):
        self.port = free_port()
        self.token = token
        self.base_url = base_url
        flags = ["--token", token] if token else ["--no-token"]
        # Output to files, not pipes: what the tutors leave on stderr is copied to the server's stdout
        # when they end, and a pipe nobody reads would block the server.
        self.out_path, self.err_path = tmp_path / "serve.out", tmp_path / "serve.err"
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.process = subprocess.Popen(
                [str(GRADREPL), "serve", "--port", str(self.port), *flags, "--base-url", base_url, *args],
                stdout=out, stderr=err, env=fresh_env(tmp_path))
        wait_until(lambda: "\n" in self.out_path.read_text() or self.process.poll() is not None,
                   "the server to say its address")
        line = self.out_path.read_text().partition("\n")[0]
        assert line.startswith("gradrepl serve: open "), (line, self.err_path.read_text())  # it listens
        self.address = line.split()[-1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.base_url}"

    def headers(self, origin: str | None = "same") -> dict[str, str]:
        headers = {"Authorization": f"token {self.token}"} if self.token else {}
        if origin == "same":
            headers["Origin"] = f"http://127.0.0.1:{self.port}"
        elif origin:
            headers["Origin"] = origin
        return headers

    def __enter__(self) -> "Served":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(DEADLINE)

    def output(self) -> str:
        return self.out_path.read_text() + self.err_path.read_text()


class Proxied:
    """Enough of Served for Learner: the tutor's address behind a Jupyter server (and a hub), on its port,
    under its prefix, with the token that server (or hub) takes."""

    def __init__(self, port: int, token: str | None, prefix: str):
        self.port, self.token = port, token
        self.url = f"http://127.0.0.1:{port}{prefix}gradrepl/"

    def headers(self, origin: str | None = "same") -> dict[str, str]:
        headers = {"Origin": f"http://127.0.0.1:{self.port}"}
        if self.token:
            headers["Authorization"] = f"token {self.token}"
        return headers


async def first_page(http: aiohttp.ClientSession, served, what: str) -> str:
    """GET served.url until it answers 200 (the proxy starts `gradrepl serve` on its first use); its text."""
    end = time.monotonic() + DEADLINE
    while True:
        try:
            async with http.get(served.url, headers=served.headers()) as response:
                if response.status == 200:
                    return await response.text()
        except aiohttp.ClientError:
            pass
        assert time.monotonic() < end, f"{what} never answered"
        await asyncio.sleep(1)


class Learner:
    """One browser tab, as textual.js would be: a websocket speaking textual-serve's protocol."""

    def __init__(self, http: aiohttp.ClientSession, served: Served, session_id: str | None = None,
                 learner: str | None = None, width: int = 150, height: int = 40):
        self.http = http
        self.served = served
        self.session_id = session_id or secrets.token_urlsafe(24)
        self.learner = learner
        self.width, self.height = width, height
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.first_frame_at: float | None = None

    async def connect(self) -> "Learner":
        self.screen = pyte.Screen(self.width, self.height)
        self.stream = pyte.ByteStream(self.screen)
        path = f"ws/{self.session_id}" + (f"/{self.learner}" if self.learner else "")
        self.connected_at = time.monotonic()
        self.ws = await self.http.ws_connect(f"{self.served.url}{path}?width={self.width}&height={self.height}",
                                             headers=self.served.headers())
        await self.ws.send_str(json.dumps(["resize", {"width": self.width, "height": self.height}]))
        return self

    def text(self) -> str:
        return "\n".join(self.screen.display)

    async def wait_for(self, predicate, what: str, deadline: float = DEADLINE) -> str:
        """Read frames until predicate(screen text) holds."""
        end = time.monotonic() + deadline
        while not predicate(self.text()):
            remaining = end - time.monotonic()
            assert remaining > 0, f"never saw {what}; screen:\n{self.text()}"
            try:
                message = await self.ws.receive(timeout=min(remaining, 5.0))
            except asyncio.TimeoutError:
                continue
            if message.type == aiohttp.WSMsgType.BINARY:
                if self.first_frame_at is None:
                    self.first_frame_at = time.monotonic()
                self.stream.feed(message.data)
            elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                raise AssertionError(f"the websocket closed before {what}; screen:\n{self.text()}")
        return self.text()

    async def wait_closed(self, deadline: float = DEADLINE) -> None:
        end = time.monotonic() + deadline
        while time.monotonic() < end:
            try:
                message = await self.ws.receive(timeout=5.0)
            except asyncio.TimeoutError:
                continue
            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                return
        raise AssertionError("the websocket stayed open")

    async def type(self, text: str) -> None:
        await self.ws.send_str(json.dumps(["stdin", text]))

    async def run(self, line: str) -> None:
        await self.type(line)
        await self.type("\r")

    async def ready(self) -> str:
        return await self.wait_for(lambda text: "type torch code" in text and "tensors" in text, "the tutor's console")

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, command line) of every process now."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                command = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):
            continue
        table[int(entry)] = (ppid, command)
    return table


def descendants(pid: int) -> dict[int, str]:
    """Every process below pid (by ppid), with its command line."""
    table = processes()
    found, frontier = {}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, command) in table.items():
            if ppid == parent and child not in found:
                found[child] = command
                frontier.append(child)
    return found


def tutors(server_pid: int) -> list[int]:
    """The learners' tutor processes below a server: forks of its tutor template (they carry its
    command line), or interpreters of their own (`-m gradrepl`) where it could not fork them."""
    tree, table = descendants(server_pid), processes()
    templates = {pid for pid, command in tree.items()
                 if "gradrepl.tutor_fork" in command and table[pid][0] == server_pid}
    return [pid for pid, command in tree.items()
            if command.endswith("-m gradrepl") or table[pid][0] in templates]


def home_of(tutor: int) -> str:
    """A tutor's home: it runs in it (a forked tutor's /proc/PID/environ is still its template's)."""
    return os.readlink(f"/proc/{tutor}/cwd")


def alive(pids) -> list[int]:
    table = processes()
    return [pid for pid in pids if pid in table]


def environ(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/environ", "rb") as file:
        pairs = [item.split(b"=", 1) for item in file.read().split(b"\0") if b"=" in item]
    return {key.decode(): value.decode(errors="replace") for key, value in pairs}


def wait_until(predicate, what: str, deadline: float = DEADLINE):
    end = time.monotonic() + deadline
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.2)
