"""`gradrepl learn`: the lesson pane driven like a learner drives it, with real kernels behind it."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Button, Markdown, OptionList
from textual.widgets._markdown import MarkdownParagraph
from tests.support.tui import Recorder, cell_text, feedback_text, until

from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.lesson.messages import CourseLoaded, LessonEvent
from gradrepl.tui.lesson.pane import LessonPane
from gradrepl.tui.lesson.picker import LessonPicker
from gradrepl.tui.question import ChoiceList, QuestionCard
from gradrepl.tui.messages import StepFinished
from gradrepl.tui.tensors.tensor_table import TensorTable
from gradrepl.tutor.lesson_run import Graded, Opened
from gradrepl.tutor.progress import ProgressStore
from tests.support.lesson_files import HELP_LESSON

SIZE = (150, 45)

ALPHA = '''---
id: alpha
title: Alpha, a lesson for the tests
version: 1
---

# Tracking

A tracked leaf.

```python
x = torch.tensor(2.0, requires_grad=True)
```

```question
id: flag
type: choice
prompt: What does `requires_grad=True` do?
options:
  - text: Autograd records the operations done with it
    correct: true
  - text: An optimizer will update it without being told
    feedback: An optimizer only updates the parameters you pass it; the flag *only* turns recording on.
```

```question
id: make-grad
type: task
prompt: Make `x.grad` hold 4, the slope of x squared at 2.
checks:
  - state: x
    facts: [grad, backward]
    message: x.grad does not hold 4 from a backward pass.
solution: |
  (x ** 2).backward()
hints:
  - Square x, then call backward() on the result.
```

Done.
'''

HINDI = '''---
id: hindi
title: "त्वरित जाँच — a gradient"
version: 1
language: hi
---

*त्वरित जाँच* means "quick check".

```python
w = torch.tensor(3.0, requires_grad=True)
```

```question
id: slope
type: predict
prompt: After `(w * w).backward()`, what is `w.grad`?
code: |
  (w * w).backward()
ask: w.grad
misconceptions:
  - answer: "9"
    feedback: 9 is the value of w*w; .grad holds the slope 2w.
```
'''

# Line 11 of this file holds the unknown type: the learner must be told that line.
BROKEN = '''---
id: broken
title: A broken lesson
version: 1
---

Some prose.

```question
id: oops
type: essay
prompt: Write an essay.
```
'''


def shown(markdown: Markdown) -> str:
    """A Markdown widget's words as rendered: the Markdown syntax is gone."""
    return "\n".join(str(block.render()) for block in markdown.query(MarkdownParagraph))


def styled(markdown: Markdown, style: str) -> list[str]:
    """The rendered pieces of a Markdown widget drawn in `style` (e.g. italic)."""
    return [segment.text for block in markdown.query(MarkdownParagraph) for y in range(block.size.height)
            for segment in block.render_line(y) if segment.style and getattr(segment.style, style)]


def picker_text(option) -> str:
    """An option's words as the learner reads them (the mark and the text beside it)."""
    return " ".join(str(cell) for column in option.prompt.columns for cell in column.cells)


@pytest.fixture
def course(tmp_path) -> Path:
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "01-alpha.md").write_text(ALPHA, encoding="utf-8")
    (folder / "02-broken.md").write_text(BROKEN, encoding="utf-8")
    (folder / "03-hindi.md").write_text(HINDI, encoding="utf-8")
    return folder


def learn_app(course: Path, lesson_id: str | None, **kwargs) -> GradReplApp:
    return GradReplApp(learn=True, lesson_id=lesson_id, lessons_dir=str(course), **kwargs)


async def opened(pilot, app: GradReplApp, lesson_id: str) -> LessonPane:
    pane = app.query_one(LessonPane)
    await until(pilot, lambda: pane.lesson is not None and pane.lesson.id == lesson_id and pane.progress is not None
                and pane.query("#step-0"), f"lesson {lesson_id}")
    return pane


async def next_step(pilot, pane: LessonPane) -> None:
    index = pane.index
    await pilot.press("ctrl+n")
    await until(pilot, lambda: pane.index == index + 1, f"step {index + 1}", timeout=10)
    await pilot.pause()


