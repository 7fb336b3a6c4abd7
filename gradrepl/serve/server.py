"""The web server of `gradrepl serve`: the page, the websocket per tab, textual-serve's static files.

Routes, under --base-url: `` (the page), `ws/{session}[/{learner}]` (a tab's websocket, textual-serve's
protocol: its Server._process_messages reads it, after frames.usable has dropped what it could not
read), `static/` (textual-serve's xterm.js and css). The Host check and the token guard all three;
the websocket also checks Origin. No access log: request lines carry tokens.
"""

from __future__ import annotations

import asyncio
import html
import os
import secrets
import shutil
import signal
import string
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.server import Server as TextualServer

from gradrepl.serve import access, frames
from gradrepl.serve.sessions import LEARNER_ID, SESSION_ID, Registry, Settings
from gradrepl.serve.shared_zygote import SharedZygote
from gradrepl.serve.tutor_service import template_environment, tutor_argv
from gradrepl.serve.tutor_template import TutorTemplate

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(textual_serve.__file__).parent / "static"


@dataclass
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None     # None: --no-token
    base_url: str = "/"
    max_sessions: int | None = None
    idle_timeout: float | None = None
    lessons: str | None = None
    learners_dir: str | None = None
    disk_limit: int = 1 << 30
    grace: float | None = None
    allow_hosts: tuple[str, ...] = ()  # --allow-host: names a proxy in front may give as Host


def normal_base_url(base_url: str) -> str:
    return "/" + base_url.strip("/") + "/" if base_url.strip("/") else "/"


