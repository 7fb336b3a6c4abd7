"""Leaving, or losing the namespace: `exit`, Ctrl-Q/Ctrl-D, F8, %reset and %restart ask first
(session/leaving.py); a hung-up terminal takes the kernel along and exits.
"""

from __future__ import annotations

import asyncio
import os
import signal

from textual import work

from gradrepl.tui.app_part import AppPart
from gradrepl.session import leaving
from gradrepl.tui.tensors.tensor_table import TensorTable
from gradrepl.tui.terminal_watch import terminal_fds, terminal_gone

HANGUP_CLOSE_TIMEOUT = 5.0  # seconds for the kernel and zygote to go after the terminal did
HANGUP_EXIT = 129  # 128 + SIGHUP, as a shell reports a hung-up job


class LeavingApp(AppPart):
    """Asking before the learner's variables go, and leaving (app_part.py)."""

    def _watch_terminal(self) -> None:
        """Leave, and take the kernel along, when the terminal goes away, with or without a SIGHUP."""
        fds = [] if self.is_headless else terminal_fds()
        if not fds:
            return
        self.set_interval(0.5, lambda: terminal_gone(fds) and self.terminal_lost())
        asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self.terminal_lost)

    def terminal_lost(self) -> None:
        """No one can see or type any more: stop the kernel and its zygote first, then exit."""
        if not self._exiting_for_hangup:
            self._exiting_for_hangup = True
            self.run_worker(self._close_and_exit(), group="hangup", exit_on_error=False)

    async def _close_and_exit(self) -> None:
        if self.session is not None:
            try:
                await asyncio.wait_for(self.session.close(), HANGUP_CLOSE_TIMEOUT)
            except (asyncio.TimeoutError, OSError):
                pass  # the kernels die with their zygote (parent-death signal) when this process goes
        # Not self.exit(): Textual's shutdown writes to the dead terminal, and once its writer
        # thread has died of EIO, the put of the last frame blocks forever. Nothing is left to show.
        os._exit(HANGUP_EXIT)

    def action_kill(self) -> None:
        """Kill the kernel for a fresh one; asks first when the learner's variables would go with it."""
        if self.kernel_state == "failed" and not self.kernel_started:
            self.start_kernel()  # the first start failed: F8 tries it again
            return
        self.ask_first(leaving.KILL, self._kill_now)

    def _kill_now(self) -> None:
        self.kill_kernel()


    def run_typed(self, source: str) -> None:
        """A step typed (or chosen in the palette): `exit`/`quit` leave, as in IPython; %reset and
        %restart ask first (session/leaving.py); the rest is queued."""
        if leaving.is_exit(source):
            self.exit()
        elif (magic := leaving.loses_namespace(source)) is not None:
            self.ask_first(leaving.LOSES[magic], lambda: self.submit(source))
        else:
            self.submit(source)

    def action_quit(self) -> None:
        """Ctrl-Q, or Ctrl-D on an empty input: leave, asking first when the namespace holds something.
        Pressed again while asked (or while the question is being made), it leaves."""
        if self._leaving:
            self.exit()
            return
        self._leaving = True

        def stay() -> None:
            self._leaving = False

        self.ask_first(leaving.QUIT, self.exit, stay, also_yes=("ctrl+d",))

    @work(group="ask", exit_on_error=False)
    async def ask_first(self, asked: leaving.Asked, then, stay=None, also_yes: tuple[str, ...] = ()) -> None:
        """`then()` at once when the namespace holds nothing of the learner's, else once they say yes."""
        names = await self._names_to_lose()
        if not leaving.worth_asking(names):
            then()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                then()
                return
            if stay is not None:
                stay()
            self.focus_input()

        question = leaving.question(asked, names, self.query_one(TensorTable).names)
        from gradrepl.tui.confirm import Confirm  # at the first question, not before the first frame

        self.push_screen(Confirm(question, asked.yes, also_yes), answered)

    async def _names_to_lose(self) -> list[str] | None:
        if self.session is None or self.kernel_state == "failed":
            return []  # no kernel: nothing left to lose
        if self.kernel_state != "busy" and self.steps_in_kernel == 0 and not self.session.tensors:
            return []  # nothing typed into this kernel yet (a fresh one holds only torch, nn, F)
        return await leaving.names_to_lose(self.session)