async def click(pilot, widget) -> None:
    """Click a widget as a learner would: scrolled into view first."""
    widget.scroll_visible(animate=False)
    await pilot.pause()
    assert await pilot.click(widget)


def run_events(recorder: Recorder, kind: type) -> list:
    """The lesson run's events of one kind, in the order the pane received them."""
    return [m.event for m in recorder.of(LessonEvent) if isinstance(m.event, kind)]


async def answer(pilot, card: QuestionCard, recorder: Recorder) -> Graded:
    graded = len(run_events(recorder, Graded))
    await click(pilot, card.query_one("#answer-button", Button))
    await until(pilot, lambda: len(run_events(recorder, Graded)) > graded, "the grade")
    await pilot.pause()
    return run_events(recorder, Graded)[-1]


async def choose(pilot, card: QuestionCard, option: int, recorder: Recorder) -> Graded:
    """Pick an option by the number shown beside it: that answers with it."""
    graded = len(run_events(recorder, Graded))
    card.query_one(ChoiceList).focus()
    await pilot.press(str(card.order.index(option) + 1))
    await until(pilot, lambda: len(run_events(recorder, Graded)) > graded, "the grade")
    await pilot.pause()
    return run_events(recorder, Graded)[-1]


async def to_the_task(pilot, app: GradReplApp, recorder: Recorder) -> QuestionCard:
    """Open alpha, step past its prose and cell, answer its choice rightly and step on to its task."""
    pane = await opened(pilot, app, "alpha")
    await next_step(pilot, pane)
    await next_step(pilot, pane)
    choice = app.query_one("#step-2", QuestionCard)
    await choose(pilot, choice, 0, recorder)
    await until(pilot, lambda: choice.done, "the choice to close")
    await next_step(pilot, pane)
    return app.query_one("#step-3", QuestionCard)


async def test_choice_feedback_then_a_task_checked_on_the_console_namespace(course):
    recorder = Recorder()
    app = learn_app(course, "alpha")
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        pane = await opened(pilot, app, "alpha")
        # A Markdown widget takes its source when mounted, a moment after the step appears.
        await until(pilot, lambda: "Tracking" in app.query_one("#step-0", Markdown).source, "the prose", timeout=10)
        await next_step(pilot, pane)  # the cell runs in the console's kernel: x appears in the panel
        await until(pilot, lambda: app.query_one(TensorTable).names == ["x"], "x in the panel")

        await next_step(pilot, pane)
        card = app.query_one("#step-2", QuestionCard)
        assert app.query_one("#lesson-next", Button).disabled  # no going on before answering
        wrong = await choose(pilot, card, 1, recorder)
        assert not wrong.grade.correct
        assert "optimizer only updates the parameters you pass it" in feedback_text(card)
        assert feedback_text(card).startswith("✗") and not card.done
        words = card.query_one("#verdict-words", Markdown)
        await until(pilot, lambda: "the flag only turns recording on" in shown(words), "the feedback rendered")
        assert "*" not in shown(words) and styled(words, "italic") == ["only"]  # Markdown, not literal stars

        right = await choose(pilot, card, 0, recorder)
        assert right.grade.correct and feedback_text(card).startswith("✓ Right.")
        await until(pilot, lambda: card.done, "the question to close")
        assert "answer: Autograd records the operations done with it" in feedback_text(card)
        options = card.query_one(ChoiceList)
        marks = [str(options.get_option_at_index(shown).prompt)[:2] for shown in range(options.option_count)]
        assert marks[card.order.index(0)] == "✓ " and marks.count("✓ ") == 1  # the answer, marked where it is

        await next_step(pilot, pane)
        task = app.query_one("#step-3", QuestionCard)
        await until(pilot, lambda: app.query_one(CodeInput).has_focus, "the console to take the task's code")
        not_yet = await answer(pilot, task, recorder)
        assert not not_yet.grade.correct and "Not yet" in feedback_text(task)

        await click(pilot, task.query_one("#hint-button", Button))
        await pilot.pause()
        await until(pilot, lambda: "hint 1: Square x" in shown(task.query_one("#hints", Markdown)), "the hint",
                    timeout=5)

        steps = len(recorder.of(StepFinished))
        app.query_one(CodeInput).focus()
        await pilot.press(*"(x ** 2).backward()")
        await pilot.press("enter")
        await until(pilot, lambda: len(recorder.of(StepFinished)) > steps, "the learner's step")
        assert cell_text(app.query_one(TensorTable), "x", "grad") == "4"
        done = await answer(pilot, task, recorder)
        assert done.grade.correct and "Done: the check holds." in feedback_text(task)
        await until(pilot, lambda: task.done, "the task to close")

        await next_step(pilot, pane)  # the closing prose, then back to the course, which shows it done
        assert str(app.query_one("#lesson-next", Button).label) == "Done ▸"
        await pilot.press("ctrl+n")
        picker = app.query_one(LessonPicker)
        await until(pilot, lambda: picker.display and "done" in picker_text(picker.get_option("alpha")),
                    "the course with alpha done", timeout=10)
    # The first verdict on each question became a quiz review, so `gradrepl quiz` schedules them.
    with ProgressStore.open() as store:
        assert [(r.correct, r.hinted) for r in store.reviews("alpha/flag")] == [(False, False)]
        assert [(r.correct, r.hinted) for r in store.reviews("alpha/make-grad")] == [(False, False)]


