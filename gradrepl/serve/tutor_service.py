"""One learner's tutor process: textual-serve's AppService, started our way and kept apart from the socket.

textual-serve binds an AppService to one websocket (write and close callbacks) and stops the app
when that socket closes. Here the callbacks go through a Screen that a websocket attaches to and
detaches from, so a reload finds the same process; and the process is started without a shell, in
a session of its own (SIGTERM reaches its whole group), with HOME and the XDG folders pointed at
the learner's own folder and the server's zygote socket in its environment.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from gradrepl import paths
from gradrepl.client import launch
from gradrepl.serve.tutor_template import TutorTemplate

QUIT_GRACE = 5.0  # seconds a tutor gets to close its kernel after "quit" before its group is killed


class Screen:
    """Where a tutor's output goes: the websocket attached now, or nowhere (its next attach redraws)."""

    def __init__(self):
        self.websocket: web.WebSocketResponse | None = None
        self.first_frame_at: float | None = None  # nobody can type before it: idle time counts from it

    async def write_bytes(self, data: bytes) -> None:
        if self.first_frame_at is None:
            self.first_frame_at = time.monotonic()
        if self.websocket is not None and not self.websocket.closed:
            try:
                await self.websocket.send_bytes(data)
            except (ConnectionError, RuntimeError):
                pass

    async def write_str(self, text: str) -> None:
        if self.websocket is not None and not self.websocket.closed:
            try:
                await self.websocket.send_str(text)
            except (ConnectionError, RuntimeError):
                pass

    async def close(self) -> None:
        if self.websocket is not None:
            await self.websocket.close()


def learner_env(home: str) -> dict[str, str]:
    """HOME and the XDG folders of one learner: history, progress and the quiz deck are theirs alone."""
    env = {"HOME": home, paths.HOME_ENV: os.path.join(home, "gradrepl")}  # the server's own GRADREPL_HOME is not theirs
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[name] = os.path.join(home, name.lower().removeprefix("xdg_").removesuffix("_home"))
        os.makedirs(env[name], mode=0o700, exist_ok=True)
    return env


class TutorService(AppService):
    """textual-serve's AppService with our process start and stop."""

    def __init__(self, argv: list[str], screen: Screen, env: dict[str, str], downloads: DownloadManager,
                 template: TutorTemplate | None = None):
        super().__init__(" ".join(argv), write_bytes=screen.write_bytes, write_str=screen.write_str,
                         close=screen.close, download_manager=downloads)
        self.argv = argv
        self.extra_env = env
        self.template = template  # forks this tutor when it can (tutor_template.py); else a new interpreter

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        environment = super()._build_environment(width, height)
        environment.update(self.extra_env)
        return environment

    async def _open_app_process(self, width: int = 80, height: int = 24):
        environment = self._build_environment(width, height)
        if self.template is not None and self.template.serves(environment):
            try:
                self._process = process = await self.template.fork(environment, self.extra_env["HOME"],
                                                                   on_pid=self._forked)
                self._stdin = process.stdin
                return process
            except OSError:
                pass  # the template is gone: start the tutor as a new interpreter
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=environment, cwd=self.extra_env["HOME"],
            start_new_session=True)
        self._stdin = process.stdin
        return process

    async def redraw(self, width: int, height: int) -> None:
        """Make the app paint its whole screen again (a reattached socket shows nothing yet): the new
        tab's size, then a focus, on which the tutor repaints everything (GradReplApp.on_app_focus).
        Not a resize to and fro: Textual merges two resizes within 1/120 s, and no frame the server
        reads tells whether the app has seen the first (a cursor blink may be on its way)."""
        await self.set_terminal_size(width, height)
        await self.send_meta({"type": "focus"})

    def _forked(self, pid: int) -> None:
        self.forked_pid = pid

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else getattr(self, "forked_pid", None)

    @property
    def finished(self) -> asyncio.Task | None:
        return self._task

    async def stop(self) -> None:
        """Ask the app to quit; kill its process group if it has not ended within QUIT_GRACE."""
        if self._task is None:
            return
        task = self._task
        await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        await self.send_meta({"type": "quit"})
        try:
            await asyncio.wait_for(asyncio.shield(task), QUIT_GRACE)
        except asyncio.TimeoutError:
            pass
        self.kill()
        await task
        await self._process.wait()
        self._task = None

    def kill(self) -> None:
        if self._process is not None and self._process.returncode is None:
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def template_environment(env: dict[str, str]) -> dict[str, str]:
    """What the tutor template starts with: every tutor's environment (textual-serve's, with the
    server's `env`) but no learner's."""
    service = TutorService(["gradrepl"], Screen(), {}, None)  # never started: only its environment is read
    return {**service._build_environment(), **env}


def tutor_argv(flags: list[str]) -> list[str]:
    """The command each learner's tutor runs: the TUI, as `gradrepl` with no command opens it."""
    return [sys.executable, *launch.PYTHON_FLAGS, "-m", "gradrepl", *flags]
