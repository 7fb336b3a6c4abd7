"""The small lesson the quiz tests write: questions on one leaf tensor `x`, in the course format."""

from __future__ import annotations

from pathlib import Path

QUESTIONS = '''
```question
id: leaf
type: choice
prompt: Is `x` a leaf tensor?
options:
  - text: "yes"
    correct: true
  - text: "no"
    feedback: A tensor you create yourself is a leaf; only results of operations are not.
```

```question
id: product-state
type: predict_state
prompt: After `z = x * 2`, what is z's autograd state?
code: |
  z = x * 2
ask: z
fields: [requires_grad, is_leaf]
```
'''

TASK = '''
```question
id: make-w
type: task
prompt: Make `w`, a tracked leaf tensor holding 1.0.
checks:
  - state: w
    facts: [requires_grad, is_leaf, value]
    message: w is not a tracked leaf holding 1.0.
solution: |
  w = torch.tensor(1.0, requires_grad=True)
```
'''


def quiz_lesson(lesson_id: str, title: str, square_prompt: str, with_task: bool = False) -> str:
    """A lesson asking square (predict), leaf (choice), product-state (predict_state) and, `with_task`, make-w."""
    square = f'''---
id: {lesson_id}
title: "{title}"
version: 1
---

One leaf tensor.

```python
import torch
x = torch.tensor(3.0, requires_grad=True)
```

```question
id: square
type: predict
prompt: "{square_prompt}"
code: |
  y = x ** 2
  y.backward()
ask: x.grad
hints:
  - The derivative of x**2 is 2*x.
misconceptions:
  - answer: "3"
    feedback: That is x itself, not the derivative 2*x.
```
'''
    return square + QUESTIONS + (TASK if with_task else "")


def write_quiz_course(tmp_path: Path, lesson_id: str, title: str, square_prompt: str,
                      with_task: bool = False) -> Path:
    """A course folder under `tmp_path` holding that one lesson; returns the folder."""
    folder = tmp_path / "lessons"
    folder.mkdir()
    lesson = quiz_lesson(lesson_id, title, square_prompt, with_task)
    (folder / f"01-{lesson_id}.md").write_text(lesson, encoding="utf-8")
    return folder