async def test_resume_replays_finished_steps_in_a_fresh_kernel(course, gradrepl_home):
    recorder = Recorder()
    app = learn_app(course, "alpha")
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await to_the_task(pilot, app, recorder)  # on the task when the learner quits
        await pilot.pause(0.2)  # the progress write is committed on its own thread
    assert (gradrepl_home / "progress.sqlite3").exists()

    recorder = Recorder()
    app = learn_app(course, "alpha")
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        pane = await opened(pilot, app, "alpha")
        assert pane.index == 3
        assert app.query_one("#step-2", QuestionCard).done  # answered before: shown, not asked again
        await until(pilot, lambda: run_events(recorder, Opened), "the replay")
        await until(pilot, lambda: app.query_one(TensorTable).names == ["x"], "x rebuilt by replaying the cell")
        assert cell_text(app.query_one(TensorTable), "x", "grad") == "None"

        task = app.query_one("#step-3", QuestionCard)
        await click(pilot, task.query_one("#skip-button", Button))
        await until(pilot, lambda: task.done, "the skipped task")
        assert "(x ** 2).backward()" in feedback_text(task)  # the solution is shown ...
        await until(pilot, lambda: cell_text(app.query_one(TensorTable), "x", "grad") == "4",
                    "... and ran in the console's kernel")
        log = "\n".join(line.text for line in app.query_one(ConsoleLog).lines)
        assert "(x ** 2).backward()" in log


async def test_a_malformed_lesson_is_shown_with_its_line_and_the_rest_stays_available(course):
    recorder = Recorder()
    app = learn_app(course, "broken", start_kernel=False)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await until(pilot, lambda: recorder.of(CourseLoaded), "the course", timeout=10)
        await pilot.pause()
        where = f"{course / '02-broken.md'}:11"
        notice = str(app.query_one("#lesson-notice").render())
        assert "could not be loaded" in notice and where in notice and "essay" in notice

        picker = app.query_one(LessonPicker)
        options = [picker.get_option_at_index(i) for i in range(picker.option_count)]
        assert [o.id for o in options if not o.disabled] == ["alpha", "hindi"]
        broken = [o for o in options if o.disabled]
        assert len(broken) == 1 and where in picker_text(broken[0])

        picker.focus()
        picker.highlighted = 1
        await pilot.press("enter")  # another lesson opens: the app kept running
        await opened(pilot, app, "hindi")


