"""The JupyterHub road, whole: a real hub (DummyAuthenticator, SimpleLocalProcessSpawner, its own
configurable-http-proxy) starts each user's Jupyter server through its REST API, and through the hub's
public port each user reaches their own tutor (the launcher entry point's /gradrepl/), and no one else's."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from tests.support.serve import (DEADLINE, Learner, Proxied, alive, descendants, environ, first_page, free_port,
                                 fresh_env, wait_until)

pytestmark = pytest.mark.timeout(600)
pytest.importorskip("jupyterhub")
pytest.importorskip("jupyter_server_proxy")

# The Makefile's test setup installs it with npm into the venv's own folder.
PROXY = Path(sys.executable).parent.parent / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
if not PROXY.exists() and shutil.which("configurable-http-proxy"):
    PROXY = Path(shutil.which("configurable-http-proxy"))
if not PROXY.exists() or not shutil.which("node"):
    pytest.skip("JupyterHub's proxy is missing: `make .venv/.installed-test` installs configurable-http-proxy "
                "with npm, and this machine has no npm or node", allow_module_level=True)

HUB_CONFIG = """
import sys
c = get_config()
c.JupyterHub.bind_url = "http://127.0.0.1:{port}/"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.JupyterHub.db_url = "sqlite:///{folder}/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "{folder}/jupyterhub_cookie_secret"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.pid_file = "{folder}/proxy.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = {{"alice", "bob"}}
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{folder}/homes/{{username}}"
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
c.Spawner.args = {server_args!r}
c.Spawner.start_timeout = {deadline}
c.Spawner.http_timeout = {deadline}
c.JupyterHub.init_spawners_timeout = 1
# The teacher: a service whose token (from this file) creates users, starts their servers and gives them tokens.
c.JupyterHub.services = [{{"name": "teacher", "api_token": {teacher_token!r}}}]
c.JupyterHub.load_roles = [
    {{"name": "teacher", "scopes": ["admin:users", "admin:servers", "tokens"], "services": ["teacher"]}},
]
"""


class Hub:
    """A running JupyterHub on loopback ports, its files in one folder."""

    def __init__(self, tmp_path: Path):
        self.folder = tmp_path / "hub"
        self.folder.mkdir()
        self.port, self.teacher_token = free_port(), "teacher-" + secrets.token_hex(16)
        config = self.folder / "jupyterhub_config.py"
        config.write_text(HUB_CONFIG.format(
            port=self.port, hub_port=free_port(), proxy_api_port=free_port(), folder=self.folder, proxy=str(PROXY),
            server_args=["--allow-root"] if os.getuid() == 0 else [], deadline=int(DEADLINE),
            teacher_token=self.teacher_token))
        self.log_path = self.folder / "hub.log"
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=self.folder,
                                            stdout=log, stderr=subprocess.STDOUT, env=fresh_env(tmp_path))
        self.api = f"http://127.0.0.1:{self.port}/hub/api"

    async def call(self, http: aiohttp.ClientSession, method: str, path: str, body: dict | None = None,
                   token: str | None = None):
        """One REST call as the teacher: (status, the JSON answer or None)."""
        headers = {"Authorization": f"token {token or self.teacher_token}"}
        async with http.request(method, self.api + path, headers=headers,
                                data=None if body is None else json.dumps(body)) as response:
            text = await response.text()
            return response.status, (json.loads(text) if text.strip().startswith(("{", "[")) else None)

    async def started(self, http: aiohttp.ClientSession) -> None:
        end = time.monotonic() + DEADLINE
        while True:
            assert self.process.poll() is None, f"the hub ended:\n{self.log()}"
            try:
                status, _ = await self.call(http, "GET", "/")
                if status == 200:
                    return
            except aiohttp.ClientError:
                pass
            assert time.monotonic() < end, f"the hub never answered:\n{self.log()}"
            await asyncio.sleep(1)

    async def user_server(self, http: aiohttp.ClientSession, name: str) -> Proxied:
        """Start the user's server, give them a token: their tutor's address behind the hub. (The hub
        made the user at its start, from allowed_users.)"""
        status, _ = await self.call(http, "POST", f"/users/{name}/server")
        assert status in (201, 202), (status, self.log())
        status, token = await self.call(http, "POST", f"/users/{name}/tokens", {"note": "the test's browser"})
        assert status == 201, (status, token, self.log())
        end = time.monotonic() + DEADLINE
        while True:
            status, user = await self.call(http, "GET", f"/users/{name}")
            server = user["servers"].get("", {})
            if server.get("ready"):
                break
            assert time.monotonic() < end and (server.get("pending") or server), f"{name}'s server:\n{self.log()}"
            await asyncio.sleep(1)
        return Proxied(self.port, token["token"], f"/user/{name}/")

    async def stop_user_server(self, http: aiohttp.ClientSession, name: str) -> None:
        status, _ = await self.call(http, "DELETE", f"/users/{name}/server")
        assert status in (202, 204), (status, self.log())

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(DEADLINE)

    def log(self) -> str:
        return self.log_path.read_text()[-4000:]


async def test_the_hub_gives_each_user_their_own_tutor(tmp_path):
    hub = Hub(tmp_path)
    try:
        async with aiohttp.ClientSession() as http:
            await hub.started(http)
            # Both at once: each server, then each tutor behind it, starts on its own (the test's time halves).
            alice, bob = await asyncio.gather(hub.user_server(http, "alice"), hub.user_server(http, "bob"))
            tree = descendants(hub.process.pid)
            assert any("configurable-http-proxy" in command for command in tree.values()), tree

            # Through the hub's port: each user's token opens their tutor's page (it starts on first use).
            pages = await asyncio.gather(first_page(http, alice, "alice's tutor behind the hub"),
                                         first_page(http, bob, "bob's tutor behind the hub"))
            assert all("textual.js" in page for page in pages)
            async with http.get(alice.url, allow_redirects=False) as response:  # the hub's login guards it
                assert response.status in (302, 401, 403) and "textual.js" not in await response.text()
            stranger = Proxied(hub.port, bob.token, "/user/alice/")  # bob's token on alice's address
            async with http.get(stranger.url, headers=stranger.headers(), allow_redirects=False) as response:
                assert response.status in (302, 401, 403) and "textual.js" not in await response.text()

            learner, other = await Learner(http, alice).connect(), await Learner(http, bob).connect()
            await asyncio.gather(learner.ready(), other.ready())
            await learner.run("alices_tensor = torch.ones(2)")
            await learner.wait_for(lambda text: "● alices_tensor" in text, "alice's name in her panel")
            # bob's tutor is another process behind another server: his panel lists his names, not hers.
            await other.run("bobs_tensor = torch.zeros(3)")
            seen = await other.wait_for(lambda text: "● bobs_tensor" in text, "bob's name in his panel")
            assert "alices_tensor" not in seen
            await learner.close()
            await other.close()

            tree = descendants(hub.process.pid)
            # One `gradrepl serve` per user's server, each in its own user's home.
            homes = sorted(environ(pid)["HOME"] for pid, command in tree.items() if "gradrepl serve" in command)
            assert homes == [str(hub.folder / "homes" / name) for name in ("alice", "bob")], tree
            await hub.stop_user_server(http, "alice")
            await hub.stop_user_server(http, "bob")
    finally:
        tree = descendants(hub.process.pid)
        hub.stop()
    wait_until(lambda: not alive(tree), f"the hub's processes to end: {tree}")
