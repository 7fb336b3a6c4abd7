"""IPython's everyday magics, for session/magics.py: %time, %who, %whos and %run FILE.

%time runs its statement as a numbered step and says how long it took. %who and
%whos list the learner's names (read through the kernel's `inspect` op with
builtin types only, so no learner repr runs; tensors are described from the
panel's rows). %run has the kernel read FILE (op read_script, under the sandbox:
the frontend may be a server reading for every learner), splits it here as
`gradrepl run` does, and runs its top-level statements one by one as numbered
steps (each in the timeline, `%at N`), stopping at the first that fails, as
IPython's %run does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gradrepl.errors import UsageError
from gradrepl.protocol.messages import ErrorInfo, StepResult
from gradrepl.scripts import read_steps
from gradrepl.session.leaving import PRESET

if TYPE_CHECKING:
    from gradrepl.session.session import Session

# name TAB type TAB words, one line per learner name; only exact builtin types are asked for more than
# their type's name (their repr and len are the interpreter's, never a learner's method).
WHOS_EXPR = (
    "'\\n'.join(name + '\\t' + type(value).__qualname__ + '\\t' + ("
    "repr(value)[:40] if type(value) in (int, float, bool, complex, type(None)) else "
    "repr(value[:37]) if type(value) is str else "
    "str(len(value)) + ' items' if type(value) in (list, tuple, dict, set) else '') "
    "for name, value in list(globals().items()) if isinstance(name, str) and name.isidentifier() "
    f"and not name.startswith('_') and name not in {PRESET!r})")
NOTHING = "No names of yours yet (torch, nn and F are always there)."


def wall_time(duration_ms: float) -> str:
    """IPython's `Wall time: 1.2 ms`, in the unit that reads best."""
    if duration_ms >= 1000:
        return f"Wall time: {duration_ms / 1000:.2f} s"
    if duration_ms >= 1:
        return f"Wall time: {duration_ms:.1f} ms"
    return f"Wall time: {duration_ms * 1000:.0f} µs"


async def time(session: "Session", result: StepResult, arg: str) -> StepResult:
    """Run `arg` as this numbered step, then say its wall time (the kernel's own measure)."""
    timed = await session.run_code(result.step, arg)
    timed.source = result.source
    timed.display = wall_time(timed.duration_ms)
    return timed


async def namespace_lines(session: "Session") -> list[tuple[str, str, str]] | str:
    """(name, type, words) of every learner name, oldest first; words of why not when they cannot be read."""
    if session.state != "idle":
        return "the kernel is busy: try again once the step has finished"
    value = await session.inspect(WHOS_EXPR)
    if value.get("kind") != "str":
        return f"the namespace could not be read ({value.get('repr', value.get('kind'))})"
    lines = [line.split("\t") for line in str(value.get("value", "")).splitlines()]
    return [(parts[0], parts[1], parts[2]) for parts in lines if len(parts) == 3]


async def who(session: "Session", result: StepResult, arg: str) -> None:
    names = await namespace_lines(session)
    if isinstance(names, str):
        result.error = ErrorInfo("KernelError", names)
        return
    result.display = "  ".join(sorted(name for name, _, _ in names)) or NOTHING


async def whos(session: "Session", result: StepResult, arg: str) -> None:
    names = await namespace_lines(session)
    if isinstance(names, str):
        result.error = ErrorInfo("KernelError", names)
        return
    if not names:
        result.display = NOTHING
        return
    rows = [("Variable", "Type", "Data/Info")]
    rows += [(name, kind, _tensor_words(session.tensors.get(name)) or words) for name, kind, words in sorted(names)]
    widths = [max(len(row[column]) for row in rows) for column in (0, 1)]
    lines = [f"{name:<{widths[0]}}  {kind:<{widths[1]}}  {words}".rstrip() for name, kind, words in rows]
    lines.insert(1, "-" * min(max(len(line) for line in lines), session.width or 80))
    result.display = "\n".join(lines)


def _tensor_words(row: dict | None) -> str:
    """A tensor as the panel knows it: shape, dtype, whether it requires grad."""
    if not row:
        return ""
    shape = "×".join(str(size) for size in row.get("shape", [])) or "scalar"
    grad = ", requires grad" if row.get("requires_grad") else ""
    dtype = str(row.get('dtype', '')).removeprefix('torch.')
    return f"{shape} {dtype}{grad}".strip()


async def run(session: "Session", result: StepResult, arg: str) -> None:
    """Run FILE's top-level statements as numbered steps; fill `result` with what they did together.
    The kernel reads FILE, under its sandbox: the learner may name only what their code could open."""
    read = await session.read_script(arg)
    if not read.ok:
        result.error = ErrorInfo("KernelError" if read.lost else "UsageError", str(read.error))
        return
    try:
        steps = read_steps(arg, read.data["source"])
    except UsageError as exc:
        result.error = ErrorInfo("UsageError", str(exc))
        return
    ran: list[StepResult] = []
    for line, code in steps:
        step = await session.run_statement(code, arg, line)
        ran.append(step)
        if step.error is not None or step.kernel_event:
            break
    _gather(session, result, ran, arg, steps)


def _gather(session: "Session", result: StepResult, ran: list[StepResult], path: str,
            steps: list[tuple[int, str]]) -> None:
    """One result for the %run line: every step's output in order, the rows changed by any of them."""
    changed: dict[str, None] = {}
    removed: dict[str, None] = {}
    for step in ran:
        changed.update(dict.fromkeys(row["name"] for row in step.tensors))
        removed.update(dict.fromkeys(step.removed))
    result.stdout = "".join(step.stdout for step in ran)
    result.stderr = "".join(step.stderr for step in ran)
    result.notes = [note for step in ran for note in step.notes]
    result.duration_ms = sum(step.duration_ms for step in ran)
    result.tensors = [session.tensors[name] for name in changed if name in session.tensors]
    result.removed = [name for name in removed if name not in session.tensors]
    result.step = session.step
    last = ran[-1] if ran else None
    result.error, result.kernel_event = (last.error, last.kernel_event) if last else (None, None)
    if not ran:
        result.display = f"{path}: no statements to run"
        return
    numbers = f"In [{ran[0].step}]" + (f" to In [{ran[-1].step}]" if len(ran) > 1 else "")
    words = f"ran {path}: {len(ran)} of {len(steps)} statements as steps {numbers}"
    if len(ran) < len(steps) or (last and last.error):
        line = steps[len(ran) - 1][0]
        words += f"; stopped at line {line}, the statements after it did not run"
    result.display = words
