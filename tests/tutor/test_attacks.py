"""lint's generic moves (tutor/attacks.py) are all tried on a task, and a sound task refuses each one.

The moves are written from the solution's own states in a real kernel; each is then
run as an attempt from the task's start and judged as a learner's would be.
"""

import pytest

from gradrepl.tutor import attacks
from gradrepl.tutor.grading import compute_key
from gradrepl.tutor.lesson import parse_lesson
from gradrepl.tutor.lint import _attempt
from tests.support.course import question

SOUND = '''---
id: sound
title: Sound
---

```python
helper = [1, 2]
```

```question
id: t
type: task
prompt: Fill x.grad with d(sum of x**3)/dx by calling backward; keep x the tensor that is there, and zero lin's weight gradient in place.
setup: |
  x = torch.tensor([2.0, 3.0], requires_grad=True)
  lin = nn.Linear(2, 1)
  lin(x).sum().backward()
  x.grad = None
checks:
  - state: x
    facts: [value, requires_grad, identity, grad, grad_by_backward, backward, graph, seeds]
    message: x.grad is not what one backward of (x ** 3).sum() leaves.
  - state: lin
    facts: [identity, value, requires_grad, grad, grad_identity, backward]
    message: lin's gradients are not zeroed in place.
solution: |
  (x ** 3).sum().backward()
  lin.weight.grad.zero_()
  lin.bias.grad.zero_()
```
'''


async def test_every_kind_of_move_is_made_and_each_is_refused(session):
    question = parse_lesson(SOUND, "sound.md").question("t")
    key = await compute_key(question, session)
    reference = key.reference
    assert reference is not None and not reference.error and not key.problems, key.problems
    moves = attacks.moves(question, reference.start, reference.end)
    kinds = ["assign the solution's final values", "rebind every other name", "patch torch's comparisons",
             "replace x with a fresh object", "replace lin with a fresh object", "tensor subclass",
             "fix only the first", "seeded to add what the solution's passes add",
             "other seeds that add up to the same", "shift each gradient", "rescales its gradient"]
    for kind in kinds:
        assert any(m.name.startswith(kind) or kind in m.name for m in moves), (kind, [m.name for m in moves])
    assert "helper = [1] * 1000" in next(m.code for m in moves if m.name.startswith("rebind"))
    for move in moves:
        verdict = await _attempt(question, reference, move.code, session)
        assert not verdict.ok, (move.name, move.code)
    assert (await _attempt(question, reference, question.solution, session)).ok


# The moves a blind play-through found (issue 22, round three) are made for the course's own tasks, and refused:
# the printed gradient typed with its sign moved to the operator, and a new optimizer handed the old one's state.
@pytest.mark.parametrize("uid, kind", [
    ("training-loop/one-step", "with the other sign"),
    ("trainable-parameters/filtered-optimizer", "the old one's state"),
])
async def test_a_move_found_in_play_is_made_for_the_course_and_refused(session, uid, kind):
    task = question(uid)
    key = await compute_key(task, session)
    made = [m for m in attacks.moves(task, key.reference.start, key.reference.end) if kind in m.name]
    assert made, [m.name for m in attacks.moves(task, key.reference.start, key.reference.end)]
    for move in made:
        verdict = await _attempt(task, key.reference, move.code, session)
        assert not verdict.ok, (move.name, move.code)
