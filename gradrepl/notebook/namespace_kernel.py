"""The notebook's own namespace, session-shaped, for the lesson engine's live side (LessonRun's `live`).

In `play` and `learn` the live side is a gradrepl kernel; in a notebook it is the learner's own
Python: lesson cells, a question's setup and code and a task's attempts run in IPython's user
namespace, where the learner's cells run, and a task is judged on the state that namespace holds,
read by the same reader a kernel's `task_state` op uses (kernel/inspect/task_state.py) and checked
by the same reply schema. There is no sandbox here, and the lesson's footer says so.

A "restart" cannot start a fresh process: it takes out of the namespace every name bound or rebound
since the lesson opened (the learner's names from before stay, as do modules and the lesson's own
handle), then gives back torch, nn and F (and torch's functions and classes as they were imported,
where a cell patched them: kernel/inspect/torch_patches.py), so a replay of the lesson's code rebuilds the lesson's
names from nothing, as a fresh kernel would. Every call runs on the main thread (loop_thread.py).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import time
import traceback
import types

import torch

from gradrepl.kernel.inspect import task_state
from gradrepl.kernel.inspect.torch_patches import Patches
from gradrepl.notebook.loop_thread import LoopThread
from gradrepl.protocol.messages import ErrorInfo, StepResult
from gradrepl.protocol.reply_schema import TASK_STATE, Violation
from gradrepl.terminal_text import visible

RESULT_CAP = 10_000  # characters of a result's repr kept (a tensor of a million numbers prints its summary)
TORCH_AS_IMPORTED = Patches()  # taken when the notebook's lesson is first imported, before its cells patch torch


def fresh_names() -> dict:
    """What a gradrepl kernel's namespace starts with (kernel/requests.py's fresh_namespace): torch, nn, F."""
    return {"torch": torch, "nn": torch.nn, "F": torch.nn.functional}


class NamespaceKernel:
    """The learner's IPython namespace as the lesson engine's live session."""

    def __init__(self, shell, loop: LoopThread, on_ran=None) -> None:
        self.shell = shell
        self.loop = loop
        self.on_ran = on_ran  # (source) -> None on the main thread after each run (the panel reads it)
        self.history: list[str] = []  # the engine's steps and the learner's cells since the lesson opened
        self.step = 0
        self._kept = dict(shell.user_ns)  # the names there before the lesson: a restart leaves them

    # -- the session's shape (what LessonRun, tasks and grading call) ---------------
    async def execute(self, source: str, **_kwargs) -> StepResult:
        return await self.loop.on_main(lambda: self.run_here(source))

    async def restart(self) -> list[str]:
        return await self.loop.on_main(self._restart)

    async def task_state(self, targets: list, start: bool, token: str = "", everything: bool = False) -> dict:
        return await self.loop.on_main(lambda: self._task_state(targets, start, token, everything))

    # -- on the main thread -------------------------------------------------------
    def run_here(self, source: str) -> StepResult:
        """Run ``source`` as a cell runs (IPython syntax, a final expression's value shown), output captured."""
        self.step += 1
        self.history.append(source)
        result = StepResult(step=self.step, source=source)
        out, err = io.StringIO(), io.StringIO()
        started = time.perf_counter()
        namespace = self.shell.user_ns
        try:
            body, last = _compiled(self.shell.transform_cell(source))
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                exec(body, namespace)
                value = eval(last, namespace) if last is not None else None
            if value is not None:
                result.result = visible(_capped(repr(value)))
        except BaseException as exc:  # the learner's code may raise anything, Ctrl-C included
            result.error = _error(exc)
        result.duration_ms = round((time.perf_counter() - started) * 1000, 3)
        result.stdout, result.stderr = visible(out.getvalue()), visible(err.getvalue())
        if self.on_ran is not None:
            self.on_ran(source)
        return result

    def noted(self, source: str) -> None:
        """A cell the learner ran: part of what a task's `check` reads as their attempt."""
        self.history.append(source)

    def _restart(self) -> list[str]:
        namespace = self.shell.user_ns
        removed = []
        for name, value in list(namespace.items()):
            if name.startswith("_") or name in self.shell.user_ns_hidden or self._kept.get(name, _NOTHING) is value \
                    or isinstance(value, types.ModuleType) or type(value).__module__.startswith("gradrepl."):
                continue
            del namespace[name]
            if isinstance(value, torch.Tensor):
                removed.append(name)
        namespace.update(fresh_names())
        TORCH_AS_IMPORTED.put_back()  # as a fresh kernel has torch: a patch made in a cell would act unseen
        if self.on_ran is not None:
            self.on_ran("")
        return removed

    def _task_state(self, targets: list, start: bool, token: str, everything: bool) -> dict:
        state = task_state.read(self.shell.user_ns, targets, start, token, everything)
        try:  # as plain data, checked as a kernel's reply is: a task is judged on what the wire would carry
            return TASK_STATE(json.loads(json.dumps(state)), ((), "state"))  # where: (parent, key), as the client
        except (Violation, TypeError, ValueError):
            return {}


_NOTHING = object()


def _compiled(source: str):
    """A cell's code: everything but a final expression, and that expression (None when there is none)."""
    tree = ast.parse(source, "<lesson>")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = compile(ast.Expression(tree.body.pop().value), "<lesson>", "eval")
    return compile(tree, "<lesson>", "exec"), last


def _capped(text: str) -> str:
    return text if len(text) <= RESULT_CAP else text[:RESULT_CAP] + f"... ({len(text) - RESULT_CAP} more characters)"


def _error(exc: BaseException) -> ErrorInfo:
    # The learner's frames only: the first frame is this module's exec.
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next if exc.__traceback__ else None)
    message = str(exc)
    return ErrorInfo(type=type(exc).__name__, message=visible(_capped(message)),
                     traceback=visible(_capped("".join(frames))))
