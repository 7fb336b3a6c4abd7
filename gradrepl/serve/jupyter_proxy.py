"""JupyterLab's "gradrepl" launcher tile: jupyter-server-proxy starts `gradrepl serve` behind the user's
own Jupyter server, which authenticates, on loopback, under that server's prefix.

The proxy passes the browser's Host on (the hub's public name, unknown here), so the server answers to
any Host (--allow-host '*'); what keeps a DNS-rebinding page off its loopback port is a token only
this Jupyter server holds: given to `gradrepl serve` in its environment and added by the proxy to
every request it forwards (request_headers_override), the page's and the websocket's alike.
"""

from __future__ import annotations

import os
import secrets
import sys


def setup_gradrepl() -> dict:
    """The jupyter_serverproxy_servers entry point's server description (one token per Jupyter server)."""
    token = secrets.token_urlsafe(24)  # [A-Za-z0-9_-]: nothing the proxy's {template} reads
    return {
        # absolute_url: the proxy passes the whole path on, so the server answers under --base-url.
        "command": [sys.executable, "-m", "gradrepl", "serve", "--host", "127.0.0.1", "--allow-host", "*",
                    "--port", "{port}", "--base-url", "{base_url}gradrepl/"],
        "environment": {"GRADREPL_TOKEN": token},
        "request_headers_override": {"Authorization": f"token {token}"},
        "absolute_url": True,
        "timeout": 60,
        "launcher_entry": {"title": "gradrepl", "icon_path": os.path.join(os.path.dirname(__file__), "icon.svg")},
        "new_browser_tab": True,
    }
