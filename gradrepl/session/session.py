"""A frontend-agnostic session over one KernelClient: steps, history, %magics.

The TUI, the plain REPL, `gradrepl run`, lessons and the quiz all drive the
kernel through this class; none of them imports torch.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from gradrepl.completeness import HelpRequest, help_request
from gradrepl.client.deaths import KernelOverdue
from gradrepl.client.kernel_client import INTERRUPT_GRACE, REQUEST_DEADLINE, KernelClient, KernelDied, KernelProcess
from gradrepl.client.options import KernelOptions
from gradrepl.protocol.messages import OP_SECONDS, Completion, ErrorInfo, StepResult
from gradrepl.protocol.shapes import Check, GraphReply, SeriesReply, TraceReply, Value
from gradrepl.client.crash_stack import without_own_frames
from gradrepl.session import grad_why
from gradrepl.session.magics import Magics
from gradrepl.session.request_result import RequestResult, request_result_from
from gradrepl.session.state import KernelState
from gradrepl.session.timeline import Timeline
from gradrepl.views.check import word_check
from gradrepl.views.diagnosis import explain_error, explain_step
from gradrepl.views.help_page import worded_page
from gradrepl.views.remarks import request_error, unshown_text, word_error, word_step, word_trace, worded_parse_error

completion_log = logging.getLogger("gradrepl.completion")


# Completions made before the first Tab: a bare name (jedi's import and its builtins, the slowest: seconds),
# then an attribute of torch (torch's namespace walked once).
WARM_COMPLETIONS = (("pri", 3), ("torch.te", 8))
REPLAY_AHEAD = 16  # steps `replay` keeps sent ahead of the oldest reply, so the kernel never waits
LOST = "KernelLost"  # the error type of a step or an inspection no kernel answered
NO_PROGRAMS = ("!cmd runs a shell command in IPython; this kernel's sandbox runs no programs (no shell, "
               "no subprocess), so nothing was run. Use Python here, e.g. os.listdir() instead of !ls.")


@dataclass
class _Sent:
    """A step sent to the kernel: its reply payload, or why the kernel was lost while it ran."""

    step: int
    source: str
    kernel: KernelProcess | None
    timeout: float | None
    payload: dict | None = None
    lost: str | None = None
    timed_out: bool = False
    first_line: int = 1
    reply: asyncio.Future | None = None  # sent ahead: the reply to come (None: the kernel ended)
    timer: asyncio.TimerHandle | None = None


class Session:
    """One learner's conversation with one kernel at a time."""

    def __init__(self, options: KernelOptions | None = None,
                 on_state: Callable[[KernelState], None] | None = None,
                 on_restart: Callable[[], None] | None = None):
        self.options = options or KernelOptions()
        self.client = KernelClient(self.options)
        self.on_state = on_state
        self.on_restart = on_restart  # a fresh kernel replaced the old one (its variables are gone)
        self.state = KernelState.STARTING
        self.tensors: dict[str, dict] = {}
        # name -> (the .grad it held before the step that last changed it, that step), where that step
        # changed a .grad that held something: a second backward's addition, said by views.tables.grad_words
        self.grads_before: dict[str, tuple[dict, int]] = {}
        self.history: list[str] = []
        # The console's width in columns (None: no limit); %tensors, %graph and %check fit in it.
        self.width: int | None = None
        # True where a row wrapped onto more lines would read as more rows (the TUI's console): a table
        # too wide leaves columns out and cuts the rest with …; False: cells wrap between words (--plain).
        self.one_line_rows = False
        self.magics = Magics(self)
        self.sandbox: dict[str, dict] = {}
        self.step = 0
        self._running_step: int | None = None
        self._changed: list[str] = []  # names whose rows are flagged changed
        self._ladder: asyncio.Task | None = None
        self.timeline = Timeline()  # every past step as deltas (%at, the TUI's timeline)
        self.completion_warmed = False  # warm_completion() has run: the first Tab finds jedi ready

    # -- lifecycle ------------------------------------------------------
    async def start(self) -> None:
        """Start the kernel; returns once it can run code (torch imported)."""
        self._set_state("starting")
        kernel = await self.client.start()
        self.sandbox = kernel.ready.get("sandbox", {})
        self._set_state("idle")

    @property
    def kernel_info(self) -> dict:
        kernel = self.client.kernel
        return {"pid": kernel.pid if kernel else None, "mode": self.client.mode,
                "startup_ms": kernel.started_ms if kernel else None,
                "torch": kernel.ready.get("torch") if kernel else None, "restarts": self.client.restarts}

    async def close(self) -> None:
        if self._ladder:
            self._ladder.cancel()
        await self.client.close()
        self._set_state("dead")

    async def __aenter__(self) -> "Session":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    # -- steps ----------------------------------------------------------
    async def execute(self, source: str, timeout: float | None = None, filename: str | None = None,
                      first_line: int = 1) -> StepResult:
        """Run one step (a statement, a cell, a %magic or an `obj?`) and return what it did.

        `filename` and `first_line` say where the code comes from (`gradrepl run` passes the
        script's path and line) so tracebacks name it; a REPL step reads ``Cell In[N]``.
        """
        source = source.strip("\n")
        numbered = self.takes_number(source)
        step = self._new_step(source) if numbered else self._looked(source)
        kernels = self.timeline.restarts  # a kernel that dies in the step takes it along (numbering from 1)
        if source.lstrip().startswith("%"):
            result = await self.magics.run(step, source.strip())
        elif asked := help_request(source):
            result = await self.help(step, source, asked)
        elif source.lstrip().startswith("!"):
            result = StepResult(step=step, source=source, error=ErrorInfo("UsageError", NO_PROGRAMS))
        else:
            fields = {"filename": filename, "first_line": first_line} if filename else {}
            result = await self.run_code(step, source, timeout, **fields)
        if numbered and self.timeline.restarts == kernels:
            self.timeline.record(step, result.source, result.tensors, result.removed)
        return result

    def takes_number(self, source: str) -> bool:
        """Whether `source` becomes a numbered step (`In [N]`, `Cell In[N]`, `%at N`, F3): code does, and
        the magics that run a statement (%time, %timeit, %trace STMT); a magic that only looks, `obj?`
        and `!cmd` do not (%run numbers each of its file's statements itself)."""
        text = source.strip()
        if text.startswith("%"):
            return self.magics.takes_number(text)
        return not (help_request(text) or text.startswith("!"))

    def next_number(self, source: str) -> int | None:
        """The number `source` would take if it ran now (None: it takes none), for a frontend's echo."""
        return self.step + 1 if self.takes_number(source) else None

    async def replay(self, steps: list[tuple[int, str]], filename: str, stop_on_error: bool = False,
                     shadows: bool = True) -> AsyncIterator[StepResult]:
        """Run a script's steps ((first line, code) each, as `gradrepl run` splits them) in order and
        yield what each did, as execute() would have, one after the other.

        Up to REPLAY_AHEAD steps are sent before the oldest has replied, so the kernel goes from
        one to the next while the frontend gathers, records and shows the ones before. What the
        learner sees stays that of steps run one by one:
        - a step's timeout counts from the moment the kernel starts it (the reply before it), and
          its interrupt is aimed at it alone (InterruptTarget);
        - with `stop_on_error`, steps sent after one that fails are skipped by the kernel itself
          (`stop_after_error`), so none of them runs;
        - a step that crashed the kernel is reported, and the steps sent after it, which never
          ran, are sent again to the fresh kernel (unless `stop_on_error`).
        `shadows` false: the kernel records no formulas for %check.
        """
        fields = {"filename": filename} if shadows else {"filename": filename, "shadows": False}
        pending: deque[tuple[int, str, int | None]] = deque((line, code, None) for line, code in steps)
        ahead: deque[_Sent] = deque()
        never_ran: list[_Sent] = []  # numbered, but not run: their numbers are given back
        async with self.client.pipeline() as pipe:
            try:
                while pending or ahead:
                    while pending and len(ahead) < REPLAY_AHEAD:
                        ahead.append(self._send_ahead(pipe, *pending.popleft(), fields, stop_on_error,
                                                      ahead[-1] if ahead else None))
                    result = await self._oldest_result(ahead, pending, never_ran, stop_on_error)
                    if result is not None:
                        yield result
            except GeneratorExit:
                # The caller stopped reading: nothing more is sent, but what was sent runs, and counts.
                while ahead:
                    await self._oldest_result(ahead, pending, never_ran, stop_on_error)
                raise
            finally:  # done, or cancelled (an interrupt: the session is being closed)
                self._unnumber([*never_ran, *ahead, *(_Sent(step, code, None, None) for _, code, step in pending if step)])

    async def _oldest_result(self, ahead: deque[_Sent], pending: deque, never_ran: list[_Sent],
                             stop_on_error: bool) -> StepResult | None:
        """The oldest step sent ahead, awaited and gathered (None: the kernel skipped it)."""
        sent = ahead.popleft()
        await self._reply_of(sent)
        if sent.payload and sent.payload.get("skipped"):  # sent ahead of a failed step, with stop_on_error
            never_ran.append(sent)
            return None
        if sent.lost is not None:  # the steps sent after it went to the dead kernel and never ran
            if stop_on_error:
                never_ran.extend(ahead)
                pending.clear()
            else:
                pending.extendleft((later.first_line, later.source, later.step) for later in reversed(ahead))
            ahead.clear()
        elif stop_on_error and sent.payload.get("error"):
            pending.clear()  # what was sent ahead comes back skipped
        return await self._finish(sent)

    def _send_ahead(self, pipe, first_line: int, source: str, step: int | None, fields: dict,
                    stop_on_error: bool, before: _Sent | None) -> _Sent:
        source = source.strip("\n")
        step = step or self._new_step(source)
        if stop_on_error and before is not None:
            fields = {**fields, "stop_after_error": True}
        kernel, reply = pipe.send("execute", source=source, step=step, first_line=first_line, **fields)
        sent = _Sent(step, source, kernel, self.options.step_timeout, first_line=first_line, reply=reply)
        if before is None:
            self._started(sent)
        else:
            before.reply.add_done_callback(lambda done: self._next_started(done, sent))
        reply.add_done_callback(lambda _: self._ended(sent))
        return sent

    def _next_started(self, reply_before: asyncio.Future, sent: _Sent) -> None:
        """The kernel starts a step sent ahead once it has answered the one before (if it did)."""
        if not reply_before.cancelled() and reply_before.result() is not None and sent.kernel is self.client.kernel:
            self._started(sent)

    async def _reply_of(self, sent: _Sent) -> None:
        sent.payload = await sent.reply
        if sent.payload is None:
            sent.lost = (await self.client.lost(sent.kernel)).reason

    def _unnumber(self, never_ran: list[_Sent]) -> None:
        """Give back the step numbers (and history) of steps that were numbered but never ran."""
        for sent in sorted(never_ran, key=lambda sent: sent.step, reverse=True):
            if sent.step == self.step:
                self.step -= 1
                if sent.source.strip() and self.history and self.history[-1] == sent.source:
                    self.history.pop()

    async def _finish(self, sent: _Sent) -> StepResult:
        result = await self._collect(sent, renumber=False)  # a script's steps keep their numbers
        self.timeline.record(sent.step, result.source, result.tensors, result.removed)
        return result

    def _new_step(self, source: str) -> int:
        self.step += 1
        if source.strip():
            self.history.append(source)
        return self.step

    def _looked(self, source: str) -> int:
        """An input that takes no number (a magic that looks, `obj?`): kept in history; its result
        carries the number of the last step, the one it looked at."""
        if source.strip():
            self.history.append(source)
        return self.step

    async def run_statement(self, source: str, filename: str, first_line: int) -> StepResult:
        """One statement of a file (%run) as a numbered step, named by its file and line in tracebacks,
        kept in the timeline; the input history keeps the %run line, not each statement."""
        self.step += 1
        kernels = self.timeline.restarts
        result = await self.run_code(self.step, source, filename=filename, first_line=first_line)
        if self.timeline.restarts == kernels:
            self.timeline.record(result.step, result.source, result.tensors, result.removed)
        return result

    async def run_code(self, step: int, source: str, timeout: float | None = None, **fields) -> StepResult:
        """Send code to the kernel as step `step`, under the interrupt ladder and the step timeout."""
        return await self._collect(await self._send_code(step, source, timeout, fields))

    async def _send_code(self, step: int, source: str, timeout: float | None, fields: dict) -> _Sent:
        """The first half of a step: the request, and its reply (or the kernel's death) under the ladder."""
        sent = _Sent(step, source, self.client.kernel, timeout if timeout is not None else self.options.step_timeout)
        self._started(sent)
        try:
            sent.payload = await self.client.request("execute", source=source, step=step, **fields)
        except KernelDied as died:
            sent.lost = died.reason
        finally:
            self._ended(sent)
        return sent

    def _started(self, sent: _Sent) -> None:
        """The kernel runs `sent` now: it is the step an interrupt aims at, and its timeout starts."""
        self._running_step = sent.step
        self._set_state("busy")
        if sent.timeout:
            def on_timeout() -> None:
                sent.timed_out = True
                self._interrupt_step(sent.step, f"the step ran longer than the {sent.timeout:g} s step timeout "
                                                "and did not stop when interrupted")

            sent.timer = asyncio.get_running_loop().call_later(sent.timeout, on_timeout)

    def _ended(self, sent: _Sent) -> None:
        if sent.timer:
            sent.timer.cancel()
        if self._running_step == sent.step:
            self._running_step = None
            self._cancel_ladder()

    async def _collect(self, sent: _Sent, renumber: bool = True) -> StepResult:
        """The second half of a step: its output, its result, the live table updated."""
        if sent.lost is not None:
            return await self._after_crash(sent.step, sent.source, sent.lost, renumber, sent.kernel)
        out, err = await self.client.step_output(sent.kernel, sent.step, sent.payload)
        result = StepResult.from_payload(sent.step, sent.source, word_step(sent.payload))  # its data in words
        explain_step(result, sent.payload.get("diagnoses") or [])  # the kernel's diagnoses, in words
        result.stdout, result.stderr = out, err
        if sent.timed_out and result.error and result.error.type == "KeyboardInterrupt":
            result.error.explanation = (f"The step ran longer than the {sent.timeout:g} s step timeout "
                                        "(--step-timeout S) and was interrupted; variables assigned before that "
                                        "point are kept.")
        self._apply(result)
        if self._running_step is None:  # else the next step is already running
            self._set_state("idle")
        return result

    async def _after_crash(self, step: int, source: str, reason: str, renumber: bool = True,
                           dead: KernelProcess | None = None) -> StepResult:
        """The step a dead kernel took along, reported once a fresh kernel runs. `renumber`: the fresh
        kernel's steps count from In [1], as after a restart (an interactive session); else (a script's
        replay) they go on. `dead`: the kernel it ran on (a request that waited behind it may have started
        the fresh one already)."""
        dead = dead or self.client.kernel
        out, err = await self.client.leftover_output(dead) if dead else ("", "")
        err = without_own_frames(err)  # a segfault's stack names the worker's frames too
        removed = await self._fresh_kernel(renumber, dead)
        again = " Steps count from In [1] again." if renumber else ""
        words = (f"{reason[0].upper()}{reason[1:]}. A fresh kernel was started "
                 f"({self.client.kernel.started_ms:.0f} ms): the variables you defined before are lost. "
                 f"Your history is kept, so you can run those lines again.{again}")
        return StepResult(step=step, source=source, stdout=out, stderr=err, removed=removed,
                          error=ErrorInfo(type=LOST, message=reason, explanation=words),
                          kernel_event=words)

    def _apply(self, result: StepResult) -> None:
        """Keep the live table: changed rows replace old ones in place, removed names go."""
        for name in self._changed:  # only last step's rows: cost grows with what changed
            if name in self.tensors:
                self.tensors[name]["changed"] = False
        for name in result.removed:
            self.tensors.pop(name, None)
            self.grads_before.pop(name, None)
        for row in result.tensors:
            held = (self.tensors.get(row["name"]) or {}).get("grad")
            if held is not None and row.get("grad") != held and row["name"] not in result.grads_set:
                self.grads_before[row["name"]] = (held, result.step)
            else:
                self.grads_before.pop(row["name"], None)
            self.tensors[row["name"]] = row
        self._changed = [row["name"] for row in result.tensors]

    # -- interrupting ---------------------------------------------------
    async def interrupt(self) -> bool:
        """Ctrl-C: SIGINT now; if the step has not stopped after a grace period, kill it."""
        if self._running_step is None:
            return False
        self._interrupt_step(self._running_step,
                             f"the step did not stop within {INTERRUPT_GRACE:g} s of the interrupt "
                             "(code in C, like a long torch op, ignores Ctrl-C until it returns), "
                             "so the kernel was stopped")
        return True

    async def kill(self) -> list[str] | None:
        """Stop the kernel at once (the always-available escape). While idle, a restart: the names of the
        rows that went; during a step None: the step's result says what was lost."""
        if self._running_step is not None:
            self.client.kill("you stopped the kernel with Kill while a step was running")
            return None
        return await self.restart()

    def _interrupt_step(self, step: int, reason: str) -> None:
        if self._running_step != step:
            return
        self.client.interrupt(step)
        self._cancel_ladder()
        self._ladder = asyncio.ensure_future(self._kill_after_grace(step, reason))

    async def _kill_after_grace(self, step: int, reason: str) -> None:
        await asyncio.sleep(INTERRUPT_GRACE)
        if self._running_step == step:
            self.client.kill(reason)

    def _cancel_ladder(self) -> None:
        if self._ladder and not self._ladder.done() and self._ladder is not asyncio.current_task():
            self._ladder.cancel()
        self._ladder = None

    # -- commands ---------------------------------------------------------
    async def restart(self) -> list[str]:
        """A fresh kernel with an empty namespace, its steps numbered from 1 again (as Jupyter's); returns
        the names that disappeared. The timeline forgets the old kernel's steps and says a kernel began."""
        return await self._fresh_kernel()

    async def _fresh_kernel(self, renumber: bool = True, dead: KernelProcess | None = None) -> list[str]:
        """A fresh kernel, its steps numbered from 1 in a timeline that says a kernel began (`renumber`
        false: numbering goes on, as a crash in the middle of `run` keeps the script's numbers); `dead`:
        the kernel lost, replaced only once."""
        self._set_state("starting")
        restarts = self.client.restarts
        await self.client.replace(dead)
        if self.client.restarts == restarts:  # another request that lost `dead` started the fresh one
            self._set_state(KernelState.IDLE)
            return []
        self.sandbox = self.client.kernel.ready.get("sandbox", self.sandbox)
        removed = list(self.tensors)
        self.tensors.clear()
        self.grads_before.clear()
        self._changed = []
        if renumber:
            self.step = 0
            self.timeline.restart()
        if self.on_restart:
            self.on_restart()
        self._set_state(KernelState.IDLE)
        return removed

    async def reset(self) -> RequestResult:
        """Empty the namespace in the same kernel: data "removed", the names that disappeared (lost: a
        fresh kernel instead, the table emptied by the restart)."""
        reply = request_result_from(await self._request("reset"))
        self.tensors.clear()
        self.grads_before.clear()
        return reply

    async def warm_completion(self) -> None:
        """Make the first Tab as quick as the later ones: completions now, while the learner reads the
        banner, import jedi in the kernel, load its builtins and walk torch's namespace (seconds, once).
        Each is skipped once a step waits; a step typed meanwhile waits for the one request in flight."""
        for code, cursor in WARM_COMPLETIONS:
            if self.state != "idle":
                break
            await self.complete(code, cursor)
        self.completion_warmed = True

    async def complete(self, code: str, cursor: int | None = None) -> list[Completion]:
        """Candidates for the word at `cursor` (jedi over the live namespace); [] while a step runs.

        A failure is logged on the "gradrepl.completion" logger, never turned silently into no candidates.
        """
        if self.state != "idle":
            return []
        # Shielded: a menu that narrows as you type cancels stale requests, and a request cancelled
        # after it was sent would leave its reply to be read as the answer to the next one.
        reply = await asyncio.shield(self._request("complete", code=code,
                                                   cursor=len(code) if cursor is None else cursor))
        if "lost" in reply:
            completion_log.warning("completion failed at %d in %r: %s", cursor or len(code), code, reply["lost"])
            return []
        if reply.get("error"):
            completion_log.warning("completion failed at %d in %r: %s", cursor or len(code), code, reply["error"])
            return []
        for failure in reply.get("signature_errors", []):
            completion_log.warning("no signature for %s", failure)
        at = len(code) if cursor is None else cursor
        found = [Completion(**fields) for fields in reply.get("completions", [])]
        # A completion replaces text between its start and the cursor; any other start is a kernel's lie
        # (prompt_toolkit asserts on one), so it is dropped.
        return [completion for completion in found if 0 <= completion.start <= at]

    async def help(self, step: int, source: str, asked: HelpRequest) -> StepResult:
        """`obj?` (signature and docstring) or `obj??` (with the source), as a help display."""
        result = StepResult(step=step, source=source)
        reply = await self._request("help", expr=asked.expr, source=asked.source)
        error = reply.get("error")
        if "lost" in reply:
            result.error = ErrorInfo("KernelLost", reply["lost"], explanation=reply["lost"])
            result.kernel_event = reply["lost"]
        elif error:
            word_error(error)
            result.error = ErrorInfo(**error) if isinstance(error, dict) else ErrorInfo("KernelError", error)
            explain_error(result.error)
        else:
            result.display = worded_page(reply["display"])  # obj?'s fields laid out (views/help_page.py)
        return result

    async def graph(self, name: str) -> RequestResult[GraphReply]:
        """NAME's autograd graph: data "graph" (nodes, edges), drawn by views/graph.py (%graph, the TUI)."""
        return request_result_from(await self._request("graph", name=name))

    async def why_grad_is_none(self, name: str, graph: GraphReply | None = None) -> str | None:
        """Why `name`'s .grad is None, from what its timeline saw (session/grad_why.py), or None."""
        return await grad_why.why_grad_is_none(self, name, graph)

    async def trace(self, name: str) -> RequestResult[TraceReply]:
        """Backward from tensor `name` previewed node by node: data {"trace": {...}}, or why not in words."""
        return request_result_from(await self._request("trace", name=name))

    async def trace_statement(self, step: int, source: str) -> StepResult:
        """Run `source` as step `step`, recording every backward it makes (result.trace)."""
        reply = await self._request("trace_next")
        if reply.get("error"):
            return StepResult(step=step, source=source, error=ErrorInfo("KernelError", reply["error"]))
        return await self.run_code(step, source)

    async def series(self, name: str) -> RequestResult[SeriesReply]:
        """The numbers a list or tensor NAME holds, to plot (%plot): data {"series": {...}}, or why not."""
        return request_result_from(await self._request("series", name=name))

    async def inspect(self, expr: str) -> Value:
        """A JSON description of any value: what lesson keys are made of. When no kernel answered, an
        error of type KernelLost whose message says why (a fresh kernel was started)."""
        reply = await self._request("inspect", expr=expr)
        if "lost" in reply:
            return {"kind": "error", "type": LOST, "message": reply["lost"], "repr": f"{LOST}: {reply['lost']}"}
        if "value" not in reply:  # the kernel answered without a value (it gave up on it: why, in words)
            said = str(reply.get("error") or "the kernel gave no value")
            return {"kind": "error", "type": "KernelError", "message": said, "repr": f"KernelError: {said}"}
        value = reply["value"]
        unshown = value.pop("unshown", None)
        if unshown:  # a repr or an error message the kernel could not read (views/remarks.py)
            if value.get("kind") == "error":
                said = unshown_text("the error message", unshown)
                value.update(message=said, repr=f"{value['type']}: {said}")
            else:
                value["repr"] = unshown_text(f"{unshown.get('type', '?')} object: its repr", unshown)
        return value

    async def read_script(self, path: str) -> RequestResult:
        """The text of the file at `path` as the kernel reads it, under its sandbox (%run): data "source",
        or why not in words (views/remarks.FILE_ERRORS)."""
        return request_result_from(await self._request("read_script", path=path))

    async def task_state(self, targets: list, start: bool, token: str = "", everything: bool = False) -> dict:
        """A task's targets (and with ``everything`` every other name) read as data (tutor/tasks.py). When
        the read did not end in a state (it runs the learner's functions again: tasks.py words why),
        {"check_lost": {"why": "timed_out", "seconds", "stopped"?}} (no answer in time, the kernel killed or
        giving up itself; "stopped": it had stopped itself), {"check_lost": {"why": "ended", "reason"}} (the kernel died) or {} (cut off by a restart)."""
        reply = await self._request("task_state", targets=targets, start=start, token=token, everything=everything)
        if "overdue" in reply or reply.get("exhausted") == "time":
            stopped = {"stopped": True} if reply.get("stopped") else {}  # it had stopped itself (SIGSTOP)
            return {"check_lost": {"why": "timed_out", "seconds": reply.get("overdue", OP_SECONDS), **stopped}}
        if "lost" in reply and not reply.get("cut_off"):
            return {"check_lost": {"why": "ended", "reason": reply["reason"]}}
        return reply.get("state", {})

    async def check(self, name: str) -> RequestResult[Check]:
        """NAME's symbolic gradient against autograd's (%check)."""
        return _worded(request_result_from(await self._request("check", name=name), "check"))

    async def check_expr(self, expr: str, point: dict[str, float]) -> RequestResult:
        """An expression's symbolic gradient at a point (`gradrepl check`)."""
        return _worded(request_result_from(await self._request("check_expr", expr=expr, point=point), "check"))

    async def equivalent(self, answer: str, key: str) -> RequestResult:
        """Whether a `derive` answer is the same function as its key: data "equivalent"."""
        return request_result_from(await self._request("equivalent", answer=answer, key=key), "result")

    async def _request(self, op: str, **fields) -> dict:
        """The kernel's reply (checked against op's schema by the client), or {"lost": words} when no
        kernel answered: it died or broke the protocol, or left the request unanswered past the deadline
        (then killed; "overdue": the deadline's seconds), and a fresh one was started ("reason": why, in
        words; "cut_off": a restart ended it while it answered, and no other kernel was started)."""
        kernel = self.client.kernel
        try:
            reply = await self.client.request(op, self.options.request_deadline or REQUEST_DEADLINE, **fields)
        except KernelDied as died:
            if kernel is not None and self.client.kernel is not kernel:
                # Cut off by a restart (a lesson's prepare, %restart) while it waited: the fresh kernel is
                # that restart's; starting another would wipe what is being built in it.
                return {"lost": f"the kernel was restarted while it answered ({died.reason})", "cut_off": True}
            crashed = await self._after_crash(self.step, f"<{op}>", died.reason, dead=kernel)
            overdue = {"overdue": died.seconds, "stopped": died.stopped} if isinstance(died, KernelOverdue) else {}
            return {"lost": crashed.kernel_event, "reason": died.reason, **overdue}
        error = reply.get("error")
        if isinstance(error, dict) and "code" in error:  # the kernel's code and names, in words (views/remarks.py)
            reply["error"], reply["error_code"] = request_error(error["code"], error.get("names")), error["code"]
        word_trace(reply.get("trace"))  # op trace's note (execute's: word_step)
        for key in ("check", "result"):  # a symbolic check's or a derive answer's input it cannot take
            inner = reply.get(key)
            if isinstance(inner, dict) and "error" in inner:
                inner["error"] = worded_parse_error(inner["error"])
        return reply

    # -- state ------------------------------------------------------------
    def _set_state(self, state: KernelState | str) -> None:
        state = KernelState(state)
        self.state = state
        if self.on_state:
            self.on_state(state)


def _worded(result: RequestResult) -> RequestResult:
    """A check's notes in words (views/check.py), as a step's diagnoses are (explain_step)."""
    if result.ok and isinstance(result.data, dict):
        word_check(result.data)
    return result
