"""A task checked on a console's namespace (learn's F5): judged against a key kernel of its own.

As in `learn`, the learner's kernel and the key kernel are two sessions: the
solution runs only in the key kernel, the code the learner typed since the
task opened is what the code rules read, and a start the learner changed
before the task is rebuilt instead of judged.
"""

import pytest
from tests.support.paths import ROOT

from gradrepl.session import Session
from gradrepl.tutor.keys import KeyKernel
from gradrepl.tutor.lesson import load_lesson, parse_lesson
from gradrepl.tutor.lesson_run import LessonRun

LESSON = '''---
id: seed
title: Seeds
---

```python
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
```

```question
id: pass-a-seed
type: task
prompt: Fill `x.grad` with d(sum of y)/dx by passing a gradient argument to `y.backward`.
setup: |
  x.grad = None
checks:
  - state: x
    facts: [grad]
    message: x.grad is not [2, 2, 2].
  - code: gradient-argument
    message: pass the gradient argument to y.backward.
solution: |
  y.backward(torch.ones_like(y))
```
'''


@pytest.fixture
async def keys():
    async with Session() as own:
        await own.start()
        yield KeyKernel(own, owned=False)


async def opened_task(session, keys, typed_before: str = "") -> LessonRun:
    lesson = parse_lesson(LESSON, "seed.md")
    run = LessonRun(lesson, session, keys, lambda event: None)
    await run.resume(0)
    await run.enter(0)  # the cell
    run.advance()
    if typed_before:  # the learner tries things in the console before going on to the task
        assert (await session.execute(typed_before)).error is None
    await run.enter(1)
    assert run.question.id == "pass-a-seed"
    return run


async def test_console_code_is_judged_with_its_form_and_the_solution_never_runs_there(session, keys):
    run = await opened_task(session, keys)
    await session.execute("y.sum().backward()")
    same_numbers = await run.check()
    assert not same_numbers.correct and "pass the gradient argument" in same_numbers.feedback
    assert (await session.inspect("x.grad"))["kind"] == "none"  # undone: back at the task's start
    await session.execute("%tensors")  # a magic and a step that does not parse ran none of the learner's code
    await session.execute("y.backward(")
    await session.execute("y.backward(torch.ones(3))")
    assert (await run.check()).correct
    # The reference came from the key kernel: this kernel ran the cell, the setup and the learner's line only.
    assert not any("ones_like" in line for line in session.history)


async def test_a_start_changed_before_the_task_is_gone_when_the_task_opens(session, keys):
    run = await opened_task(session, keys, typed_before="with torch.no_grad():\n    x.mul_(10)\ny = x * 2")
    assert (await session.inspect("x[0].item()"))["value"] == 1.0  # the lesson's own start, built afresh
    await session.execute("y.backward(torch.ones(3))")
    assert (await run.check()).correct


# -- lesson 03's zero-it, as the TUI's learn plays it: typed at the console, then F5 --------------

ACCUMULATION = ROOT / "lessons" / "03-accumulation.md"


async def opened_zero_it(session, keys, typed_before: str = "") -> LessonRun:
    lesson = load_lesson(ACCUMULATION)
    index = next(i for i, step in enumerate(lesson.steps) if step.question and step.question.id == "zero-it")
    run = LessonRun(lesson, session, keys, lambda event: None)
    await run.resume(index - 1)  # the prose that introduces it
    await run.enter(index - 1)
    if typed_before:
        assert (await session.execute(typed_before)).error is None
    assert run.advance() and run.question.id == "zero-it"
    await run.enter(index)
    return run


async def start_grad(session) -> str:
    """The number x.grad holds at the task's start, as a learner reads it off the screen."""
    return f'{(await session.inspect("x.grad.item()"))["value"]:g}'


SHIFTS = "shifts a gradient by a number you typed"


@pytest.mark.parametrize("typed, says", [
    ("x.grad.sub_({})", SHIFTS), ("%time x.grad.sub_({})", SHIFTS), ("%trace x.grad.sub_({})", SHIFTS),
    ("%timeit x.grad.zero_(); import gc", "reaches into"),
])
async def test_a_shift_typed_through_a_magic_is_judged_as_its_statement(session, keys, typed, says):
    run = await opened_zero_it(session, keys)
    await session.execute(typed.format(await start_grad(session)))
    grade = await run.check()
    assert not grade.correct and says in grade.feedback, grade.feedback


async def test_a_step_whose_code_the_rules_cannot_read_is_not_judged(session, keys):
    run = await opened_zero_it(session, keys)
    # The kernel reads %run's file under its sandbox: the script is written where it may read, its scratch.
    await session.execute(f"open('clear.py', 'w').write('x.grad.sub_({await start_grad(session)})')")
    ran = await session.execute("%run clear.py")
    assert ran.error is None, ran.error
    grade = await run.check()
    assert not grade.correct and grade.retry and "cannot be judged" in grade.feedback, grade.feedback
    assert (await session.inspect("x.grad.item()"))["value"] != 0  # rebuilt to the task's start


@pytest.mark.parametrize("typed", ["%time x.grad.zero_()", "x.grad?", "x.grad.zero_()"])
async def test_an_honest_clear_passes_around_magics_and_help(session, keys, typed):
    run = await opened_zero_it(session, keys)
    await session.execute("%tensors")
    await session.execute(typed)
    if "?" in typed:
        await session.execute("x.grad.zero_()")
    assert (await run.check()).correct


@pytest.mark.parametrize("before, typed", [
    ("def clear(t):\n    return t.sub_(t.item())", "clear(x.grad)"),
    ("import torch\ntorch.Tensor.mul_ = lambda t, n: t.zero_()", "x.grad.mul_(1)"),
])
async def test_code_typed_before_the_task_cannot_help_the_attempt(session, keys, before, typed):
    run = await opened_zero_it(session, keys, typed_before=before)
    await session.execute(typed)  # the earlier definition is gone: the line does what it says, no more
    assert not (await run.check()).correct
