"""Who may reach the tutor: the Host it was asked by, the token, the websocket's Origin, and which
hosts may go without a token.

The Host (and X-Forwarded-Host, behind a proxy) must name this server: a loopback name or address,
the --host it listens on, or an --allow-host. Otherwise a DNS-rebinding site (its name pointed at
127.0.0.1, so Host and Origin agree) could use a --no-token server from a learner's browser.

The token comes as ?token= on the first visit (then a cookie, and the address is cleaned of it), or
as the cookie, or as an `Authorization: token T` header. It is compared in constant time and never
logged: the server keeps no access log, since request lines carry it.
"""

from __future__ import annotations

import hmac
import ipaddress
from urllib.parse import urlsplit

from aiohttp import web

COOKIE = "gradrepl-token"


def offered_token(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("token "):
        return header[6:].strip()
    return request.query.get("token") or request.cookies.get(COOKIE)


def token_matches(offered: str | None, token: str) -> bool:
    # surrogatepass: aiohttp gives undecodable header bytes as lone surrogates, a query may hold them
    # too; any text then encodes (and, being no token, does not match) instead of raising.
    if offered is None:
        return False
    return hmac.compare_digest(offered.encode("utf-8", "surrogatepass"), token.encode("utf-8", "surrogatepass"))


def refusal(request: web.Request, token: str | None) -> web.Response | None:
    """401 without a token, 403 with a wrong one; None when the request may pass."""
    if token is None:
        return None
    offered = offered_token(request)
    if offered is None:
        return web.Response(status=401, text="gradrepl serve: this page needs its token (?token=...)\n")
    if not token_matches(offered, token):
        return web.Response(status=403, text="gradrepl serve: wrong token\n")
    return None


def origin_allowed(request: web.Request) -> bool:
    """The websocket's Origin is the page's own host: another site cannot drive a learner's tutor
    with the learner's cookie. Behind a proxy the Host may be rewritten: X-Forwarded-Host counts."""
    origin = request.headers.get("Origin")
    if not origin:
        return False
    netloc = urlsplit(origin).netloc.lower()
    hosts = {request.host.lower()}
    forwarded = request.headers.get("X-Forwarded-Host")
    if forwarded:
        hosts.update(part.strip().lower() for part in forwarded.split(","))
    return netloc in hosts


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARDS = ("0.0.0.0", "::", "")


def host_name(netloc: str) -> str | None:
    """The host of a Host header ("name:port", "[::1]:port"), lowercased; None if it is no host."""
    try:
        name = urlsplit("//" + netloc.strip()).hostname
        urlsplit("//" + netloc.strip()).port  # a port that is no number: refused
    except ValueError:
        return None
    return name or None


def allowed_hosts(listen_host: str, extra: tuple[str, ...] | list[str]) -> frozenset[str] | None:
    """The names a request's Host may give; None (any) only for a wildcard --host with no --allow-host."""
    listen = listen_host.strip("[]").lower()
    if "*" in extra:
        return None  # asked for (the JupyterLab tile: the proxy passes the hub's name, the token guards)
    if listen in WILDCARDS and not extra:
        return None  # a token server on every address: its names are not known (docs: give --allow-host)
    names = {*LOOPBACK_NAMES, *(host_name(item) or item.lower() for item in extra)}
    if listen not in WILDCARDS:
        names.add(listen)
    return frozenset(names)


def host_allowed(request: web.Request, allowed: frozenset[str] | None) -> bool:
    """Host and every X-Forwarded-Host name this server (or is loopback)."""
    if allowed is None:
        return True
    given = [request.headers.get("Host", "")]
    forwarded = request.headers.get("X-Forwarded-Host")
    if forwarded is not None:
        given += forwarded.split(",")
    for netloc in given:
        name = host_name(netloc)
        if name is None or not (name in allowed or is_loopback(name)):
            return False
    return True


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
