"""`gradrepl lint`: a lesson must pass its own test before a learner sees it.

Static checks come from the loader (schema, ids, syntax). Then each lesson is
played twice in fresh kernels with its own keys as answers: every solution
must pass its check, a task's check must fail before its solution runs, a
choice tied to code must have exactly one option matching the computed key,
keys must be the same on both runs, no step may exceed the time limit, nothing
seen before a question may give its answer away (lesson_rules.py), and every
```python claim must hold (claims.py).
Every task is then attacked (tutor/attacks.py): each fix that fixes nothing
must be refused, as an exercise's starter code must. Every problem names a
file and a line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gradrepl.tutor.answers import matches, read_answer
from gradrepl.protocol.messages import StepResult
from gradrepl.tutor import attacks, tasks
from gradrepl.tutor.claims import claim_problems
from gradrepl.tutor.task_checks import unchecked_changes
from gradrepl.tutor.lesson import Lesson, LessonFormatError, Problem, load_lesson
from gradrepl.tutor.keys import KeyKernel
from gradrepl.tutor.lesson_rules import giveaway_problems, hidden_setup_problems, hint_problems
from gradrepl.tutor.lesson_run import CellRan, KeyAnswerer, LessonRun, Summary

DEFAULT_TIME_LIMIT = 5.0  # seconds per step
DERIVE_POINTS = (0.7, 1.3, 2.1)


@dataclass
class LintReport:
    """Everything lint found; ``ok`` when there is nothing to fix."""

    files: list[str] = field(default_factory=list)
    lessons: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def lesson_files(paths: list[str | Path]) -> list[Path]:
    """Lesson files named directly or found (*.md) in named folders, in order."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        files.extend(sorted(path.glob("*.md")) if path.is_dir() else [path])
    return files


def lint_static(files: list[Path]) -> tuple[list[Lesson], list[str]]:
    """Load every file; problems of format and of ids across files."""
    lessons: list[Lesson] = []
    problems: list[str] = []
    seen: dict[str, str] = {}
    for path in files:
        try:
            lesson = load_lesson(path)
        except LessonFormatError as exc:
            problems.extend(str(p) for p in exc.problems)
            continue
        if lesson.id in seen:
            problems.append(str(Problem(lesson.path, 2, f"lesson id {lesson.id!r} is also used by {seen[lesson.id]}")))
            continue
        seen[lesson.id] = lesson.path
        lessons.append(lesson)
        problems.extend(hint_problems(lesson))
        problems.extend(hidden_setup_problems(lesson))
    return lessons, problems


async def lint_lesson(lesson: Lesson, session, time_limit: float = DEFAULT_TIME_LIMIT) -> list[str]:
    """Play the lesson twice with its own keys and report what does not hold."""
    outputs: dict[int, StepResult] = {}
    first, first_keys = await _play(lesson, session, seed=1, outputs=outputs)
    second, second_keys = await _play(lesson, session, seed=2)
    problems = list(first.problems)
    by_uid = {q.uid: q for q in lesson.questions}
    for uid, feedback in first.failed.items():
        question = by_uid[uid]
        if question.type == "task":
            problems.append(f"{question.path}:{question.line}: task {question.id!r}: the solution does not pass "
                            f"its own checks ({feedback})")
        else:
            problems.append(f"{question.path}:{question.line}: question {question.id!r}: its own key is graded "
                            f"wrong ({feedback})")
    if not first.finished and not first.failed:
        problems.append(f"{lesson.path}:1: playback stopped before the end")
    for uid, key in first_keys.keys.items():
        question = by_uid[uid]
        problems.extend(_key_problems(question, key))
        again = second_keys.keys.get(uid)
        if again is not None and again.signature() != key.signature():
            problems.append(f"{question.path}:{question.line}: question {question.id!r}: the key changed between "
                            f"two runs ({key.text!r}, then {again.text!r}): seed the randomness or avoid it")
    if first.slowest_ms > time_limit * 1000:
        problems.append(f"{lesson.path}:{first.slowest_line}: a step took {first.slowest_ms / 1000:.1f} s "
                        f"(the limit is {time_limit:g} s per step)")
    problems.extend(giveaway_problems(lesson, first_keys.keys, outputs))
    problems.extend(await claim_problems(lesson, session, first_keys.prelude))
    for question in lesson.questions:
        if question.type == "derive":
            problems.extend(await _derive_problems(question, session))
        key = first_keys.keys.get(question.uid)
        if question.type == "task" and key is not None and key.reference is not None and not key.reference.error:
            problems.extend(await _task_problems(question, key.reference, session, first_keys.prelude))
    return problems


async def lint(paths: list[str | Path], session, time_limit: float = DEFAULT_TIME_LIMIT) -> LintReport:
    """Lint lesson files (or folders of them) with one Session; the kernel restarts per run."""
    files = lesson_files(paths)
    report = LintReport(files=[str(f) for f in files])
    lessons, report.problems = lint_static(files)
    for lesson in lessons:
        report.lessons.append(lesson.id)
        report.problems.extend(await lint_lesson(lesson, session, time_limit))
    return report


