"""A frontend-agnostic session over one KernelClient: steps, history, %magics.

The TUI, the plain REPL, `gradrepl run`, lessons and the quiz all drive the
kernel through this class; none of them imports torch.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from gradrepl.kernel.client import INTERRUPT_GRACE, KernelClient, KernelDied
from gradrepl.kernel.options import KernelOptions
from gradrepl.kernel.protocol import ErrorInfo, StepResult
from gradrepl.session.timeline import Timeline
from gradrepl.session import backward_magics
from gradrepl.textviews import tensor_table

MAGICS = {
    "%tensors": "show every live tensor",
    "%graph NAME": "draw NAME's autograd graph down to its leaves",
    "%check NAME": "compare NAME's symbolic gradient with autograd's",
    "%trace NAME": "preview backward from NAME node by node (no .grad changes)",
    "%trace STMT": "run STMT (e.g. loss.backward()) and list each node backward ran",
    "%at N": "every tensor as it stood after step N (-1: the step before)",
    "%restart": "start a fresh kernel (all variables are lost)",
    "%reset": "empty the namespace in the same kernel",
    "%help": "this list",
}


class Session:
    """One learner's conversation with one kernel at a time."""

    def __init__(self, options: KernelOptions | None = None,
                 on_state: Callable[[str], None] | None = None):
        self.options = options or KernelOptions()
        self.client = KernelClient(self.options)
        self.on_state = on_state
        self.state = "starting"
        self.tensors: dict[str, dict] = {}
        self.history: list[str] = []
        self.sandbox: dict[str, dict] = {}
        self.step = 0
        self._running_step: int | None = None
        self._changed: list[str] = []  # names whose rows are flagged changed
        self._ladder: asyncio.Task | None = None
        self.timeline = Timeline()  # every past step as deltas (%at, the TUI's timeline)

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
    async def execute(self, source: str, timeout: float | None = None) -> StepResult:
        """Run one step (a statement, a cell, or a %magic) and return what it did."""
        source = source.strip("\n")
        self.step += 1
        step = self.step
        if source.strip():
            self.history.append(source)
        if source.lstrip().startswith("%"):
            result = await self._magic(step, source.strip())
        else:
            result = await self._run_code(step, source, timeout)
        self.timeline.record(step, result.source, result.tensors, result.removed)
        return result

    async def _run_code(self, step: int, source: str, timeout: float | None = None) -> StepResult:
        timeout = timeout if timeout is not None else self.options.step_timeout
        self._running_step = step
        self._set_state("busy")
        timer = None
        timed_out = []
        if timeout:
            def on_timeout() -> None:
                timed_out.append(True)
                self._interrupt_step(step, f"the step ran longer than the {timeout:g} s step timeout "
                                           "and did not stop when interrupted")

            timer = asyncio.get_running_loop().call_later(timeout, on_timeout)
        try:
            payload, out, err = await self.client.execute(source, step)
        except KernelDied as died:
            return await self._after_crash(step, source, died.reason)
        finally:
            if timer:
                timer.cancel()
            self._running_step = None
            self._cancel_ladder()
        result = StepResult.from_payload(step, source, payload)
        result.stdout, result.stderr = out, err
        if timed_out and result.error and result.error.type == "KeyboardInterrupt":
            result.error.explanation = (f"The step ran longer than the {timeout:g} s step timeout and was "
                                        "interrupted; variables assigned before that point are kept.")
        self._apply(result)
        self._set_state("idle")
        return result

    async def _after_crash(self, step: int, source: str, reason: str) -> StepResult:
        dead = self.client.kernel
        out, err = await self.client.leftover_output(dead) if dead else ("", "")
        removed = await self.restart()
        words = (f"{reason[0].upper()}{reason[1:]}. A fresh kernel was started "
                 f"({self.client.kernel.started_ms:.0f} ms): the variables you defined before are lost. "
                 "Your history is kept, so you can run those lines again.")
        return StepResult(step=step, source=source, stdout=out, stderr=err, removed=removed,
                          error=ErrorInfo(type="KernelLost", message=reason, explanation=words),
                          kernel_event=words)

    def _apply(self, result: StepResult) -> None:
        """Keep the live table: changed rows replace old ones in place, removed names go."""
        for name in self._changed:  # only last step's rows: cost grows with what changed
            if name in self.tensors:
                self.tensors[name]["changed"] = False
        for name in result.removed:
            self.tensors.pop(name, None)
        for row in result.tensors:
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

    async def kill(self) -> None:
        """Stop the kernel at once (the always-available escape)."""
        if self._running_step is not None:
            self.client.kill("you stopped the kernel with Kill while a step was running")
        else:
            await self.restart()

    def _interrupt_step(self, step: int, reason: str) -> None:
        if self._running_step != step:
            return
        self.client.interrupt()
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
        """A fresh kernel with an empty namespace; returns the names that disappeared."""
        self._set_state("starting")
        await self.client.replace()
        self.sandbox = self.client.kernel.ready.get("sandbox", self.sandbox)
        removed = list(self.tensors)
        self.tensors.clear()
        self._set_state("restarted")
        self._set_state("idle")
        return removed

    async def reset(self) -> list[str]:
        """Empty the namespace in the same kernel; returns the names that disappeared."""
        reply = await self._request("reset")
        self.tensors.clear()
        return reply.get("removed", [])

    async def complete(self, code: str, cursor: int | None = None) -> list[str]:
        if self.state != "idle":
            return []
        reply = await self._request("complete", code=code, cursor=len(code) if cursor is None else cursor)
        return reply.get("matches", [])

    async def graph(self, name: str) -> dict:
        return await self._request("graph", name=name)

    async def trace(self, name: str) -> dict:
        """Backward from tensor `name` previewed node by node: {"trace": {...}} or {"error": words}."""
        return await self._request("trace", name=name)

    async def trace_statement(self, step: int, source: str) -> StepResult:
        """Run `source` as step `step`, recording every backward it makes (result.trace)."""
        reply = await self._request("trace_next")
        if reply.get("error"):
            return StepResult(step=step, source=source, error=ErrorInfo("KernelError", reply["error"]))
        return await self._run_code(step, source)

    async def inspect(self, expr: str) -> dict:
        return (await self._request("inspect", expr=expr)).get("value", {})

    async def check(self, name: str) -> dict:
        return (await self._request("check", name=name)).get("check", {})

    async def check_expr(self, expr: str, point: dict[str, float]) -> dict:
        return (await self._request("check_expr", expr=expr, point=point)).get("check", {})

    async def equivalent(self, answer: str, key: str) -> dict:
        return (await self._request("equivalent", answer=answer, key=key)).get("result", {})

    async def table(self) -> list[dict]:
        """The full live table from the kernel (frontends normally keep `tensors` instead)."""
        return (await self._request("tensors")).get("tensors", [])

    async def _request(self, op: str, **fields) -> dict:
        try:
            return await self.client.request(op, **fields)
        except KernelDied as died:
            await self._after_crash(self.step, f"<{op}>", died.reason)
            return {"error": died.reason}

    # -- %magics ----------------------------------------------------------
    async def _magic(self, step: int, source: str) -> StepResult:
        name, _, arg = source.partition(" ")
        arg = arg.strip()
        result = StepResult(step=step, source=source)
        if name == "%tensors":
            result.display = tensor_table(list(self.tensors.values()), all_rows=True)
        elif name in ("%graph", "%check") and not arg:
            result.error = ErrorInfo("UsageError", f"{name} needs a tensor name, e.g. {name} y")
        elif name == "%graph":
            reply = await self.graph(arg)
            if reply.get("error"):
                result.error = ErrorInfo("NameError", reply["error"])
            else:
                result.display = reply["text"]
        elif name == "%check":
            check = await self.check(arg)
            if check.get("error"):
                error = check["error"]
                result.error = ErrorInfo("CheckError", error.get("message", str(error)) if isinstance(error, dict) else str(error))
            else:
                result.display = check.get("text", "")
        elif name in backward_magics.NAMES:
            await backward_magics.run(self, name, arg, result)
        elif name == "%restart":
            result.removed = await self.restart()
            result.display = "Kernel restarted: a fresh namespace with torch, nn and F."
        elif name == "%reset":
            result.removed = await self.reset()
            result.display = "Namespace emptied (the kernel kept running)."
        elif name == "%help":
            result.display = "\n".join(f"  {magic:<14} {text}" for magic, text in MAGICS.items())
        else:
            result.error = ErrorInfo("UsageError", f"unknown command {name}; %help lists the commands")
        return result

    # -- state ------------------------------------------------------------
    def _set_state(self, state: str) -> None:
        self.state = "idle" if state == "restarted" else state
        if self.on_state:
            self.on_state(state)
