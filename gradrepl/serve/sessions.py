"""The learners of one server: a tutor process per browser tab, kept for a grace period after its socket goes.

A tab names its session by an id the page keeps in sessionStorage (one per tab, kept across reloads).
A websocket that comes with the id of a live session reattaches to it (the tutor redraws at the new
socket's size); a new id starts a new tutor, unless the server holds --max-sessions already. A
session with no socket ends after GRACE seconds; one whose learner typed nothing for --idle-timeout
ends too; SIGTERM ends them all.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass, field

from aiohttp import web
from textual_serve.download_manager import DownloadManager

from gradrepl.serve.shared_zygote import SharedZygote
from gradrepl.serve.tutor_template import TutorTemplate
from gradrepl.serve.tutor_service import Screen, TutorService, learner_env

GRACE = 60.0  # seconds a tutor outlives its websocket, for a reload or a network blip
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")
LEARNER_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}")  # a folder name: no ".", "..", dot-files or "/"


@dataclass
class Settings:
    argv: list[str]
    env: dict[str, str]          # for every tutor (GRADREPL_LESSONS ...)
    learners_dir: str            # named learners' homes (kept)
    visitors_dir: str            # anonymous learners' homes (removed with their session)
    max_sessions: int | None = None
    idle_timeout: float | None = None
    grace: float = GRACE


@dataclass
class LearnerSession:
    id: str
    home: str
    named: bool
    screen: Screen
    service: TutorService
    scratch: str
    last_input: float = field(default_factory=time.monotonic)
    detached_at: float | None = None
    ended: bool = False


class Registry:
    def __init__(self, settings: Settings, zygote: SharedZygote, template: TutorTemplate | None = None):
        self.settings = settings
        self.template = template
        self.zygote = zygote
        self.sessions: dict[str, LearnerSession] = {}
        self.downloads = DownloadManager()
        self.watcher: asyncio.Task | None = None
        # Handshakes whose session is not in `sessions` yet, by tab id: each holds a place under the
        # cap, and a second socket with the same id (a duplicated tab at once) waits for that session.
        self.opening: dict[str, asyncio.Future] = {}

    def scratch_for_pid(self, pid: int) -> str | None:
        for session in self.sessions.values():
            if session.service.pid == pid:
                return session.scratch
        return None

    def full(self) -> bool:
        cap = self.settings.max_sessions
        return cap is not None and len(self.sessions.keys() | self.opening.keys()) >= cap

    def reserve(self, session_id: str) -> bool:
        """Take a place for a new session now, before the handshake awaits (so handshakes at once
        cannot all pass the cap); open() turns it into the session. False when the class is full."""
        if self.full():
            return False
        self.opening[session_id] = asyncio.get_running_loop().create_future()
        return True

    def release(self, session_id: str, session: LearnerSession | None = None) -> None:
        """Give back the place reserve() took: to the session open() made, or to nobody (the handshake
        or the start failed); a socket that waits for it learns which."""
        future = self.opening.pop(session_id, None)
        if future is not None and not future.done():
            future.set_result(session)

    async def opened(self, session_id: str) -> LearnerSession | None:
        """The session another handshake with this id is opening now, once it is (None if it failed)."""
        future = self.opening.get(session_id)
        return await asyncio.shield(future) if future is not None else None

    def live(self, session_id: str) -> LearnerSession | None:
        """The tab's running session; None while it is still starting (opened() waits for that)."""
        session = self.sessions.get(session_id)
        usable = session is not None and not session.ended and session_id not in self.opening
        return session if usable else None

    async def open(self, session_id: str, learner: str | None, width: int, height: int) -> LearnerSession:
        """A new tutor process for this tab, in the place the caller reserved (counted once, by its id,
        while it is both reserved and in `sessions`)."""
        session = None
        try:
            if learner:
                home = os.path.join(self.settings.learners_dir, learner)
            else:
                home = os.path.join(self.settings.visitors_dir, session_id)
            os.makedirs(home, mode=0o700, exist_ok=True)
            folder = self.zygote.make_scratch(secrets.token_hex(8))
            env = {**self.settings.env, **learner_env(home),
                   "GRADREPL_SHARED_ZYGOTE": self.zygote.path, "GRADREPL_SHARED_SCRATCH": folder}
            screen = Screen()
            service = TutorService(self.settings.argv, screen, env, self.downloads, self.template)
            session = LearnerSession(session_id, home, bool(learner), screen, service, folder)
            self.sessions[session_id] = session
            await service.start(width, height)
        except BaseException:
            # As a failed handshake: no session left, and a socket waiting for this one is told so.
            if session is not None:
                session.service.kill()  # a process it opened before it failed (stop() knows only a started one)
                await self.end(session)
            self.release(session_id)
            raise
        self.release(session_id, session)  # the session counts itself from here
        asyncio.create_task(self._on_exit(session))
        return session

    async def _on_exit(self, session: LearnerSession) -> None:
        task = session.service.finished
        if task is not None:
            await asyncio.shield(task)
        await self.end(session)

    async def end(self, session: LearnerSession) -> None:
        """Stop the tutor (if running) and forget the session."""
        if session.ended:
            return
        session.ended = True
        await session.service.stop()
        await session.screen.close()
        if self.sessions.get(session.id) is session:
            del self.sessions[session.id]
        self.zygote.remove_scratch(session.scratch)
        if not session.named:
            shutil.rmtree(session.home, ignore_errors=True)

    def attach(self, session: LearnerSession, websocket: web.WebSocketResponse) -> web.WebSocketResponse | None:
        """Point the session's output at this socket; returns the socket it replaces (another tab's)."""
        previous, session.screen.websocket = session.screen.websocket, websocket
        session.detached_at = None
        session.last_input = time.monotonic()
        return previous if previous is not websocket else None

    def detach(self, session: LearnerSession, websocket: web.WebSocketResponse) -> None:
        if session.screen.websocket is websocket:
            session.screen.websocket = None
            session.detached_at = time.monotonic()

    def start_watching(self) -> None:
        self.watcher = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        """End sessions past their grace period or idle timeout (checked every second)."""
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            for session in list(self.sessions.values()):
                gone = session.detached_at is not None and now - session.detached_at > self.settings.grace
                drawn = session.screen.first_frame_at
                quiet_since = max(session.last_input, drawn) if drawn is not None else now
                idle = self.settings.idle_timeout is not None and now - quiet_since > self.settings.idle_timeout
                if gone or idle:  # the page then says "Disconnected." and offers to reconnect
                    asyncio.create_task(self.end(session))

    async def close(self) -> None:
        if self.watcher:
            self.watcher.cancel()
        await asyncio.gather(*(self.end(session) for session in list(self.sessions.values())),
                             return_exceptions=True)
