"""LessonRun's rules on their own: a fake learner's kernel records what the engine runs there.

The questions here are keyed by their author (choices without `ask`), so no key needs a kernel, and
the run's rules (one transition, a right answer reveals, the skip rule, progress, a finished lesson
taken again) are seen without starting one, as QuizRun's are with a fake Grader. The door is the
real session.steps.Door: what it reports is what a TUI would render.
"""

from __future__ import annotations

import pytest

from gradrepl.protocol.messages import StepResult
from gradrepl.session.steps import Door, Finished, Started
from gradrepl.tutor.keys import KeyKernel
from gradrepl.tutor.lesson import parse_lesson
from gradrepl.tutor.lesson_events import Graded, Hinted, Opened, Refused, Revealed
from gradrepl.tutor.lesson_run import LessonRun
from gradrepl.tutor.progress import LessonProgress

LESSON = '''---
id: fake
title: A lesson for a fake kernel
version: 1
{extra}---

Some prose.

```python
x = 2
```

```question
id: pick
type: choice
prompt: Which is right?
options:
  - text: This one
    correct: true
  - text: That one
    feedback: Not that one.
hints:
  - The first.
  - Really, the first.
```

The end.
'''


class FakeKernel:
    """Session-shaped: remembers every source it was asked to run and every restart."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.restarts = 0
        self.step = 0

    async def execute(self, source: str, **_kwargs) -> StepResult:
        self.step += 1
        self.ran.append(source.strip())
        return StepResult(step=self.step, source=source, tensors=[{"name": "x"}])

    async def restart(self) -> list[str]:
        self.restarts += 1
        return ["x"] if self.ran else []


class Recorder:
    def __init__(self) -> None:
        self.saved: list[LessonProgress] = []
        self.reviews: list[tuple[str, bool, bool]] = []

    def save(self, progress: LessonProgress) -> None:
        self.saved.append(progress)

    def review(self, question_id: str, correct: bool, hinted: bool, answer: str) -> None:
        self.reviews.append((question_id, correct, hinted))


def new_run(skippable: bool = True, progress: LessonProgress | None = None):
    lesson = parse_lesson(LESSON.format(extra="" if skippable else "skippable: false\n"), "fake.md")
    kernel, reported, events, recorder = FakeKernel(), [], [], Recorder()
    door = Door(kernel, reported.append)
    run = LessonRun(lesson, door, KeyKernel(door, owned=False), events.append, progress=progress,
                    recorder=recorder)
    return run, kernel, reported, events, recorder


async def to_the_question(run: LessonRun) -> None:
    await run.resume(0)
    while run.step.kind != "question":
        await run.enter()
        assert run.advance()
    await run.enter()


async def test_a_cell_is_shown_through_the_door_and_a_replay_only_reports_rows():
    run, kernel, reported, events, _ = new_run()
    await run.resume(0)
    await run.enter()          # prose: nothing runs
    assert kernel.ran == [] and run.advance()
    await run.enter()          # the cell: shown like a typed step
    assert kernel.ran == ["x = 2"]
    assert [type(e) for e in reported] == [Started, Finished] and reported[-1].shown

    reported.clear()
    await run.resume(3)        # a fresh kernel holding the steps before: replayed, rows only
    assert kernel.restarts == 2 and kernel.ran == ["x = 2", "x = 2"]
    assert reported and all(isinstance(e, Finished) and not e.shown for e in reported)
    assert [e for e in events if isinstance(e, Opened)][-1].replayed == 3


async def test_a_wrong_answer_keeps_the_question_open_and_a_right_one_reveals_it():
    run, _, _, events, recorder = new_run()
    await to_the_question(run)
    assert await run.act("answer", 1) is False
    assert not run.done() and not run.advance()
    assert await run.act("answer", 0) is True
    graded = [e for e in events if isinstance(e, Graded)]
    assert [g.grade.correct for g in graded] == [False, True] and "Not that one." in graded[0].grade.feedback
    revealed = [e for e in events if isinstance(e, Revealed)]
    assert len(revealed) == 1 and not revealed[0].skipped and revealed[0].expected == "This one"
    assert run.done() and run.summary.after_help == 1 and run.summary.first_try == 0
    # Only the first verdict of a visit is a quiz review.
    assert recorder.reviews == [("fake/pick", False, False)]


async def test_hints_are_counted_in_progress_and_run_out():
    run, _, _, events, recorder = new_run()
    await to_the_question(run)
    for _ in range(3):
        assert await run.act("hint") is False
    hinted = [e for e in events if isinstance(e, Hinted)]
    assert [(h.n, h.text) for h in hinted] == [(1, "The first."), (2, "Really, the first."), (2, None)]
    assert recorder.saved[-1].hints == {run.index: 2}
    assert await run.act("answer", 0) is True
    assert run.summary.after_help == 1 and recorder.reviews == [("fake/pick", True, True)]


async def test_skip_reveals_unless_the_lesson_forbids_it():
    run, _, _, events, _ = new_run(skippable=False)
    await to_the_question(run)
    assert await run.act("skip") is False
    assert [e for e in events if isinstance(e, Refused)] and not run.done()

    run, _, _, events, _ = new_run()
    await to_the_question(run)
    assert await run.act("skip") is True
    assert [e.skipped for e in events if isinstance(e, Revealed)] == [True]
    assert run.done() and run.summary.skipped == 1


async def test_an_unknown_action_is_refused_loudly():
    run, *_ = new_run()
    await to_the_question(run)
    with pytest.raises(ValueError):
        await run.act("guess", 0)


async def test_a_finished_lesson_is_taken_again_from_its_start():
    finished = LessonProgress("fake", "1", current_step=4, finished=[0, 1, 2, 3, 4], hints={2: 1})
    run, kernel, _, events, _ = new_run(progress=finished)
    assert run.again and run.index == 0 and not run.done() and run.hints_shown(2) == 0
    await run.resume()
    assert kernel.ran == [] and [e.replayed for e in events if isinstance(e, Opened)] == [0]

    started = LessonProgress("fake", "1", current_step=2, finished=[0, 1])
    run, *_ = new_run(progress=started)
    assert not run.again and run.index == 2
