"""The %magics: one method each, whose usage and first docstring line are what %help lists."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gradrepl.protocol.messages import ErrorInfo, StepResult
from gradrepl.session import backward_magics, habit_magics, leaving, plot_magic
from gradrepl.session.magic_names import CHANGES_NAMESPACE, READS_FILES, RUNS_STATEMENT, TABLE
from gradrepl.session.request_result import RequestResult
from gradrepl.terminal_text import visible
from gradrepl.views.check import render_check
from gradrepl.views.glossary import gloss, terms_text
from gradrepl.session.backward_magics import row_width
from gradrepl.views.graph_drawing import graph_drawing_text
from gradrepl.views.tables import aligned, fit, tensor_table

if TYPE_CHECKING:
    from gradrepl.session.session import Session

HELP_SYNTAX = ("obj? / obj??", "help on obj / with its source")
LEAVING = ("exit / quit", "leave; Ctrl-D too (asks first)")


class Magics:
    """`%name args` lines of a session."""

    # The tables live in magic_names (data the lesson parser and task rules read without the session).
    TABLE, READS_FILES, RUNS_STATEMENT, CHANGES_NAMESPACE = TABLE, READS_FILES, RUNS_STATEMENT, CHANGES_NAMESPACE
    NEEDS_ARGUMENT = {"%graph": "a tensor name, e.g. %graph y", "%check": "a tensor name, e.g. %check y",
                      "%plot": "a name, e.g. %plot loss (its history) or %plot losses (a list of numbers)",
                      "%timeit": "a statement, e.g. %timeit torch.ones(100).sum()",
                      "%time": "a statement, e.g. %time loss.backward()",
                      "%run": "a Python file, e.g. %run train.py",
                      "%trace": "a tensor name (%trace loss) or a statement (%trace loss.backward())",
                      "%at": "a step number, e.g. %at 3 (or %at -1 for the last step, -2 the one before)"}

    def __init__(self, session: "Session"):
        self.session = session

    def takes_number(self, source: str) -> bool:
        """A magic that runs a statement, or empties the namespace (%reset), makes a numbered step; one
        that looks takes no number (%restart numbers from 1 again)."""
        name, _, arg = source.strip().partition(" ")
        arg = arg.strip()
        if name in self.CHANGES_NAMESPACE:
            return True
        if name in self.RUNS_STATEMENT:
            return bool(arg)
        return name == "%trace" and bool(arg) and not backward_magics.is_row_name(self.session, arg)

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
        rows += [HELP_SYNTAX, LEAVING]
        return "\n".join(aligned(rows, row_width(self.session), flexible=(1,), indent="  "))

    async def tensors(self, result: StepResult, arg: str) -> None:
        """show every live tensor"""
        result.display = tensor_table(list(self.session.tensors.values()), all_rows=True, width=self.session.width,
                                      one_line=self.session.one_line_rows, before=self.session.grads_before)

    async def graph(self, result: StepResult, arg: str) -> None:
        """draw NAME's graph as boxes down to its leaves"""
        reply = await self.session.graph(arg)
        if reply.error:
            result.error = _failed(result, reply, "NameError")
        else:
            # Boxes and arrows when they fit the console, else the indented tree.
            result.display = fit(graph_drawing_text(reply.data["graph"], self.session.width), self.session.width)

    async def check(self, result: StepResult, arg: str) -> None:
        """NAME's gradient: symbolic vs autograd"""
        check = await self.session.check(arg)
        if check.error:
            result.error = _failed(result, check, "CheckError")
        else:
            result.display = fit(render_check(check.data, row_width(self.session)), self.session.width)

    async def plot(self, result: StepResult, arg: str) -> None:
        """plot NAME: a number's history across steps (loss), or a list or tensor's numbers"""
        await plot_magic.plot(self.session, result, arg)

    async def timeit(self, result: StepResult, arg: str) -> StepResult:
        """time STMT as IPython does (7 runs)"""
        timed = await self.session.run_code(result.step, arg, timeit=True)
        timed.source = result.source
        return timed

    async def time(self, result: StepResult, arg: str) -> StepResult:
        """run STMT once as a step, timed"""
        return await habit_magics.time(self.session, result, arg)

    async def run_file(self, result: StepResult, arg: str) -> None:
        """run FILE here, a step per statement"""
        await habit_magics.run(self.session, result, arg)

    async def who(self, result: StepResult, arg: str) -> None:
        """the names you defined"""
        await habit_magics.who(self.session, result, arg)

    async def whos(self, result: StepResult, arg: str) -> None:
        """the names you defined, type and size"""
        await habit_magics.whos(self.session, result, arg)

    async def trace(self, result: StepResult, arg: str) -> None:
        """backward node by node: NAME or STMT"""
        await backward_magics.trace(self.session, result, arg)

    async def at(self, result: StepResult, arg: str) -> None:
        """every tensor as it was after step N"""
        backward_magics.at(self.session, result, arg)

    async def history(self, result: StepResult, arg: str) -> None:
        """this session's inputs, oldest first"""
        entries = self.session.history
        width = len(str(len(entries)))
        result.display = "\n".join(
            f"{number:>{width}}: " + entry.replace("\n", "\n" + " " * (width + 2))
            for number, entry in enumerate(entries, 1))

    async def restart(self, result: StepResult, arg: str) -> None:
        """a fresh kernel; asks first (-f: not)"""
        result.removed = await self.session.restart()
        result.display = leaving.restarted("%restart")

    async def reset(self, result: StepResult, arg: str) -> None:
        """empty the namespace; asks (-f: not)"""
        reply = await self.session.reset()
        if reply.error:
            result.error = _failed(result, reply, "KernelError")
            return
        result.removed = reply.data["removed"]
        result.display = "Namespace emptied (the kernel kept running)."

    async def help(self, result: StepResult, arg: str) -> None:
        """this list; %help TERM explains a word"""
        if not arg.strip():
            result.display = self.listing()
            return
        # Not a term (e.g. `%help trace`): the commands, as with no word, and the terms it knows.
        result.display = gloss(arg) or f"{self.listing()}\n%help knows no term {arg.strip()!r}; {terms_text()}"


def _failed(result: StepResult, reply: RequestResult, kind: str) -> ErrorInfo:
    """The error of a magic whose request failed; a lost kernel is also the step's kernel event."""
    if reply.lost:
        result.kernel_event = reply.error
        return ErrorInfo("KernelLost", reply.error)
    return ErrorInfo(kind, reply.error)
