"""The quiz end to end: a real kernel grades, the store keeps every answer.

Questions come from the small lesson in quiz_lesson.py; answers
go in through prompt_toolkit's pipe input, or through stdin of a real
`gradrepl quiz --plain` process.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from fsrs import Rating
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from tests.support.quiz_lesson import write_quiz_course

from gradrepl import paths
from gradrepl.plain.quiz import PromptReader, play_quiz
from gradrepl.tutor.lesson import LESSONS_ENV, load_course
from gradrepl.tutor.progress import ProgressStore
from gradrepl.tutor.quiz import SessionGrader, SpacedRepetition, start_quiz

# Typed lines per question: the first wrong (a named misconception), then right after a hint, etc.
RIGHT = {"quizcheck/square": ["6"], "quizcheck/leaf": ["yes"], "quizcheck/product-state": ["True", "False"]}
T0 = datetime(2026, 4, 1, 12, 0, tzinfo=timezone.utc)

# Runs the real command line with the two commands of this area registered.
CLI = ("import sys; from gradrepl import cli; cli.COMMANDS = ('quiz', 'stats'); "
       "sys.exit(cli.main(sys.argv[1:]))")


@pytest.fixture
def course_dir(tmp_path, monkeypatch) -> Path:
    folder = write_quiz_course(tmp_path, "quizcheck", "Quiz check", "What is x.grad after this?")
    monkeypatch.setenv(LESSONS_ENV, str(folder))
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path / "home"))
    return folder


class FixedClock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def _run_quiz(course, store, clock, typed: list[str], seed: int = 5):
    """One quiz through the plain flow, typing `typed` into prompt_toolkit's pipe input."""
    spaced = SpacedRepetition(store, clock=clock, fuzzing=False)
    grader = SessionGrader()
    quiz = start_quiz(course, spaced, grader, seed=seed)
    out = io.StringIO()
    try:
        with create_pipe_input() as pipe:
            pipe.send_text("".join(line + "\n" for line in typed))
            grader.start()
            summary = await play_quiz(quiz, PromptReader(input=pipe, output=DummyOutput()), out)
    finally:
        await grader.close()
    return quiz, summary, out.getvalue()


def _typed_for(order: list[str], answers: dict[str, list[str]]) -> list[str]:
    return [line for uid in order for line in answers[uid]]


async def test_a_scripted_quiz_grades_in_the_kernel_and_stores_every_answer(course_dir, tmp_path):
    course = load_course(course_dir)
    assert not course.problems
    clock = FixedClock(T0)
    answers = {"quizcheck/square": ["?", "6"],       # right after a hint: Hard
               "quizcheck/leaf": ["2"],              # wrong: Again
               "quizcheck/product-state": ["True", "True"]}  # wrong on is_leaf: Again
    store = ProgressStore.open()
    order = [q.uid for q in start_quiz(course, SpacedRepetition(store, clock=clock), None, seed=5).questions]
    assert sorted(order) == sorted(RIGHT)

    quiz, summary, out = await _run_quiz(course, store, clock, _typed_for(order, answers))

    assert (summary.asked, summary.right, summary.hinted) == (3, 1, 1)
    assert "Hint: The derivative of x**2 is 2*x." in out
    assert "A tensor you create yourself is a leaf" in out
    assert "The answer: yes" in out
    assert "is_leaf is False" in out
    assert "Score: 1/3 right (1 after a hint)." in out
    with ProgressStore.open() as other_process_view:
        reviews = {r.question_id: r for r in other_process_view.reviews()}
    assert {uid: (r.correct, r.hinted, r.rating) for uid, r in reviews.items()} == {
        "quizcheck/square": (True, True, Rating.Hard),
        "quizcheck/leaf": (False, False, Rating.Again),
        "quizcheck/product-state": (False, False, Rating.Again),
    }
    assert reviews["quizcheck/leaf"].answer == "no"
    assert json.loads(reviews["quizcheck/product-state"].answer) == {"requires_grad": "True", "is_leaf": "True"}
    assert all(r.reviewed_at == T0 for r in reviews.values())
    assert summary.next_due == T0 + timedelta(minutes=1)

    # Two minutes later only the two wrong answers are due; the hinted one waits 5.5 min.
    clock.now = T0 + timedelta(minutes=2)
    again = {uid: RIGHT[uid] for uid in ("quizcheck/leaf", "quizcheck/product-state")}
    second_order = [q.uid for q in start_quiz(course, SpacedRepetition(store, clock=clock), None, seed=5).questions]
    assert sorted(second_order) == sorted(again)
    _, summary, out = await _run_quiz(course, store, clock, _typed_for(second_order, again))
    assert (summary.asked, summary.right) == (2, 2)
    assert "Score: 2/2 right." in out
    assert len(store.reviews()) == 5
    assert [r.rating for r in store.reviews("quizcheck/leaf")] == [Rating.Again, Rating.Good]
    store.close()