async def _play(lesson: Lesson, session, seed: int,
                outputs: dict[int, StepResult] | None = None) -> tuple[Summary, KeyKernel]:
    """One run answered by the keys; ``outputs`` (if given) collects each cell's result."""
    def keep_output(event) -> None:
        if outputs is not None and isinstance(event, CellRan):
            outputs[event.step] = event.result

    # A different seed per run: forked kernels share one RNG state, which would hide unseeded randomness.
    keys = KeyKernel(session, owned=False, prelude=f"torch.manual_seed({seed})")
    run = LessonRun(lesson, session, keys, keep_output, auto=True, verify=True)
    return await run.play(KeyAnswerer(), 0), keys


async def _task_problems(question, reference: tasks.Reference, session, prelude: str) -> list[str]:
    """An exercise's starter code must be refused (the bug is the point), and so must every fix that
    fixes nothing (attacks.py)."""
    where = f"{question.path}:{question.line}: task {question.id!r}"
    problems = []
    starter_runs = False
    if question.starter.strip():
        verdict = await _attempt(question, reference, question.starter, session, prelude)
        starter_runs = not verdict.message.startswith("raised ")
        if verdict.ok:
            problems.append(f"{where}: the starter code already passes the check, so there is nothing to fix")
    for path in unchecked_changes(question.checks, reference.start, reference.end):
        problems.append(f"{where}: the solution changes {path}, and no check compares it, so an attempt may "
                        "leave it as it was: add a state check on it")
    for move in attacks.moves(question, reference.start, reference.end, starter_runs=starter_runs):
        if (await _attempt(question, reference, move.code, session, prelude)).ok:
            shown = "\n      ".join(move.code.splitlines()[:6])
            problems.append(f"{where}: a fix that fixes nothing is accepted ({move.name}):\n      {shown}")
    return problems


async def _attempt(question, reference: tasks.Reference, code: str, session, prelude: str = "") -> tasks.Verdict:
    """One attempt from the task's start (``prelude``: the seed its reference ran with), judged as a
    learner's would be (nothing is undone after it)."""
    problems, start = await tasks.restart_at(question, session, prelude=prelude)
    if problems:
        return tasks.Verdict(False, "; ".join(problems))
    result = await session.execute(code)
    if result.error:
        return tasks.Verdict(False, f"raised {result.error.type}")
    return tasks.judge(question, reference, await tasks.read(question, session, start), code)


def _key_problems(question, key) -> list[str]:
    where = f"{question.path}:{question.line}: question {question.id!r}"
    problems = []
    if question.type == "choice" and question.ask:
        if len(key.correct_options) != 1:
            problems.append(f"{where}: {len(key.correct_options)} options match the computed key "
                            f"{key.raw.get('repr', key.text)!r}; exactly one must")
        for index, option in enumerate(question.options):
            if index not in key.correct_options and not option.feedback:
                problems.append(f"{where}: wrong option {option.text!r} needs a 'feedback'")
    if key.raw.get("kind") == "error" and key.raw.get("type") == "NameError":  # no answer can be right
        problems.append(f"{where}: its key raises NameError ({key.raw.get('message')}): the question reads a "
                        "name the lesson has not made by then (a `given` is shown, never run: put it in `code`)")
    if key.value is not None:
        for wrong in question.misconceptions:
            if matches(key.value, read_answer(wrong.answer), question.tolerance, question.compare):
                problems.append(f"{where}: the misconception {wrong.answer!r} is the right answer")
    return problems


async def _derive_problems(question, session) -> list[str]:
    """The solution must be the derivative autograd computes, and the symbolic parser must read it."""
    where = f"{question.path}:{question.line}: question {question.id!r}"
    await session.restart()
    var = question.variable
    # Lesson text running in the kernel, like any cell: autograd is the referee.
    code = (
        "from torch import sin, cos, tan, exp, log, sqrt, tanh, sigmoid\n"
        "_lint_ok = []\n"
        f"for _p in {DERIVE_POINTS!r}:\n"
        f"    {var} = torch.tensor(_p, dtype=torch.float64, requires_grad=True)\n"
        f"    ({question.function}).backward()\n"
        f"    _g = {var}.grad\n"
        "    with torch.no_grad():\n"
        f"        _s = torch.as_tensor({question.solution.strip()}, dtype=torch.float64)\n"
        "    _lint_ok.append(bool(torch.allclose(_g, _s, atol=1e-8)))\n"
    )
    result = await session.execute(code)
    if result.error:
        return [f"{where}: cannot check the solution with autograd: {result.error.type}: {result.error.message}"]
    agrees = await session.inspect("all(_lint_ok)")
    problems = []
    if not agrees.get("value"):
        problems.append(f"{where}: the solution {question.solution.strip()!r} is not the derivative autograd "
                        f"computes for {question.function!r}")
    reply = await session.equivalent(question.solution, question.solution)
    if reply.error:
        problems.append(f"{where}: the symbolic engine cannot read the solution: {reply.error}")
    elif not reply.data.get("equivalent"):
        problems.append(f"{where}: the symbolic engine gave no verdict on the solution ({reply.data})")
    return problems