async def test_devanagari_lesson_and_a_predict_key_computed_in_the_key_kernel(course):
    recorder = Recorder()
    app = learn_app(course, "hindi")
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        pane = await opened(pilot, app, "hindi")
        assert pane.border_title.startswith("त्वरित जाँच")
        await until(pilot, lambda: "त्वरित जाँच" in app.query_one("#step-0", Markdown).source, "the prose",
                    timeout=10)
        await next_step(pilot, pane)
        await next_step(pilot, pane)
        card = app.query_one("#step-2", QuestionCard)
        field = card.query_one("#answer")
        assert field.has_focus
        await pilot.press("9", "enter")
        await until(pilot, lambda: run_events(recorder, Graded), "the first grade")
        await pilot.pause()
        assert "9 is the value of w*w" in feedback_text(card)
        # The key came from the key kernel: the learner's panel has not seen backward() yet.
        assert cell_text(app.query_one(TensorTable), "w", "grad") == "None"

        field.value = ""
        await pilot.press("6", "enter")
        await until(pilot, lambda: card.done, "the right answer")
        assert run_events(recorder, Graded)[-1].grade.correct
        await until(pilot, lambda: cell_text(app.query_one(TensorTable), "w", "grad") == "6",
                    "the question's code to run in the console's kernel")


async def test_palette_lesson_open_shows_the_picker_beside_the_console(course, monkeypatch):
    monkeypatch.setenv("GRADREPL_LESSONS", str(course))
    recorder = Recorder()
    app = GradReplApp(start_kernel=False)
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        assert not app.query(LessonPane)
        await pilot.press("ctrl+p")
        await pilot.press(*"lesson: open")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: recorder.of(CourseLoaded), "the course", timeout=10)
        await pilot.pause()
        picker = app.query_one(LessonPicker)
        assert picker.display and picker.option_count == 3
        assert isinstance(picker, OptionList)


async def test_a_failed_check_puts_the_namespace_back_where_the_task_started(course):
    recorder = Recorder()
    app = learn_app(course, "alpha")
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        task = await to_the_task(pilot, app, recorder)
        table = app.query_one(TensorTable)
        await until(pilot, lambda: app.query_one(CodeInput).has_focus, "the console to take the task's code")

        # A wrong attempt that also rebinds x: the slope of 3x, at a new x.
        for line in ("x = torch.tensor(5.0, requires_grad=True)", "(x * 3).backward()"):
            steps = len(recorder.of(StepFinished))
            await pilot.press(*line)
            await pilot.press("enter")
            await until(pilot, lambda: len(recorder.of(StepFinished)) > steps, f"the step {line!r}")
        await until(pilot, lambda: cell_text(table, "x", "grad") == "3", "the attempt in the panel")
        assert cell_text(table, "x", "value") == "5"

        wrong = await answer(pilot, task, recorder)
        assert not wrong.grade.correct and wrong.grade.restored and not task.done
        assert "Not yet" in feedback_text(task) and "back to where this task started" in feedback_text(task)
        x = await app.session.inspect("x")
        assert x["value"]["values"] == 2.0 and x["grad"] is None  # the kernel holds the task's start again
        await until(pilot, lambda: cell_text(table, "x", "value") == "2", "the panel to follow", timeout=10)
        assert cell_text(table, "x", "grad") == "None" and table.names == ["x"]
        log = "\n".join(line.text for line in app.query_one(ConsoleLog).lines)
        assert "back to where this task started" in log

        app.query_one(CodeInput).focus()
        await pilot.press("up")  # the attempt is one key away, to edit and run again
        assert app.query_one(CodeInput).text == "(x * 3).backward()"


EXERCISES = '''---
id: exercises
title: Exercises
version: 1
---

```python
x = torch.tensor(2.0, requires_grad=True)
```

```question
id: long-choice
type: choice
prompt: Which is right?
options:
  - text: A wrong option whose words go on for long enough that a narrow lesson pane must wrap them over several lines rather than cut them off with an ellipsis
    feedback: Not this one.
  - text: The right option, whose words also go on for long enough that a narrow lesson pane must wrap them over more lines
    correct: true
hints:
  - one
  - two
```

```question
id: fix-it
type: task
prompt: This code should leave 12 in `grad_h`, but it comes out None. Fix it and run it.
starter: |
  h = x * 3
  (h ** 2).backward()
  grad_h = h.grad
checks:
  - state: grad_h
    facts: [value]
    message: grad_h does not hold 12.
solution: |
  h = x * 3
  h.retain_grad()
  (h ** 2).backward()
  grad_h = h.grad
hints:
  - one
  - two
```
'''