class ClassroomServer:
    def __init__(self, options: ServeOptions, flags: list[str]):
        """`flags`: the `gradrepl` flags every learner's tutor runs with (--memory-limit ...)."""
        self.options = options
        self.base = normal_base_url(options.base_url)
        self.private = tempfile.mkdtemp(prefix="gradrepl-serve-")  # 0700: the zygote socket, visitors' homes
        env = {"GRADREPL_LESSONS": os.path.abspath(options.lessons)} if options.lessons else {}
        learners = options.learners_dir or os.path.join(self.private, "learners")
        # Tutors are forked from a warm template (tutor_template.py); a new interpreter when it cannot.
        self.template = TutorTemplate(template_environment(env), flags)
        settings = Settings(argv=tutor_argv(flags), env=env, learners_dir=learners,
                            visitors_dir=os.path.join(self.private, "visitors"),
                            max_sessions=options.max_sessions, idle_timeout=options.idle_timeout)
        if options.grace is not None:
            settings.grace = options.grace
        self.zygote = SharedZygote(self.private, options.disk_limit * max(options.max_sessions or 8, 1),
                                   lambda pid: self.registry.scratch_for_pid(pid))
        self.registry = Registry(settings, self.zygote, self.template)
        self.page = string.Template((TEMPLATES / "page.html").read_text())
        self.full_page = string.Template((TEMPLATES / "full.html").read_text())
        # textual-serve's own message loop for a websocket (stdin, resize, ping, blur, focus).
        self.messages = TextualServer("gradrepl")._process_messages
        self.hosts = access.allowed_hosts(options.host, options.allow_hosts)

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard])
        base = self.base
        app.add_routes([
            web.get(base, self.index),
            web.get(base + "ws/{session}", self.websocket),
            web.get(base + "ws/{session}/{learner}", self.websocket),
            web.static(base + "static", STATIC),
        ])
        if base != "/":
            app.add_routes([web.get(base.rstrip("/"), self.slash)])
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler):
        if not access.host_allowed(request, self.hosts):
            return web.Response(status=403, text="gradrepl serve: this server is not called by that name "
                                                 "(see --allow-host)\n")
        refused = access.refusal(request, self.options.token)
        if refused is not None:
            return refused
        return await handler(request)

    async def slash(self, request: web.Request) -> web.Response:
        # Relative addresses need the trailing slash; the redirect itself is relative too (any prefix).
        last = self.base.rstrip("/").rsplit("/", 1)[-1]
        raise web.HTTPFound(f"{last}/" + ("?" + request.query_string if request.query_string else ""))

    async def index(self, request: web.Request) -> web.Response:
        if "token" in request.query and self.options.token is not None:
            # The token moves to a cookie and out of the address bar (history, Referer, screen shares).
            query = [(key, value) for key, value in request.query.items() if key != "token"]
            response = web.HTTPFound("./" + ("?" + urlencode(query) if query else ""))
            response.set_cookie(access.COOKIE, request.query["token"], path=self.base, httponly=True,
                                samesite="Strict")
            raise response
        if self.registry.full():
            return self._full_response()
        font_size = request.query.get("fontsize", "16")
        text = self.page.safe_substitute(font_size=html.escape(font_size if font_size.isdigit() else "16"),
                                         fresh_id=secrets.token_urlsafe(24))
        return web.Response(text=text, content_type="text/html", headers={"Cache-Control": "no-store"})

    def _full_response(self) -> web.Response:
        text = self.full_page.safe_substitute(max_sessions=self.options.max_sessions)
        return web.Response(status=503, text=text, content_type="text/html")

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        if not access.origin_allowed(request):
            return web.Response(status=403, text="gradrepl serve: the websocket's Origin is not this page's\n")
        session_id, learner = request.match_info["session"], request.match_info.get("learner")
        if not SESSION_ID.fullmatch(session_id) or (learner is not None and not LEARNER_ID.fullmatch(learner)):
            return web.Response(status=400, text="gradrepl serve: no such session or learner id\n")
        width = _number(request.query.get("width"), 80)
        height = _number(request.query.get("height"), 24)
        session = self.registry.live(session_id)
        joining = session is None and session_id in self.registry.opening  # the same id's handshake is under way
        reattached = session is not None or joining
        if session is None and not joining and not self.registry.reserve(session_id):
            return self._full_response()
        websocket = web.WebSocketResponse(heartbeat=15)
        try:
            await websocket.prepare(request)
        except BaseException:
            if session is None and not joining:
                self.registry.release(session_id)
            raise
        if joining:
            session = await self.registry.opened(session_id)
            if session is None:  # that start failed: this tab's page says so and offers to reconnect
                await websocket.close()
                return websocket
        elif session is None:
            session = await self.registry.open(session_id, learner, width, height)
        previous = self.registry.attach(session, websocket)
        if previous is not None:
            await previous.close()  # the same tab id in another tab (a duplicated tab): the newer wins
        if reattached:
            await session.service.redraw(width, height)  # a reattached tutor paints it all
        try:
            await self.messages(_Typing(websocket, session), session.service)
        finally:
            self.registry.detach(session, websocket)
        return websocket

    # -- running -------------------------------------------------------------
    async def start(self) -> web.AppRunner:
        await asyncio.gather(self.zygote.start(), self._start_template())
        self.registry.start_watching()
        runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.options.host, self.options.port)
        await site.start()
        self.runner = runner
        return runner

    def url(self) -> str:
        host = self.options.host if ":" not in self.options.host else f"[{self.options.host}]"
        port = self.bound_port()
        return f"http://{host}:{port}{self.base}"

    def bound_port(self) -> int:
        for site in self.runner.sites:
            return site._server.sockets[0].getsockname()[1]
        return self.options.port

    async def _start_template(self) -> None:
        try:
            await self.template.start()
        except (OSError, RuntimeError, asyncio.TimeoutError):
            pass  # every tutor then starts as a new interpreter, as textual-serve starts its apps

    async def stop(self) -> None:
        await self.registry.close()
        await self.runner.cleanup()
        await self.template.close()
        await self.zygote.close()
        shutil.rmtree(self.private, ignore_errors=True)

    async def run_until_signalled(self, on_ready) -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        try:
            await self.start()
            on_ready(self)
            await stop.wait()
        finally:
            await self.stop()


class _Typing:
    """The websocket as textual-serve's message loop reads it, noting when the learner last typed."""

    def __init__(self, websocket: web.WebSocketResponse, session):
        self.websocket = websocket
        self.session = session

    def __aiter__(self):
        return self._messages()

    async def _messages(self):
        async for message in self.websocket:
            if message.type != WSMsgType.TEXT:
                continue  # textual-serve reads text frames only
            kind = frames.usable(message.data)
            if kind is None:
                continue  # a frame textual-serve's loop would raise on: dropped, the tab goes on
            if kind == "stdin":
                self.session.last_input = time.monotonic()
            yield message

    async def send_json(self, data) -> None:
        await self.websocket.send_json(data)


def _number(text: str | None, default: int) -> int:
    try:
        return max(10, min(int(text), 1000)) if text is not None else default
    except ValueError:
        return default
