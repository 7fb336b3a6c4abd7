"""Density of `gradrepl serve`: memory per extra learner, and first frames when a class connects at once.

Memory: PSS (/proc/PID/smaps_rollup: shared pages split between their users) summed over the server
and everything below it, with 1 learner and with N, each having run one step; per extra learner =
the difference / (N - 1). Against textual-serve's default, one whole `gradrepl` per visitor (its
own zygote and torch import), served by textual-serve's own Server. Aim: <= 150 MiB per learner.
First frames: a fresh server, one learner's time from websocket open to its drawn console; then K
learners opening at once, each one's time as a ratio to that single one. Aim: each <= 3x.
Printed as figures and ratios, never asserted. `python -m benchmarks.bench_serve [--quick]`.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import aiohttp

from benchmarks.timing import pick

LEARNERS = pick(4, 2)       # for the memory figure
AT_ONCE = pick(10, 3)       # learners connecting together
DEADLINE = 300.0
DRAWN = b"type torch code"  # the console's placeholder: the first frame is on screen


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def tree(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    children.setdefault(int(stat.read().rsplit(")", 1)[1].split()[1]), []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    found, frontier = [pid], [pid]
    while frontier:
        for child in children.get(frontier.pop(), []):
            found.append(child)
            frontier.append(child)
    return found


def pss_mib(pid: int) -> float:
    total = 0
    for member in tree(pid):
        try:
            with open(f"/proc/{member}/smaps_rollup") as rollup:
                for line in rollup:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


class Server:
    def __init__(self, kind: str, home: str):
        self.port = free_port()
        env = dict(os.environ, HOME=home)
        if kind == "gradrepl":
            self.token = secrets.token_hex(8)
            command = [sys.executable, "-m", "gradrepl", "serve", "--port", str(self.port), "--token", self.token]
            self.ws_path = "ws/" + "{session}"
        else:  # textual-serve's default: a whole gradrepl per visitor
            self.token = None
            code = ("from textual_serve.server import Server; "
                    f"Server('{sys.executable} -m gradrepl', host='127.0.0.1', port={self.port}).serve()")
            command = [sys.executable, "-c", code]
            self.ws_path = "ws"
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        if kind == "gradrepl":
            self.process.stdout.readline()
        else:
            self.wait_listening()

    def wait_listening(self) -> None:
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.2)
        raise RuntimeError("textual-serve never listened")

    def ws_url(self) -> str:
        path = self.ws_path.format(session=secrets.token_urlsafe(24))
        return f"http://127.0.0.1:{self.port}/{path}?width=120&height=36"

    def headers(self) -> dict[str, str]:
        headers = {"Origin": f"http://127.0.0.1:{self.port}"}
        if self.token:
            headers["Authorization"] = f"token {self.token}"
        return headers

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process.stdout.close()


async def learner(http: aiohttp.ClientSession, server: Server, step: bool = False):
    """Open a tab; returns (websocket, seconds to the first drawn console)."""
    started = time.perf_counter()
    ws = await http.ws_connect(server.ws_url(), headers=server.headers())
    await ws.send_str(json.dumps(["resize", {"width": 120, "height": 36}]))
    seen = b""
    end = time.monotonic() + DEADLINE
    while DRAWN not in seen:
        message = await ws.receive(timeout=max(end - time.monotonic(), 1))
        if message.type == aiohttp.WSMsgType.BINARY:
            seen = seen[-64:] + message.data
        elif message.type != aiohttp.WSMsgType.TEXT:
            raise RuntimeError(f"the websocket closed: {message}")
    first = time.perf_counter() - started
    if step:
        await ws.send_str(json.dumps(["stdin", "w = torch.ones(3, requires_grad=True)\r"]))
        seen = b""
        while b"[1, 1, 1]" not in seen:
            message = await ws.receive(timeout=max(end - time.monotonic(), 1))
            if message.type == aiohttp.WSMsgType.BINARY:
                seen = seen[-64:] + message.data
    return ws, first


async def memory(kind: str, home: str) -> tuple[float, float]:
    server = Server(kind, home)
    try:
        async with aiohttp.ClientSession() as http:
            tabs = [await learner(http, server, step=True)]
            await asyncio.sleep(2)  # the zygote's idle imports settle
            one = pss_mib(server.process.pid)
            for _ in range(LEARNERS - 1):
                tabs.append(await learner(http, server, step=True))
            await asyncio.sleep(2)
            many = pss_mib(server.process.pid)
            for ws, _ in tabs:
                await ws.close()
    finally:
        server.stop()
    return one, (many - one) / (LEARNERS - 1)


async def first_frames(home: str) -> tuple[float, list[float]]:
    server = Server("gradrepl", home)
    try:
        async with aiohttp.ClientSession() as http:
            ws, single = await learner(http, server)
            await ws.close()
            await asyncio.sleep(2)
            tabs = await asyncio.gather(*(learner(http, server) for _ in range(AT_ONCE)))
            for tab, _ in tabs:
                await tab.close()
    finally:
        server.stop()
    return single, sorted(first for _, first in tabs)


async def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        ours_one, ours_each = await memory("gradrepl", home)
        theirs_one, theirs_each = await memory("textual-serve", home)
        print(f"PSS, server with 1 learner: gradrepl serve {ours_one:.0f} MiB, textual-serve default "
              f"{theirs_one:.0f} MiB")
        print(f"PSS per extra learner ({LEARNERS} learners): gradrepl serve {ours_each:.0f} MiB "
              f"(aim <= 150: {ours_each / 150:.2f} of it), textual-serve default {theirs_each:.0f} MiB; "
              f"ratio ours/default {ours_each / theirs_each:.2f}")
        single, together = await first_frames(home)
        print(f"first frame, one learner alone: {single * 1000:.0f} ms")
        print(f"first frames, {AT_ONCE} learners at once, as ratios to that (aim: each <= 3): median "
              f"{statistics.median(together) / single:.2f}, worst {together[-1] / single:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
