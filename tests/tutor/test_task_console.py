"""A task checked on a console's namespace (learn's F5): judged against a key kernel of its own.

As in `learn`, the learner's kernel and the key kernel are two sessions: the
solution runs only in the key kernel, the code the learner typed since the
task opened is what the code rules read, and a start the learner changed
before the task is rebuilt instead of judged.
"""

import pytest

from gradrepl.session import Session
from gradrepl.tutor.keys import KeyKernel
from gradrepl.tutor.lesson import parse_lesson
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


async def test_a_start_changed_before_the_task_is_rebuilt_not_judged(session, keys):
    run = await opened_task(session, keys, typed_before="with torch.no_grad():\n    x.mul_(10)\ny = x * 2")
    await session.execute("y.backward(torch.ones(3))")
    moved = await run.check()
    assert moved.retry and not moved.correct and "had changed before this task started" in moved.feedback
    assert (await session.inspect("x[0].item()"))["value"] == 1.0  # rebuilt to the lesson's own start
    await session.execute("y.backward(torch.ones(3))")
    assert (await run.check()).correct
