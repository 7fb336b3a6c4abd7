"""The JupyterHub road: a Jupyter server with jupyter-server-proxy finds gradrepl's entry point, and
its /gradrepl/ path (under the server's own prefix) serves the tutor, websocket included."""

from __future__ import annotations

import importlib.metadata
import os
import signal
import subprocess
import sys

import aiohttp
import pytest

from tests.support.serve import (DEADLINE, Learner, Proxied, alive, descendants, first_page, free_port, fresh_env,
                                 wait_until)

pytestmark = pytest.mark.timeout(600)
pytest.importorskip("jupyter_server_proxy")


def test_the_entry_point_is_installed():
    points = importlib.metadata.entry_points(group="jupyter_serverproxy_servers")
    (point,) = [point for point in points if point.name == "gradrepl"]
    config = point.load()()
    assert "--no-token" not in config["command"] and "{base_url}gradrepl/" in config["command"]
    # The proxy adds the token the server is given to every request: a rebinding page has none.
    token = config["environment"]["GRADREPL_TOKEN"]
    assert len(token) >= 24 and config["request_headers_override"] == {"Authorization": f"token {token}"}
    assert setup_token() != token  # one per Jupyter server
    assert config["absolute_url"] is True


async def test_jupyter_server_proxies_the_tutor_under_a_prefix(tmp_path):
    port, token, prefix = free_port(), "jupyter-t0ken", "/user/ada/"
    (tmp_path / "root").mkdir()
    jupyter = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--ServerApp.base_url={prefix}", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={tmp_path / 'root'}", *(["--allow-root"] if os.getuid() == 0 else [])],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=fresh_env(tmp_path))
    try:
        served = Proxied(port, token, prefix)
        async with aiohttp.ClientSession() as http:
            # The Jupyter server starts, then the proxy starts gradrepl serve on first use.
            page = await first_page(http, served, "the proxied tutor")
            assert "textual.js" in page
            async with http.get(served.url, allow_redirects=False) as response:  # Jupyter's login guards it
                assert response.status in (302, 401, 403) and "textual.js" not in await response.text()
            learner = await Learner(http, served).connect()
            await learner.ready()
            await learner.run("behind_the_hub = torch.ones(2)")
            await learner.wait_for(lambda text: "● behind_the_hub" in text, "the name in the panel")
            await learner.close()
        tree = descendants(jupyter.pid)
        assert any("gradrepl serve" in command or "-m gradrepl serve" in command for command in tree.values()), tree
    finally:
        tree = descendants(jupyter.pid)
        jupyter.send_signal(signal.SIGTERM)
        jupyter.wait(DEADLINE)
    wait_until(lambda: not alive(tree), f"the proxied server's processes to end: {tree}")


def setup_token() -> str:
    from gradrepl.serve.jupyter_proxy import setup_gradrepl

    return setup_gradrepl()["environment"]["GRADREPL_TOKEN"]
