"""`gradrepl play`: every shipped lesson passes its own keys; a learner can play from a pipe."""

import json
import subprocess
from pathlib import Path

import pytest
from conftest import GRADREPL, ROOT

LESSON_FILES = sorted((ROOT / "lessons").glob("*.md"))


def play(*args: str, stdin: str = "", timeout: float = 110) -> subprocess.CompletedProcess:
    return subprocess.run([*GRADREPL, "play", *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@pytest.mark.parametrize("path", LESSON_FILES, ids=[p.stem for p in LESSON_FILES])
def test_every_shipped_lesson_passes_with_its_own_keys(path: Path):
    done = play(str(path), "--auto", "--json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    log = events(done.stdout)
    summary = log[-1]
    assert summary["type"] == "summary" and summary["ok"] and summary["finished"]
    grades = [e for e in log if e["type"] == "grade"]
    assert len(grades) == summary["questions"] >= 2
    assert all(g["correct"] for g in grades)
    assert not [e for e in log if e["type"] == "problem"]


def test_a_learner_plays_from_a_pipe_with_hints_wrong_answers_and_skips():
    answers = "\n".join([
        "hint",                                         # slope-at-two: a hint first
        "10",                                           # a named misconception
        "7",                                            # right
        "None",                                         # grad-before-backward: right
        "skip",                                         # derive: see the answer
        "x3 = torch.tensor(2.0, requires_grad=True)",   # task: the check fails, the attempt is undone
        "(x3 ** 3).backward()",                          # x3 is gone again, so this raises and is undone
        "x3 = torch.tensor(2.0, requires_grad=True); (x3 ** 3).backward()",
    ]) + "\n"
    done = play("first-gradient", stdin=answers)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "hint 1: Differentiate x² + 3x by hand" in out
    assert "[not right] 10 is the value of y" in out
    assert out.count("[right]") == 3
    assert "answer: 2*x + 3" in out
    assert out.count("The namespace is back as it was before your attempt") == 2
    assert "raised NameError" in out
    assert "finished: 3 of 4 right, 1 skipped" in out


def test_input_ending_early_stops_the_lesson_with_status_1():
    done = play("first-gradient", stdin="7\n")
    assert done.returncode == 1
    assert "stopped: 1 of 2 right" in done.stdout


def test_json_playback_reports_each_grade_and_a_summary():
    # Options are shuffled anew for a learner, so answer by their text: three wrong ones, then the right one.
    picks = ["Only the gradient from the second call", "None, because the second call resets it",
             "An error on the second backward()", "The sum of the gradients from both calls"]
    done = play("accumulation", "--json", stdin="\n".join(picks + ["x.grad.zero_()", "None"]) + "\n")
    log = events(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [log[0]["type"], log[-1]["type"]] == ["lesson", "summary"]
    quick = next(e for e in log if e["type"] == "question" and e["id"] == "accumulation/quick-check")
    assert sorted(o["text"] for o in quick["options"]) == sorted(picks)
    grades = [e for e in log if e["type"] == "grade" and e["id"] == "accumulation/quick-check"]
    assert [g["correct"] for g in grades] == [False, False, False, True]
    assert all(g["misconception"] for g in grades[:3])
    assert log[-1]["finished"] and log[-1]["correct"] == 3


def test_a_shown_number_picks_the_option_shown_there():
    from gradrepl.commands.play import _choice

    order = [2, 0, 1]  # option 2 of the lesson is shown first
    assert [_choice("1", order), _choice("2.", order), _choice("3)", order)] == [2, 0, 1]
    assert _choice("4", order) == "4" and _choice("some text", order) == "some text"


def test_resume_replays_the_steps_before_and_goes_on():
    done = play("training-loop", "--auto", "--json", "--from", "5")
    log = events(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    asked = [e["id"] for e in log if e["type"] == "question"]
    assert asked == ["training-loop/learned-slope", "training-loop/forgot-zero"]


def test_a_lesson_can_forbid_skipping(tmp_path):
    lesson = tmp_path / "strict.md"
    lesson.write_text("---\nid: strict\ntitle: Strict\nskippable: false\n---\n\n```question\nid: q\ntype: predict\n"
                      "prompt: 1 + 1?\nask: 1 + 1\n```\n", encoding="utf-8")
    done = play(str(lesson), stdin="skip\n2\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "This lesson cannot be skipped" in done.stdout
    assert "finished: 1 of 1 right" in done.stdout


def test_unknown_lesson_and_broken_lesson_are_usage_errors(tmp_path):
    done = play("no-such-lesson")
    assert done.returncode == 2 and "no lesson 'no-such-lesson'" in done.stderr and "tracking" in done.stderr
    broken = tmp_path / "broken.md"
    broken.write_text("---\nid: broken\ntitle: B\n---\n\n```question\nid: q\ntype: essay\nprompt: p\n```\n",
                      encoding="utf-8")
    done = play(str(broken))
    assert done.returncode == 2 and f"{broken}:8: question 'q': unknown type 'essay'" in done.stderr
