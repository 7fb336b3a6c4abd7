"""`gradrepl play`: every shipped lesson passes its own keys; a learner can play from a pipe."""

import json
import os
import subprocess
from pathlib import Path

import pytest
from tests.support.paths import GRADREPL, ROOT
from tests.support.lesson_files import HELP_LESSON, ONE_PLUS_ONE, lesson as lesson_file

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
        "",                                             # an empty line ends a cell
        "(x3 ** 3).backward()",                          # x3 is gone again, so this raises and is undone
        "",
        "x3 = torch.tensor(2.0, requires_grad=True)",   # a cell of two lines: one attempt
        "(x3 ** 3).backward()",
        "",
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
    # Right after a hint, right after a wrong try, and right at once are told apart.
    assert "finished: 4 question(s): 1 right at the first try, 2 right after hints or wrong tries, 1 skipped" in out


def test_input_ending_early_stops_the_lesson_with_status_1():
    done = play("first-gradient", stdin="7\n")
    assert done.returncode == 1
    assert "stopped: 2 question(s): 1 right at the first try" in done.stdout


def test_json_playback_reports_each_grade_and_a_summary():
    # Options are shuffled anew for a learner, so answer by their text: three wrong ones, then the right one.
    picks = ["Only the gradient from the second call", "None, because the second call resets it",
             "An error on the second backward()", "The sum of the gradients from both calls"]
    done = play("accumulation", "--json", stdin="\n".join(picks + ["x.grad.zero_()", "", "None"]) + "\n")
    log = events(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [log[0]["type"], log[-1]["type"]] == ["lesson", "summary"]
    quick = next(e for e in log if e["type"] == "question" and e["id"] == "accumulation/quick-check")
    assert sorted(o["text"] for o in quick["options"]) == sorted(picks)
    grades = [e for e in log if e["type"] == "grade" and e["id"] == "accumulation/quick-check"]
    assert [g["correct"] for g in grades] == [False, False, False, True]
    assert all(g["misconception"] for g in grades[:3])
    assert log[-1]["finished"] and log[-1]["correct"] == 3
    assert (log[-1]["first_try"], log[-1]["after_help"]) == (2, 1)



def test_resume_replays_the_steps_before_and_goes_on():
    done = play("training-loop", "--auto", "--json", "--from", "6")
    log = events(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    asked = [e["id"] for e in log if e["type"] == "question"]
    assert asked == ["training-loop/learned-slope", "training-loop/forgot-zero"]


# Two cells, each followed by a question that reads the names the cell made.
TWO_CELLS = """```python
a = torch.tensor(1.0)
```

```question
id: first
type: predict
prompt: What is a + 1?
ask: (a + 1).item()
```

```python
b = a * 3
```

```question
id: second
type: predict
prompt: What is b?
ask: b.item()
```
"""


@pytest.mark.parametrize("start, asked", [(0, ["first", "second"]), (2, ["second"])])
def test_from_starts_at_its_step_over_finished_ones_with_the_names_before_it(start, asked, tmp_path,
                                                                            gradrepl_home):
    path = lesson_file(tmp_path, "two-cells", TWO_CELLS)
    stopped = play(str(path), stdin="2\n")  # steps 0-2 finished, then the input ends at the second question
    assert stopped.returncode == 1 and "[right]" in stopped.stdout, stopped.stdout + stopped.stderr
    again = play(str(path), "--json", "--from", str(start), stdin="3\n" if start else "2\n3\n")
    log = events(again.stdout)
    assert again.returncode == 0, again.stdout + again.stderr
    assert log[0]["start"] == start
    shown = [e["step"] for e in log if e["type"] in ("cell", "question")]
    assert shown == list(range(start, 4))  # every step from START on is played, none skipped as finished
    assert [e["id"] for e in log if e["type"] == "question"] == [f"two-cells/{q}" for q in asked]
    assert all(e["correct"] for e in log if e["type"] == "grade") and log[-1]["finished"]


def test_a_done_lesson_taken_again_and_left_half_way_stays_done(tmp_path, gradrepl_home):
    from gradrepl.tutor.progress import ProgressStore, lesson_state

    path = lesson_file(tmp_path, "two-cells", TWO_CELLS)
    finished = play(str(path), stdin="2\n3\n")
    assert finished.returncode == 0, finished.stdout + finished.stderr
    for args in ((), ("--from", "2")):  # opened again, from its start or a step, then the input ends at a question
        again = play(str(path), *args, stdin="")
        assert again.returncode == 1, again.stdout + again.stderr
        with ProgressStore.open() as store:
            assert lesson_state(store.lesson("two-cells", "1"), 4) == "done", args


def test_a_lesson_can_forbid_skipping(tmp_path):
    lesson = tmp_path / "strict.md"
    lesson.write_text("---\nid: strict\ntitle: Strict\nskippable: false\n---\n\n" + ONE_PLUS_ONE, encoding="utf-8")
    done = play(str(lesson), stdin="skip\n2\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "This lesson cannot be skipped" in done.stdout
    assert "finished: 1 question(s): 1 right at the first try" in done.stdout


def test_unknown_lesson_and_broken_lesson_are_usage_errors(tmp_path):
    done = play("no-such-lesson")
    assert done.returncode == 2 and "no lesson 'no-such-lesson'" in done.stderr and "tracking" in done.stderr
    broken = tmp_path / "broken.md"
    broken.write_text("---\nid: broken\ntitle: B\n---\n\n```question\nid: q\ntype: essay\nprompt: p\n```\n",
                      encoding="utf-8")
    done = play(str(broken))
    assert done.returncode == 2 and f"{broken}:8: question 'q': unknown type 'essay'" in done.stderr


def test_a_lesson_that_is_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "waits.md"
    os.mkfifo(fifo)
    done = play(str(fifo), timeout=60)
    assert done.returncode == 2 and "named pipe" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_multi_line_solution_is_typed_as_one_attempt_ended_by_a_blank_line():
    # The course's own solution, typed as a learner types it: the block goes on past its first body line.
    solution = ["with torch.no_grad():", "    w -= lr * w.grad", "    b -= lr * b.grad", "w.grad.zero_()",
                "b.grad.zero_()", ""]
    done = play("training-loop", "--from", "2", stdin="\n".join(solution + ["quit"]) + "\n")
    out = done.stdout
    assert "[right] Done: the check holds." in out, out + done.stderr
    assert "[not right]" not in out and "stopped: 2 question(s): 1 right at the first try" in out


def test_play_keeps_progress_in_the_store_learn_and_lessons_read(gradrepl_home):
    from gradrepl.tutor.progress import ProgressStore

    stopped = play("first-gradient", stdin="7\n")  # the first question right, then the input ends
    assert stopped.returncode == 1
    listed = subprocess.run([*GRADREPL, "lessons", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    row = next(r for r in json.loads(listed.stdout) if r["id"] == "first-gradient")
    assert row["progress"]["state"] == "started" and row["progress"]["current_step"] > 0

    # Played again, it goes on at the second question: the first is not asked twice.
    rest = play("first-gradient", "--json", stdin="None\nskip\nx3 = torch.tensor(2.0, requires_grad=True); "
                                                  "(x3 ** 3).backward()\n")
    log = events(rest.stdout)
    assert rest.returncode == 0, rest.stdout + rest.stderr
    assert log[0]["start"] == row["progress"]["current_step"]
    asked = [e["id"] for e in log if e["type"] == "question"]
    assert asked == ["first-gradient/grad-before-backward", "first-gradient/derive-the-slope",
                     "first-gradient/cube-task"]
    assert "Going on at step" in rest.stderr
    listed = subprocess.run([*GRADREPL, "lessons"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert "first-gradient" in listed.stdout and "; done)" in listed.stdout.split("first-gradient")[1].splitlines()[0]
    # Each first verdict is a quiz review, as in learn; the skipped question was never answered.
    with ProgressStore.open() as store:
        reviewed = {r.question_id: r.correct for r in store.reviews()}
    assert reviewed == {"first-gradient/slope-at-two": True, "first-gradient/grad-before-backward": True,
                        "first-gradient/cube-task": True}


def test_auto_neither_reads_nor_writes_progress(gradrepl_home):
    done = play("first-gradient", "--auto", "--json")
    assert done.returncode == 0
    assert not (gradrepl_home / "progress.sqlite3").exists()


def test_auto_says_what_its_verdicts_trust_in_its_output_and_help():
    # --auto is the lesson's own test: every kernel it reads ran the lesson's code, and it says so.
    said = "--auto trusts the lesson's own code"
    done = play("tracking", "--auto")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(f"gradrepl: {said}"), done.stdout[:300]
    quiet = play("tracking", "--auto", "--json")
    assert said in quiet.stderr and all(json.loads(line) for line in quiet.stdout.splitlines())
    helped = subprocess.run([*GRADREPL, "play", "--help"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert said in " ".join(helped.stdout.split())
    assert "fresh kernel your code never ran in" in " ".join(helped.stdout.split())


def test_a_blank_line_inside_a_cell_is_echoed_without_a_stray_prompt():
    """gradient-check's first cell has a blank line after its def: Python shows `...` there, not `>>> `."""
    done = play("gradient-check", "--auto")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert "def f(t):" in done.stdout
    assert not [n for n, line in enumerate(lines) if line.rstrip() == ">>>"], done.stdout[:3000]




def test_a_lesson_cell_that_calls_help_prints_the_page_and_goes_on(tmp_path):
    lesson = tmp_path / "helpful.md"
    lesson.write_text(HELP_LESSON, encoding="utf-8")
    done = play(str(lesson), stdin="2\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Multiply t by three." in done.stdout and "Traceback" not in done.stderr
    assert "finished: 1 question(s): 1 right at the first try" in done.stdout


def task_steps() -> list[tuple[str, int, object]]:
    """Every task exercise of the course: (lesson id, its step, the question)."""
    from gradrepl.tutor.lesson import load_course

    return [(lesson.id, index, step.question) for lesson in load_course(str(ROOT / "lessons")).lessons
            for index, step in enumerate(lesson.steps) if step.question is not None
            and step.question.type == "task"]


TASKS = task_steps()


@pytest.mark.parametrize("n", range(len(TASKS)), ids=[question.uid for _lesson, _index, question in TASKS])
def test_every_task_takes_its_multi_line_solution_typed_or_pasted_on_a_terminal(n, gradrepl_home):
    from tests.support.pty import PlainOnPty

    from gradrepl.plain.lesson_input import CELL_HOW

    lesson_id, index, question = TASKS[n]
    solution = question.solution.strip("\n")
    pasted = n % 2 == 1  # every other task pasted (bracketed paste), the rest typed key by key
    # A pty answers no cursor-position request (a terminal window does): prompt_toolkit is told not to ask.
    env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1"}
    play_ = PlainOnPty("play", lesson_id, "--from", str(index), plain=False, cwd=ROOT, env=env)
    try:
        play_.read_until(CELL_HOW.encode())
        play_.read_until(b">>>")
        if question.starter:  # offered in the prompt to edit: this learner clears it and enters the fix
            starter = question.starter.rstrip("\n")
            play_.read_until(starter.splitlines()[-1].split()[-1].encode())
            play_.type("\x7f" * len(starter))
        play_.read_until(b"\x1b[?25h")  # the prompt is drawn and the cursor shown: it reads keys now
        if pasted:
            play_.type("\x1b[200~" + solution + "\n\x1b[201~" + "\r")
        else:
            play_.type("".join(line + "\r" for line in solution.splitlines()) + "\r")
        seen = play_.read_until(b"] ", timeout=120)
        seen += play_.read_until(b"\n", timeout=30)
        assert b"[right] Done: the check holds." in seen, seen[-3000:].decode(errors="replace")
    finally:
        play_.close()


DERIVE = '''---
id: slopes
title: A derivative
version: 1
---

```question
id: d
type: derive
prompt: Write dy/dx for y = x**2 + 3*x.
function: x**2 + 3*x
variable: x
solution: 2*x + 3
```

```question
id: e
type: derive
prompt: Write dy/dx for y = x**2 + 3*x again.
function: x**2 + 3*x
variable: x
solution: 2*x + 3
```
'''


def test_a_derivative_in_a_form_the_reader_misses_is_read_or_asked_again_never_stored_wrong(tmp_path, gradrepl_home):
    from gradrepl.tutor.progress import ProgressStore

    lesson = tmp_path / "slopes.md"
    lesson.write_text(DERIVE, encoding="utf-8")
    done = play(str(lesson), stdin="dy/dx = 2x + 3\n2 + (\n2·x + 3\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("[right]") == 2 and "[not right]" not in done.stdout, done.stdout
    assert "[try again]" in done.stdout  # "2 + (" cannot be read: asked again, not graded
    with ProgressStore.open() as store:
        assert {(r.question_id, r.correct) for r in store.reviews()} == {("slopes/d", True), ("slopes/e", True)}


EMPTY_GRAD = """```python
w = torch.tensor([1.0, 2.0], requires_grad=True)
```

```question
id: empty
type: predict
prompt: What is w.grad before any backward?
ask: w.grad
```

""" + ONE_PLUS_ONE


def test_an_answer_that_cannot_be_read_is_no_try_and_a_wrong_one_before_the_right_one_is(tmp_path):
    # torch.zeros(2) is a wrong belief (graded, told why); "2 + (" cannot be read (asked again, no try).
    done = play(str(lesson_file(tmp_path, "empty", EMPTY_GRAD)), stdin="torch.zeros(2)\nNone\n2 + (\n2\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[not right] .grad is None here, not zeros: it holds no tensor until a backward pass writes one" in done.stdout
    assert done.stdout.count("[try again]") == 1 and done.stdout.count("[right]") == 2
    assert ("finished: 2 question(s): 1 right at the first try, 1 right after hints or wrong tries, 0 skipped; "
            "1 answer that could not be read (asked again, not counted as a try)") in done.stdout


PAST = """```python
a_rather_long_tensor_name = torch.randn(3, 4, requires_grad=True)
another_long_tensor_name = (a_rather_long_tensor_name * 2).sum()
another_long_tensor_name.backward()
```

```python
%at -1
```

""" + ONE_PLUS_ONE


def test_at_tables_fit_the_terminal_play_runs_in(tmp_path):
    done = subprocess.run([*GRADREPL, "play", str(lesson_file(tmp_path, "past", PAST))], input="2\n", capture_output=True,
                          text=True, timeout=110, cwd=ROOT, env={**os.environ, "COLUMNS": "70"})
    assert done.returncode == 0, done.stdout + done.stderr
    table = done.stdout.split("%at -1", 1)[1].split("? 1 + 1?", 1)[0]
    assert "a_rather_long_tensor_name" in table
    assert max(len(line) for line in table.splitlines()) <= 70, table


GRAPHED = '''---
id: graphed
title: A graph to look at
version: 1
---

```python
x = torch.tensor(2.0, requires_grad=True)
y = (x * 3).sum()
```

```question
id: q
type: predict
prompt: What is y?
ask: y.item()
```
'''


def test_a_percent_command_at_the_prompt_runs_in_the_lesson_kernel_and_the_question_is_asked_again(tmp_path,
                                                                                                  gradrepl_home):
    from gradrepl.tutor.progress import ProgressStore

    lesson = tmp_path / "graphed.md"
    lesson.write_text(GRAPHED, encoding="utf-8")
    done = play(str(lesson), stdin="%graph y\n6\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SumBackward0" in done.stdout and "MulBackward0" in done.stdout  # the graph of the lesson's y
    assert "[not right]" not in done.stdout and "finished: 1 question(s): 1 right at the first try" in done.stdout
    with ProgressStore.open() as store:
        assert [r.correct for r in store.reviews("graphed/q")] == [True]


TASK_THEN_QUESTION = '''---
id: task-then-question
title: A task, then a question
version: 1
---

```question
id: t
type: task
prompt: Make y hold twice x, where x is 2.
solution: |
  y = x * 2
checks:
  - state: y
    facts: [value]
    message: y is not twice x.
setup: |
  x = torch.tensor(2.0, requires_grad=True)
hints:
  - first
  - second
```

```question
id: q
type: numeric
prompt: And y + 1?
ask: (y + 1).item()
tolerance: 0.01
hints:
  - first
  - second
```
'''


def test_after_a_code_task_and_a_percent_command_one_enter_submits_an_answer(tmp_path, gradrepl_home):
    from tests.support.pty import PlainOnPty

    lesson = tmp_path / "task-then-question.md"
    lesson.write_text(TASK_THEN_QUESTION, encoding="utf-8")
    env = {**os.environ, "PROMPT_TOOLKIT_NO_CPR": "1"}
    play_ = PlainOnPty("play", str(lesson), plain=False, cwd=ROOT, env=env)
    try:
        play_.read_until(b">>>")
        play_.read_until(b"\x1b[?25h")
        play_.type("y = x * 2\r\r")
        play_.read_until(b"[right] Done: the check holds.")
        play_.read_until(b"answer>")
        play_.read_until(b"\x1b[?25h")
        play_.type("%tensors\r")  # a display command runs, and the question is asked again
        play_.read_until(b"answer>")
        play_.read_until(b"\x1b[?25h")
        play_.type("5\r")  # one Enter submits (it took two: the task's multi-line prompt stayed the default)
        seen = play_.read_until(b"finished: ", timeout=60)
        assert b"[right]" in seen, seen[-2000:].decode(errors="replace")
    finally:
        play_.close()


def test_a_code_running_command_at_a_question_prompt_is_refused_and_changes_nothing(tmp_path):
    lesson = tmp_path / "task-then-question.md"
    lesson.write_text(TASK_THEN_QUESTION, encoding="utf-8")
    # %time at the question ran in the lesson's kernel: the patch stayed, and the next cells saw it
    done = play(str(lesson), stdin="y = x * 2\n\n%time y = torch.tensor(5.0)\n%trace y.sum()\n%trace y\n5\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "%time runs code or changes the kernel, which a question prompt does not" in done.stdout, done.stdout
    assert "%trace with a statement runs it, which a question prompt does not" in done.stdout, done.stdout
    assert "MulBackward0" in done.stdout  # %trace NAME shows y's graph
    assert "finished: 2 question(s): 2 right at the first try" in done.stdout, done.stdout


# At a task's prompt a %time STMT line is an attempt, judged as its statement (tasks.ran_code): it was refused
# in words that said a question prompt runs no code, while the same prompt runs the code typed there.
def test_a_percent_time_statement_at_a_task_prompt_is_the_attempt(tmp_path, gradrepl_home):
    lesson = tmp_path / "task-then-question.md"
    lesson.write_text(TASK_THEN_QUESTION, encoding="utf-8")
    done = play(str(lesson), stdin="%time y = x * 2\n5\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "which a question prompt does not" not in done.stdout, done.stdout
    assert "Wall time" in done.stdout and "[right] Done: the check holds." in done.stdout, done.stdout
    assert "finished: 2 question(s): 2 right at the first try" in done.stdout, done.stdout


PREDICTED = '''---
id: predicted
title: A prediction
version: 1
---

```question
id: q
type: numeric
prompt: What is x.grad after y.backward()?
setup: |
  x = torch.tensor(3.0, requires_grad=True)
  y = x ** 2 + x
code: |
  y.backward()
ask: x.grad.item()
tolerance: 0.01
hints:
  - d/dx of x² + x
```
'''


def test_the_panel_at_a_question_prompt_shows_the_start_not_the_answer(tmp_path, gradrepl_home):
    """%tensors at a prediction's prompt shows the question's start: its code runs (for the key too) only
    once the learner has answered, so the answer is not read off the panel (the blind play-through)."""
    lesson = tmp_path / "predicted.md"
    lesson.write_text(PREDICTED, encoding="utf-8")
    done = play(str(lesson), stdin="%tensors\n7\n")
    assert done.returncode == 0, done.stdout + done.stderr
    before_answer = done.stdout.split("[right]")[0]
    rows = [line.split() for line in before_answer.splitlines() if line[2:4] == "x "]
    assert rows and all("7" not in row for row in rows), before_answer
    assert any("None" in row for row in rows), before_answer
    assert "finished: 1 question(s): 1 right at the first try" in done.stdout, done.stdout
