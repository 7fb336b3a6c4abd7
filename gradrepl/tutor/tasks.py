"""Tasks judged by behaviour: the learner's state against the solution's, from the same start.

The solution runs in a kernel the learner never touched (a key kernel, or the
shared kernel just restarted: a fresh process), from the task's start: its
start and end states are the reference. The learner's attempt runs in the live
kernel from the same start. Both states are read by the kernel's
``task_state`` op (plain data, read with references captured before any
learner code) and compared here, in the frontend, where no learner code runs:
so rebinding a helper, patching ``torch.allclose`` or ``Tensor.tolist``, or a
tensor subclass that lies, changes nothing the verdict rests on.

A verdict is, in order: the attempt does not reach into the tutor's internals;
each of the task's checks holds (state facts, code rules; the first failing
one's message is shown with what differs); the attempt did not type in a
number that only the solution's computation gives, or that the start holds
(a gradient read off the screen), nor shift a gradient by a typed number.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from gradrepl.completeness import help_request
from gradrepl.session import magic_names
from gradrepl.tutor import code_rules
from gradrepl.tutor.lesson import Question
from gradrepl.tutor.replay import OnStep, prepare
from gradrepl.tutor.task_checks import Check, difference, mistyped, numbers_in, seeds_in, targets

START_FACTS = ("value", "requires_grad", "is_leaf", "retains_grad", "grad")


@dataclass
class Reference:
    """What the solution does from the task's start: the states before and after it."""

    start: dict
    end: dict
    error: str = ""                    # the solution raised: the lesson's bug
    problems: list[str] = field(default_factory=list)


@dataclass
class Start:
    """Where an attempt starts in the live kernel: its state, the kernel's token, the history mark."""

    state: dict
    history: int

    @property
    def token(self) -> str:
        return str(self.state.get("token") or "")


@dataclass
class Verdict:
    ok: bool
    message: str = ""     # the failing check's message (or a general rule's)
    detail: str = ""      # what differs, in words
    retry: bool = False   # no verdict on the learner's code: the start had to be rebuilt


def _targets(question: Question) -> list:
    return targets(question.checks)


async def begin(question: Question, session, everything: bool = False) -> Start:
    """Mark the task's start in the kernel holding it (after its setup): identities, the backward log."""
    state = await session.task_state(_targets(question), True, everything=everything)
    return Start(state, len(session.history))


async def read(question: Question, session, start: Start, everything: bool = False) -> dict:
    return await session.task_state(_targets(question), False, start.token, everything)


async def reference(question: Question, session) -> Reference:
    """In a kernel holding the task's start (the caller rebuilt it): read it, run the solution, read again."""
    start = await begin(question, session, everything=True)
    result = await session.execute(question.solution)
    ref = Reference(start.state, await read(question, session, start, everything=True))
    if result.error:
        ref.error = f"{result.error.type}: {result.error.message}"
        ref.problems.append(f"{question.path}:{question.line}: task {question.id!r}: the solution raised "
                            f"{ref.error}")
    elif not start.state or not ref.end:
        ref.problems.append(f"{question.path}:{question.line}: task {question.id!r}: no kernel read the "
                            "solution's state")
    return ref


def same_start(question: Question, start: Start, ref: Reference) -> str | None:
    """What differs between the live start and the solution's (None: the same start)."""
    for text, _steps in _targets(question):
        found = difference(Check("", target=text, facts=START_FACTS), start.state, ref.start)
        if found:
            return found
    return None


