"""The %magics: one method each, whose usage and first docstring line are what %help lists."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gradrepl.kernel.protocol import ErrorInfo, StepResult
from gradrepl.session import backward_magics
from gradrepl.session.replies import Reply
from gradrepl.terminal_text import visible
from gradrepl.textviews import fit, tensor_table

if TYPE_CHECKING:
    from gradrepl.session.session import Session

HELP_SYNTAX = ("obj? / obj??", "help on obj (signature and docstring) / with its source; also help(obj)")


class Magics:
    """`%name args` lines of a session."""

    # name -> (usage, method name)
    TABLE = {
        "%tensors": ("%tensors", "tensors"),
        "%graph": ("%graph NAME", "graph"),
        "%check": ("%check NAME", "check"),
        "%timeit": ("%timeit STMT", "timeit"),
        "%trace": ("%trace NAME|STMT", "trace"),
        "%at": ("%at N", "at"),
        "%history": ("%history", "history"),
        "%restart": ("%restart", "restart"),
        "%reset": ("%reset", "reset"),
        "%help": ("%help", "help"),
    }
    NEEDS_ARGUMENT = {"%graph": "a tensor name, e.g. %graph y", "%check": "a tensor name, e.g. %check y",
                      "%timeit": "a statement, e.g. %timeit torch.ones(100).sum()",
                      "%trace": "a tensor name (%trace loss) or a statement (%trace loss.backward())",
                      "%at": "a step number, e.g. %at 3 (or %at -1 for the step before)"}

    def __init__(self, session: "Session"):
        self.session = session

    async def run(self, step: int, source: str) -> StepResult:
        name, _, arg = source.partition(" ")
        arg = arg.strip()
        if name not in self.TABLE:
            return StepResult(step=step, source=source, error=ErrorInfo(
                "UsageError", f"unknown command {name}; %help lists the commands"))
        if name in self.NEEDS_ARGUMENT and not arg:
            return StepResult(step=step, source=source, error=ErrorInfo(
                "UsageError", f"{name} needs {self.NEEDS_ARGUMENT[name]}"))
        result = StepResult(step=step, source=source)
        result = await getattr(self, self.TABLE[name][1])(result, arg) or result
        # Kernel text is visible already; what a magic adds may quote the learner's typing (%history, a name).
        if isinstance(result.display, str):
            result.display = visible(result.display)
        if result.error is not None:
            result.error.message = visible(result.error.message)
        return result

    def listing(self) -> str:
        """Every magic with its usage and what it does."""
        rows = [(usage, (getattr(self, method).__doc__ or "").strip().splitlines()[0])
                for usage, method in self.TABLE.values()]
        rows.append(HELP_SYNTAX)
        width = max(len(usage) for usage, _ in rows)
        return "\n".join(f"  {usage:<{width}}  {text}" for usage, text in rows)

    async def tensors(self, result: StepResult, arg: str) -> None:
        """show every live tensor"""
        result.display = tensor_table(list(self.session.tensors.values()), all_rows=True, width=self.session.width)

    async def graph(self, result: StepResult, arg: str) -> None:
        """draw NAME's autograd graph down to its leaves"""
        reply = await self.session.graph(arg)
        if reply.error:
            result.error = _failed(result, reply, "NameError")
        else:
            result.display = fit(reply.data["text"], self.session.width)

    async def check(self, result: StepResult, arg: str) -> None:
        """compare NAME's symbolic gradient with autograd's"""
        check = await self.session.check(arg)
        if check.error:
            result.error = _failed(result, check, "CheckError")
        else:
            result.display = fit(check.data.get("text", ""), self.session.width)

    async def timeit(self, result: StepResult, arg: str) -> StepResult:
        """time STMT as IPython does: mean ± std. dev. per loop over 7 runs"""
        timed = await self.session.run_code(result.step, arg, timeit=True)
        timed.source = result.source
        return timed

    async def trace(self, result: StepResult, arg: str) -> None:
        """backward node by node: from tensor NAME as a preview, or the backward STMT runs"""
        await backward_magics.trace(self.session, result, arg)

    async def at(self, result: StepResult, arg: str) -> None:
        """every tensor as it stood after step N, rebuilt from what each step changed"""
        backward_magics.at(self.session, result, arg)

    async def history(self, result: StepResult, arg: str) -> None:
        """this session's inputs, oldest first"""
        entries = self.session.history
        width = len(str(len(entries)))
        result.display = "\n".join(
            f"{number:>{width}}: " + entry.replace("\n", "\n" + " " * (width + 2))
            for number, entry in enumerate(entries, 1))

    async def restart(self, result: StepResult, arg: str) -> None:
        """start a fresh kernel (all variables are lost)"""
        result.removed = await self.session.restart()
        result.display = "Kernel restarted: a fresh namespace with torch, nn and F."

    async def reset(self, result: StepResult, arg: str) -> None:
        """empty the namespace in the same kernel"""
        reply = await self.session.reset()
        if reply.error:
            result.error = _failed(result, reply, "KernelError")
            return
        result.removed = reply.data["removed"]
        result.display = "Namespace emptied (the kernel kept running)."

    async def help(self, result: StepResult, arg: str) -> None:
        """this list"""
        result.display = self.listing()


def _failed(result: StepResult, reply: Reply, kind: str) -> ErrorInfo:
    """The error of a magic whose request failed; a lost kernel is also the step's kernel event."""
    if reply.lost:
        result.kernel_event = reply.error
        return ErrorInfo("KernelLost", reply.error)
    return ErrorInfo(kind, reply.error)