def _cli(*args: str, stdin: str = "", check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-c", CLI, *args], input=stdin, capture_output=True, text=True,
                            env=os.environ.copy(), timeout=90)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def _answer_interactively(proc: subprocess.Popen, answers: dict[str, list[str]], stop_after: int) -> str:
    """Drive a quiz process: read the question it shows, type the answer, wait for the result."""
    seen = []
    answered = 0
    question = None
    while answered < stop_after:
        line = proc.stdout.readline()
        assert line, "the quiz ended early:\n" + "".join(seen) + proc.stderr.read()
        seen.append(line)
        if line.startswith("[") and "] quizcheck/" in line:
            question = line.split("] ", 1)[1].strip()
            for typed in answers[question]:
                proc.stdin.write(typed + "\n")
            proc.stdin.flush()
        elif line.startswith("  Next review"):
            answered += 1
    return "".join(seen)


def test_killing_a_quiz_mid_way_loses_nothing_answered(course_dir):
    wrong_then_right = {"quizcheck/square": ["3"], "quizcheck/leaf": ["yes"], "quizcheck/product-state": ["True", "False"]}
    proc = subprocess.Popen([sys.executable, "-c", CLI, "quiz", "--plain", "--seed", "2"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        transcript = _answer_interactively(proc, wrong_then_right, stop_after=2)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with ProgressStore.open() as store:
        assert store.notices == []
        reviews = store.reviews()
    asked = [line.split("] ", 1)[1].strip() for line in transcript.splitlines() if "] quizcheck/" in line]
    assert [r.question_id for r in reviews] == asked[:2]
    for review in reviews:
        expected_answer = {"quizcheck/square": "3", "quizcheck/leaf": "yes",
                           "quizcheck/product-state": json.dumps({"is_leaf": "False", "requires_grad": "True"})}
        assert review.answer == expected_answer[review.question_id]
        assert review.correct == (review.question_id != "quizcheck/square")
    if "quizcheck/square" in asked[:2]:
        assert "That is x itself, not the derivative 2*x." in transcript
        assert "The answer: 6" in transcript


def test_progress_carries_over_to_the_next_process_and_moves_between_machines(course_dir, tmp_path, monkeypatch):
    first = _answer_stdin(["quiz", "--plain", "--seed", "1", "--count", "2"])
    asked = [line.split("] ", 1)[1].strip() for line in first.splitlines() if "] quizcheck/" in line]
    assert len(asked) == 2
    assert "Score: 2/2 right." in first

    # A new process asks only the question not asked yet: the right answers are not due for minutes.
    second = _answer_stdin(["quiz", "--plain", "--seed", "1"])
    asked_now = [line.split("] ", 1)[1].strip() for line in second.splitlines() if "] quizcheck/" in line]
    assert asked_now == sorted(set(RIGHT) - set(asked))
    assert "Nothing to review right now. The next one is due in 10 min." in _cli("quiz", "--plain").stdout

    stats = json.loads(_cli("stats", "--json").stdout)
    assert stats["totals"]["reviews"] == 3 and stats["totals"]["right"] == 3 and stats["totals"]["new"] == 0
    [lesson] = stats["lessons"]
    assert {row["question_id"]: row["last_result"] for row in lesson["questions"]} == {
        uid: "right" for uid in RIGHT}
    assert "quizcheck/product-state" in _cli("stats").stdout

    exported = tmp_path / "progress.json"
    assert "Exported 3 reviews" in _cli("stats", "--export", str(exported)).stdout
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path / "other-machine"))
    assert "Imported 3 new reviews, 3 cards and 0 lessons" in _cli("stats", "--import", str(exported)).stdout
    again = tmp_path / "again.json"
    _cli("stats", "--export", str(again))
    assert json.loads(again.read_text()) == json.loads(exported.read_text())
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "progress"}')
    refused = _cli("stats", "--import", str(bad), check=False)
    assert refused.returncode == 2 and "not a gradrepl progress export" in refused.stderr


def _answer_stdin(args: list[str]) -> str:
    """Run a quiz with every right answer on stdin, in the order the process asks."""
    proc = subprocess.Popen([sys.executable, "-c", CLI, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    transcript = []
    for line in proc.stdout:
        transcript.append(line)
        if line.startswith("[") and "] quizcheck/" in line:
            proc.stdin.write("".join(typed + "\n" for typed in RIGHT[line.split("] ", 1)[1].strip()]))
            proc.stdin.flush()
        if line.startswith("Score:"):
            proc.stdin.close()
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    return "".join(transcript)
