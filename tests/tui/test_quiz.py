"""The quiz screen driven like a learner drives it: keys in, a real kernel grades, the store keeps every answer.

Questions come from the small lesson in quiz_lesson.py, its title and one
prompt in Devanagari here; the screen is 80x24.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
from fsrs import Rating
from rich.cells import cell_len
from tests.support.quiz_lesson import write_quiz_course
from tests.support.tui import KERNEL_WAIT, feedback_text, screen_text, until

from gradrepl.tui.quiz.app import AnswerGraded, QuizApp, closing_words
from gradrepl.tui.question import QuestionCard
from gradrepl.tutor.grading import grade
from gradrepl.tutor.lesson import LESSONS_ENV, load_course
from gradrepl.tutor.progress import ProgressStore
from gradrepl.tutor.quiz import SessionGrader, SpacedRepetition, start_quiz

T0 = datetime(2026, 4, 1, 12, 0, tzinfo=timezone.utc)
SIZE = (80, 24)


def write_course(tmp_path) -> Path:
    """The lesson tuiquiz, with its task question, in a course folder of its own."""
    return write_quiz_course(tmp_path, "tuiquiz", "त्वरित जाँच — quiz screen",
                             "त्वरित जाँच: what is `x.grad` after this?", with_task=True)


@pytest.fixture
def course(tmp_path):
    loaded = load_course(write_course(tmp_path))
    assert not loaded.problems
    return loaded


@pytest.fixture
def store():
    with ProgressStore.open() as opened:
        yield opened


def spaced_for(store: ProgressStore) -> SpacedRepetition:
    return SpacedRepetition(store, clock=lambda: T0, fuzzing=False)


async def type_line(pilot, text: str) -> None:
    await pilot.press(*text)
    await pilot.press("enter")


def shown(app: QuizApp) -> str:
    """What the current question says under its answer: hints (Markdown), then the verdict and its words."""
    card = app.query_one(QuestionCard)
    return "\n".join([card.query_one("#hints").source, feedback_text(card)])


async def answer_graded(pilot, app: QuizApp, count: int) -> None:
    await until(pilot, lambda: len(app.quiz.results) == count and app.phase == "answered", f"grade {count}")


async def test_one_right_after_a_hint_one_wrong_then_the_summary(course, store):
    """The app boots its own kernel (as `gradrepl quiz` does) while the first question is read."""
    gate = asyncio.Event()  # the first answer's grading waits here, so "grading…" is seen however fast the kernel

    class GatedGrader(SessionGrader):
        async def __call__(self, question, answer):
            await gate.wait()
            return await super().__call__(question, answer)

    grader = GatedGrader()
    quiz = start_quiz(course, spaced_for(store), grader, seed=4)
    quiz.questions = [q for q in quiz.questions if q.uid in ("tuiquiz/square", "tuiquiz/leaf")]
    asked = [q.uid for q in quiz.questions]
    graded: list[AnswerGraded] = []

    def record(message) -> None:
        if isinstance(message, AnswerGraded):
            graded.append(message)

    app = QuizApp(quiz, grader=grader, lesson_titles={"tuiquiz": "त्वरित जाँच — quiz screen"})
    async with app.run_test(size=SIZE, message_hook=record) as pilot:
        for n, uid in enumerate(asked, 1):
            view = app.query_one(QuestionCard)
            assert view.question.uid == uid
            assert app.query_one("#quiz").border_title == f"quiz · question {n} of 2"
            if uid == "tuiquiz/square":
                # The Devanagari title and prompt are laid out, not mangled.
                assert "त्वरित जाँच — quiz screen" in view.query_one("#question-kind").render_line(0).text
                assert "त्वरित जाँच" in view.query_one("#question-prompt").source
                await type_line(pilot, "?")
                assert "**hint 1:** The derivative of x**2 is 2*x." in shown(app)
                await type_line(pilot, "6")
            else:
                # The shown order is shuffled; press the number under which "no" appears.
                await pilot.press(str(view.order.index(1) + 1))
            if n == 1:  # grading not done yet: the screen says it is grading
                assert app.phase == "grading" and "grading…" in shown(app)
                gate.set()
            await answer_graded(pilot, app, n)
            if uid == "tuiquiz/square":
                assert "✓ **Right after a hint.**" in shown(app)
                assert "Next review in 6 min." in shown(app)  # Hard: 5.5 min on a fixed clock
            else:
                assert "✗ **Wrong.**" in shown(app)
                assert "A tensor you create yourself is a leaf" in shown(app)
                assert "The answer: **yes**" in shown(app)
                assert "Next review in 1 min." in shown(app)
            await pilot.press("enter")  # the Next button has the focus once graded
        await until(pilot, lambda: app.phase == "done", "the summary")
        summary = app.query_one("#quiz-summary").source
        assert "Score: 1/2 right (1 after a hint)" in summary
        assert "tuiquiz/square · right after a hint" in summary and "tuiquiz/leaf · wrong" in summary
        assert "Next review due in 1 min." in summary
        await pilot.press("escape")
    assert [(m.result.question.uid, m.result.word) for m in graded] == [
        (uid, "right after a hint" if uid == "tuiquiz/square" else "wrong") for uid in asked]
    assert grader.session.state == "dead"  # the quiz's kernel does not outlive the app
    with ProgressStore.open() as other_process_view:
        reviews = {r.question_id: r for r in other_process_view.reviews()}
    assert {uid: (r.correct, r.hinted, r.rating) for uid, r in reviews.items()} == {
        "tuiquiz/square": (True, True, Rating.Hard),
        "tuiquiz/leaf": (False, False, Rating.Again),
    }
    assert reviews["tuiquiz/leaf"].answer == "no" and reviews["tuiquiz/square"].answer == "6"


async def test_quitting_mid_quiz_keeps_every_answer_given(course, store, session):
    """State field by field and a task through the code input; Ctrl+Q before the rest loses nothing."""
    quiz = start_quiz(course, spaced_for(store), lambda question, answer: grade(question, answer, session), seed=1)
    assert {q.uid for q in quiz.questions} == {"tuiquiz/square", "tuiquiz/leaf", "tuiquiz/product-state",
                                               "tuiquiz/make-w"}
    # Ask the two kinds this test is about first, whatever the plan's order.
    quiz.questions.sort(key=lambda q: q.uid not in ("tuiquiz/product-state", "tuiquiz/make-w"))
    app = QuizApp(quiz)
    async with app.run_test(size=SIZE) as pilot:
        for n in (1, 2):
            question = app.query_one(QuestionCard).question
            if question.type == "predict_state":
                await type_line(pilot, "True")    # requires_grad: right
                await type_line(pilot, "True")    # is_leaf: wrong, z comes from an operation
                await answer_graded(pilot, app, n)
                assert "✗ **Wrong.**" in shown(app) and "is_leaf is False" in shown(app)
            else:
                await type_line(pilot, "w = torch.tensor(1.0, requires_grad=True)")
                await answer_graded(pilot, app, n)
                assert "✓ **Right.**" in shown(app) and "Done: the check holds." in shown(app)
                assert app.query_one("#task-code").text == "w = torch.tensor(1.0, requires_grad=True)"
            await pilot.press("enter")
        assert app.phase == "asking" and app.quiz.position == 3
        await pilot.press("ctrl+q")
    assert closing_words(quiz.summary(), quiz.total).startswith("Stopped after 2 of 4; your answers so far are saved.")
    with ProgressStore.open() as other_process_view:
        reviews = {r.question_id: r for r in other_process_view.reviews()}
    assert {uid: r.correct for uid, r in reviews.items()} == {"tuiquiz/product-state": False, "tuiquiz/make-w": True}
    assert json.loads(reviews["tuiquiz/product-state"].answer) == {"requires_grad": "True", "is_leaf": "True"}
    assert reviews["tuiquiz/make-w"].answer == "w = torch.tensor(1.0, requires_grad=True)"


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_gradrepl_quiz_in_a_terminal_opens_the_screen_and_quitting_keeps_the_answer(tmp_path, gradrepl_home):
    """`gradrepl quiz` on a terminal is the Textual screen; Ctrl+Q mid-quiz keeps what was answered."""
    folder = write_course(tmp_path)
    server = ["tmux", "-L", f"gradrepl-quiz-{uuid.uuid4().hex[:8]}"]
    command = (f"env GRADREPL_HOME={gradrepl_home} {LESSONS_ENV}={folder} {sys.executable} -m gradrepl quiz "
               f"--lesson tuiquiz --count 2 --seed 3; echo EXIT=$?; sleep 30")
    subprocess.run([*server, "new-session", "-d", "-x", "80", "-y", "24", command], check=True)

    def screen_once(predicate, what: str) -> str:
        deadline = time.monotonic() + KERNEL_WAIT
        while True:
            screen = subprocess.run([*server, "capture-pane", "-p"], capture_output=True, text=True).stdout
            if predicate(screen):
                return screen
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}; screen was:\n{screen}")
            time.sleep(0.1)

    try:
        first = screen_once(lambda s: "quiz · question 1 of 2" in s, "the first question")
        assert "त्वरित जाँच — quiz screen" in first and "^q Quit" in first
        uid = re.search(r"tuiquiz/[a-z-]+", first).group(0)  # the question id in the box's bottom edge
        # A choice answers on its number (right or wrong does not matter here); the rest on Enter.
        typed = {"tuiquiz/square": "6\r", "tuiquiz/leaf": "1", "tuiquiz/product-state": "True\rFalse\r",
                 "tuiquiz/make-w": "w = torch.tensor(1.0, requires_grad=True)\r"}[uid]
        subprocess.run([*server, "send-keys", "-l", typed], check=True)
        screen_once(lambda s: "✓ Right" in s or "✗ Wrong" in s, "the verdict")
        subprocess.run([*server, "send-keys", "C-q"], check=True)
        closed = screen_once(lambda s: "EXIT=" in s, "the quiz to close")
        assert "Stopped after 1 of 2; your answers so far are saved." in closed and "EXIT=0" in closed
    finally:
        subprocess.run([*server, "kill-server"], capture_output=True)
    with ProgressStore.open() as store:
        assert [r.question_id for r in store.reviews()] == [uid]


async def test_an_answer_in_the_wrong_form_is_asked_again_and_not_recorded(course, store, session):
    quiz = start_quiz(course, spaced_for(store), lambda question, answer: grade(question, answer, session), seed=1)
    quiz.questions = [q for q in quiz.questions if q.uid == "tuiquiz/square"]
    app = QuizApp(quiz, lesson_titles={"tuiquiz": "quiz screen"})
    async with app.run_test(size=SIZE) as pilot:
        await type_line(pilot, "the slope of x squared")
        await until(pilot, lambda: app.phase == "asking" and "could not be read as an answer" in shown(app),
                    "the form asked for", timeout=KERNEL_WAIT)
        assert quiz.results == [] and store.reviews() == []
        app.query_one(".answer-input").value = ""
        await type_line(pilot, "6")
        await answer_graded(pilot, app, 1)
        assert quiz.results[0].correct
    assert [r.answer for r in store.reviews()] == ["6"]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_verdict_is_said_once_a_wrong_answer_gets_the_lessons_words_and_a_key_its_precision(
        store, session, size):
    """Shipped lessons: learned-slope asks 'to one decimal' (its key reads 3.0, not 2.98...); a wrong
    answer to what-the-flag-does gets the paragraph the lesson explains it with; a right one says Right once."""
    course = load_course()
    questions = [course.question("tracking/what-the-flag-does"), course.question("training-loop/learned-slope")]
    quiz = start_quiz(course, spaced_for(store), lambda question, answer: grade(question, answer, session), seed=2)
    quiz.questions = questions
    after = quiz.explanations["tracking/what-the-flag-does"]
    assert after and not after.startswith("#")
    app = QuizApp(quiz)
    async with app.run_test(size=size) as pilot:
        view = app.query_one(QuestionCard)
        right = questions[0].options.index(next(o for o in questions[0].options if o.correct))
        await pilot.press(str(view.order.index((right + 1) % len(questions[0].options)) + 1))  # a wrong one
        await answer_graded(pilot, app, 1)
        assert "✗ **Wrong.**" in shown(app)
        assert after.split()[0] in shown(app) and "From the lesson" in shown(app), shown(app)
        await pilot.press("enter")
        await type_line(pilot, "3")
        await answer_graded(pilot, app, 2)
        words = shown(app)
        assert "✓ **Right.**" in words and "Right. Right." not in words and words.count("Right.") == 1, words
        assert quiz.results[-1].expected == "3.0", quiz.results[-1].expected


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_quiz_box_keeps_its_right_border(course, store, size):
    """Rich counts Devanagari's spacing marks as the terminal does (tui/unicode_width.py), so the box is
    closed on the right at every width; at 120 columns it no longer stands open beside the blank margin."""
    quiz = start_quiz(course, spaced_for(store), lambda question, answer: None, seed=4)
    app = QuizApp(quiz, lesson_titles={"tuiquiz": "त्वरित जाँच — quiz screen"})
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        box = app.query_one("#quiz").region
        rows = screen_text(app).splitlines()
        lines = [rows[y].rstrip() for y in range(box.y, box.y + box.height)]
        edge = [line[-1] for line in lines]
        assert edge[0] == "╮" and edge[-1] == "╯" and set(edge[1:-1]) == {"│"}, "\n".join(rows)
        # every row's border in the same column (cells, as the terminal counts them), the Devanagari row too
        assert {cell_len(line) for line in lines} == {box.x + box.width}, "\n".join(rows)
