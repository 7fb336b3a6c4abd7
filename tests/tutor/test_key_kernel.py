"""KeyKernel: keys from a namespace rebuilt from scratch, in a real kernel."""

from __future__ import annotations

from gradrepl.tutor.keys import KeyKernel
from gradrepl.tutor.lesson import parse_lesson

LESSON = '''---
id: keyed
title: Keys
version: 1
---

```python
w = torch.rand(3)
x = torch.tensor(2.0, requires_grad=True)
```

```question
id: doubled
type: predict
prompt: What is `x * 2`?
ask: x * 2
```

```question
id: drawn
type: numeric
prompt: What is the first random weight?
ask: w[0].item()
tolerance: 0.0
```
'''


def questions():
    lesson = parse_lesson(LESSON, "keyed.md")
    return {q.id: q for q in lesson.questions}


async def test_what_the_learner_did_in_a_shared_kernel_never_changes_a_key(session):
    await session.execute("x = torch.tensor(100.0)")  # the learner's own x, in the same kernel
    keys = KeyKernel(session, owned=False)
    key = await keys.key(questions()["doubled"])
    assert key.text == "tensor(4., grad_fn=<MulBackward0>)" and not key.problems
    assert (await session.inspect("x.item()"))["repr"] == "2.0"  # the kernel now holds the lesson's x


async def test_a_key_is_computed_once_per_visit(session):
    keys = KeyKernel(session, owned=False)
    first = await keys.key(questions()["doubled"])
    await session.execute("x = torch.tensor(100.0)")
    assert await keys.key(questions()["doubled"]) is first
    keys.keys.clear()  # a new visit
    again = await keys.key(questions()["doubled"])
    assert again is not first and again.text == first.text


async def test_the_prelude_runs_before_every_rebuild(session):
    # lint reseeds torch with its prelude, so a lesson's random weights are the same in every rebuild.
    drawn = questions()["drawn"]
    seven = await KeyKernel(session, owned=False, prelude="torch.manual_seed(7)").key(drawn)
    eight = await KeyKernel(session, owned=False, prelude="torch.manual_seed(8)").key(drawn)
    assert seven.value != eight.value
    await session.restart()
    await session.execute("torch.manual_seed(7)")
    assert (await session.inspect("torch.rand(3)[0].item()"))["value"] == seven.value.numbers[0]