async def test_enter_on_an_option_answers_and_long_options_wrap_then_an_exercise_fills_the_console(tmp_path):
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "01-exercises.md").write_text(EXERCISES, encoding="utf-8")
    recorder = Recorder()
    app = learn_app(folder, "exercises")
    async with app.run_test(size=(110, 45), message_hook=recorder) as pilot:
        pane = await opened(pilot, app, "exercises")
        await next_step(pilot, pane)
        card = app.query_one("#step-1", QuestionCard)
        options = card.query_one(ChoiceList)
        options.scroll_visible(animate=False)
        await pilot.pause()
        rendered = " ".join(options.render_line(y).text.strip(" ▊▎▔▁") for y in range(options.size.height))
        assert options.size.height >= 2 + 4  # inside its border, each long option wraps over two lines or more
        assert "…" not in rendered and "a narrow lesson pane must wrap them over more lines" in " ".join(rendered.split())
        # A click on the first option shown answers with it.
        first = card.order[0]
        await pilot.click(options, offset=(4, 1))
        await until(pilot, lambda: run_events(recorder, Graded), "a click to answer with the option")
        assert run_events(recorder, Graded)[-1].grade.correct == (first == 1)
        if first == 1:  # right at once: the card closes (and focus moves to Continue) once the reveal ran
            await until(pilot, lambda: card.done, "the reveal after a right click")
        if not card.done:
            # The options are shown shuffled: move the highlight to the right one; Enter answers with it.
            options.focus()
            options.highlighted = 0
            for _ in range(card.order.index(1)):
                await pilot.press("down")
            await pilot.press("enter")
        await until(pilot, lambda: card.done, "Enter to answer with the highlighted option")
        assert run_events(recorder, Graded)[-1].grade.correct

        await next_step(pilot, pane)
        code_input = app.query_one(CodeInput)
        await until(pilot, lambda: code_input.has_focus and "grad_h = h.grad" in code_input.text,
                    "the starter code in the console's input")
        assert code_input.text == "h = x * 3\n(h ** 2).backward()\ngrad_h = h.grad"


async def test_text_typed_on_the_tensor_panel_goes_into_the_console(course):
    app = learn_app(course, "alpha", start_kernel=False)
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot, app, "alpha")
        await pilot.pause(0.5)  # the pane puts the keyboard on its Continue button once the step is shown
        table = app.query_one(TensorTable)
        app.query_one(CodeInput).focus()
        await pilot.press("f2")  # the learner moves to the panel
        assert app.focused is table
        await pilot.press(*"x.grad")
        code_input = app.query_one(CodeInput)
        assert code_input.has_focus and code_input.text == "x.grad"




async def test_a_lesson_cell_that_calls_help_opens_the_help_view(tmp_path):
    from gradrepl.tui.console.help_view import HelpView

    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "01-helpful.md").write_text(HELP_LESSON, encoding="utf-8")
    app = learn_app(folder, "helpful")
    async with app.run_test(size=SIZE) as pilot:
        await opened(pilot, app, "helpful")
        await until(pilot, lambda: isinstance(app.screen, HelpView) and app.screen.query("#help-text"),
                    "the help view")
        assert "Multiply t by three." in str(app.screen.query_one("#help-text").render())


async def test_a_fresh_lesson_says_it_starts_in_a_fresh_kernel_not_that_steps_were_replayed(course):
    recorder = Recorder()
    app = learn_app(course, "alpha")
    async with app.run_test(size=SIZE, message_hook=recorder) as pilot:
        await opened(pilot, app, "alpha")
        await until(pilot, lambda: run_events(recorder, Opened), "the lesson opened")
        log = ConsoleLog
        await until(pilot, lambda: "Lesson 'alpha'" in "\n".join(line.text for line in app.query_one(log).lines),
                    "the notice")
        words = "\n".join(line.text for line in app.query_one(log).lines)
        assert "a fresh kernel for the lesson" in words and "replayed" not in words, words
        assert run_events(recorder, Opened)[0].replayed == 0