def judge(question: Question, ref: Reference, end: dict, attempt: Ran | str) -> Verdict:
    """The verdict on an attempt (its code: a console's steps, or one typed cell; and the state it left)."""
    if end.get("check_lost"):  # the check runs the learner's functions again: they may never return, or end it
        return Verdict(False, _check_lost_words(end["check_lost"]))
    if not end.get("started", False):
        return Verdict(False, "the kernel was restarted since this task started, so its start is rebuilt; "
                       "run your code again", retry=True)
    if end.get("tampered"):  # the kernel's reader was rebound (kernel/inspect/seal.py): no state is believed
        return Verdict(False, "code that ran in this kernel replaced part of the tutor's own reader of the task's "
                       f"state (`{end['tampered'][0]}`), so no state it reads can be judged; no task needs that",
                       "the kernel is rebuilt")
    ran = attempt if isinstance(attempt, Ran) else ran_code([attempt])
    if ran.unjudged:
        return Verdict(False, f"`{ran.unjudged.splitlines()[0][:80]}` ran code the task's rules cannot read, so "
                       "this attempt cannot be judged; the start is rebuilt: run the statements themselves",
                       retry=True)
    code = ran.code
    reached = code_rules.reaches_in(code)
    if reached:
        return Verdict(False, f"your code uses `{reached}`, which reaches into Python's or the tutor's own "
                       "workings; no task needs that, and a state it may have rewritten cannot be judged")
    patched = code_rules.patches(code)
    if patched:
        return Verdict(False, "your code replaces part of torch or of an object; a task is solved with "
                       "torch as it is, by the operations it asks for", f"`{patched}`")
    hooked = code_rules.registers_hook(code)
    if hooked and not code_rules.registers_hook(question.solution):
        return Verdict(False, "your code registers a gradient hook, which sees (and can rewrite) a gradient "
                       "as backward runs, and this task's solution needs none: leave hooks out and let "
                       "backward compute the gradient from the operations themselves",
                       f"`{hooked}`")
    if end.get("grad_enabled", True) != ref.end.get("grad_enabled", True):
        return Verdict(False, "your code leaves gradient recording switched off (torch.set_grad_enabled"
                       "(False)), so every later step records nothing; switch it back on, or use "
                       "`with torch.no_grad():` for the lines that need it")
    dtype, wanted = (end.get("globals") or {}).get("default_dtype"), (ref.end.get("globals") or {}).get("default_dtype")
    if dtype != wanted:
        return Verdict(False, f"your code changes torch's default dtype (to {dtype}), which would make every "
                       "later tensor of the lesson that type too; it is put back, so make the tensor itself "
                       f"the dtype you want (a dtype argument, or .float()), leaving the default {wanted}")
    for check in question.checks:
        if check.kind == "code":
            breach = code_rules.rule_breach(check.rule, code)
            if breach:
                return Verdict(False, check.message, breach)
            continue
        found = difference(check, end, ref.end)
        if found:
            other = mistyped(check, end, ref.end)
            return Verdict(False, other) if other else Verdict(False, check.message, found)
    shifted = code_rules.shifts_grad(code)
    if shifted:
        return Verdict(False, "your code shifts a gradient by a number you typed; that gives the right value "
                       "only for the gradient read off the screen, so use an operation that works whatever "
                       "it holds", f"`{shifted}`")
    # The start's numbers count too: a gradient read off the screen and typed into the update
    # (w -= lr * torch.tensor([-4.03])) is as typed as the solution's own result.
    expected = numbers_in(ref.end, question.checks) + numbers_in(ref.start, question.checks)
    typed = code_rules.typed_answer(code, expected, code_rules.lesson_numbers(_lesson_texts(question)),
                                    seeds_in(ref.end, question.checks))
    if typed:
        return Verdict(False, "your code types in a number, not one the lesson's text gives, and it matches (to about "
                       "three digits) a value the task's tensors hold, at the start or once solved: a number "
                       "typed in is right only for these tensors, or only nearly; let your code compute it "
                       "from the tensors themselves", f"`{typed}`")
    return Verdict(True)


def _check_lost_words(lost: dict) -> str:
    """Why the check's read of the attempt gave no state (Session.task_state), said of the learner's function:
    the check runs it again (under the transform it was given, at its inputs and at moved ones)."""
    if lost.get("why") == "timed_out":
        stopped = "; it had stopped itself, SIGSTOP" if lost.get("stopped") else ""
        said = (f"your function did not return within {lost.get('seconds', 0):g} s during the check (the check "
                f"runs it again, at its inputs and at moved ones{stopped}), so the kernel was killed")
    else:
        said = f"your function ended the kernel during the check ({str(lost.get('reason', '')).rstrip('.')})"
    return said + "; a fresh kernel was started, and the lesson's variables are rebuilt there"


def _lesson_texts(question: Question) -> list[str]:
    """What the lesson shows or runs around a task: numbers there may be typed by a learner."""
    return [question.prompt, question.setup, question.given, question.code, question.solution, question.starter,
            *question.hints, *(source.code for source in question.context)]


# Magics whose argument is a statement that runs (`%time x.grad.sub_(21)` runs `x.grad.sub_(21)`); the
# others of the console's table only look (names are looked up, never evaluated) or restart.
RUNS_ITS_ARGUMENT = magic_names.RUNS_STATEMENT | {"%trace"}


@dataclass
class Ran:
    """An attempt's steps as the code rules read them."""

    code: str            # the Python that ran, in order
    unjudged: str = ""   # the first step that ran code the rules cannot read (%run FILE, a cell magic)


def ran_code(steps: list[str]) -> Ran:
    """What ``steps`` (a console's, or one typed cell) ran, for the code rules: a magic that runs its
    statement counts as it, `obj?` as its expression (it is evaluated), a looking magic and a step that
    does not parse as nothing. Any other magic ran code unseen here (a file's, IPython's), so it is kept
    as ``unjudged``: an attempt the rules cannot read must not pass unread."""
    kept, unjudged = [], ""
    for step in steps:
        source = step.strip()
        if source.startswith("%"):
            name, _, source = source.partition(" ")
            if name not in RUNS_ITS_ARGUMENT:
                if name not in magic_names.TABLE or name in magic_names.READS_FILES:
                    unjudged = unjudged or step.strip()
                continue
        elif asked := help_request(source):
            source = asked.expr
        if _parses(source.strip()):
            kept.append(source.strip())
    return Ran("\n".join(kept), unjudged)


def attempt_code(session, start: Start) -> Ran:
    """What ran since the task started (a console's steps, in order), as ran_code reads it."""
    return ran_code(session.history[start.history:])


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except SyntaxError:
        return False
    return True


async def restart_at(question: Question, session, on_step: OnStep | None = None,
                     prelude: str = "") -> tuple[list[str], Start]:
    """The task's start rebuilt in a fresh kernel (``prelude``, the lesson so far, then its setup), marked
    again. The prelude must be the one the reference's kernel ran (lint seeds torch with it)."""
    problems = await prepare(question, session, on_step, prelude)
    return problems, await begin(question, session)
