"""`gradrepl lint`: the shipped course is clean; each kind of broken lesson is caught with file and line."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import lint
from tests.support.lesson_files import HINTS, ONE_PLUS_ONE, lesson
from tests.support.paths import GRADREPL, ROOT


def line_of(path: Path, text: str) -> int:
    return path.read_text(encoding="utf-8").splitlines().index(text) + 1


@pytest.mark.timeout(900)  # lint plays all 23 lessons twice and attacks every task: slower than 120 s on a busy machine
def test_the_shipped_course_is_clean():
    done = lint(timeout=600)  # every task is attacked too: a safety net, not a speed test
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""
    assert f"{len(list((ROOT / 'lessons').glob('*.md')))} lesson(s) checked: ok" in done.stderr


def test_every_kind_of_broken_lesson_is_reported_with_file_and_line(tmp_path):
    pre = lesson(tmp_path, "pre-holds", "```question\nid: t\ntype: task\nprompt: p\nsetup: |\n  a = 1\n"
                 f"{CHECK_A}solution: |\n  a = 1\n```\n")
    raises = lesson(tmp_path, "raises", "```question\nid: t\ntype: task\nprompt: p\n"
                    f"{CHECK_A}solution: |\n  a = 1 / 0\n```\n")
    two = lesson(tmp_path, "two-match", "```question\nid: c\ntype: choice\nprompt: p\nask: 1 + 1\noptions:\n"
                 "  - text: two\n    answer: \"2\"\n  - text: also two\n    answer: \"2.0\"\n    feedback: f\n```\n")
    rand = lesson(tmp_path, "unstable", "```question\nid: r\ntype: predict\nprompt: p\nask: torch.rand(1).item()\n"
                  "```\n")
    slow = lesson(tmp_path, "slow", "```python\nimport time\ntime.sleep(1.5)\n```\n\n```question\nid: q\n"
                  "type: predict\nprompt: p\nask: 1\n```\n")
    cell = lesson(tmp_path, "cell-raises", "```python\n1 / 0\n```\n\n```question\nid: q\ntype: predict\n"
                  "prompt: p\nask: 1\n```\n")
    trap = lesson(tmp_path, "trap-is-key", "```question\nid: q\ntype: predict\nprompt: p\nask: 2 + 2\n"
                  "misconceptions:\n  - answer: \"4\"\n    feedback: f\n```\n")
    wrong = lesson(tmp_path, "wrong-derive", "```question\nid: d\ntype: derive\nprompt: p\nfunction: x**3\n"
                   "variable: x\nsolution: 3*x\n```\n")
    bad = lesson(tmp_path, "bad-type", "```question\nid: q\ntype: essay\nprompt: p\n```\n")
    unmade = lesson(tmp_path, "given-not-run", "```question\nid: g\ntype: predict\nprompt: p\ngiven: |\n"
                    "  g = 2 * 3\nask: g\n```\n")  # a given is shown, never run: no answer could be right
    done = lint(str(tmp_path), "--time-limit", "1")
    out = done.stdout
    assert done.returncode == 1
    assert f"{pre}:6: task 't': the check already holds before the solution runs" in out
    assert f"{raises}:6: task 't': the solution raised ZeroDivisionError: division by zero" in out
    assert f"{two}:6: question 'c': 2 options match the computed key" in out
    assert f"{rand}:6: question 'r': the key changed between two runs" in out
    took = re.search(rf"{re.escape(str(slow))}:6: a step took (\d+\.\d) s \(the limit is 1 s per step\)", out)
    assert took and float(took.group(1)) >= 1.5  # the measured time: more than the sleep under load
    assert f"{cell}:7: the cell raised ZeroDivisionError" in out
    assert f"{trap}:6: question 'q': the misconception '4' is the right answer" in out
    assert f"{wrong}:6: question 'd': the solution '3*x' is not the derivative autograd computes" in out
    assert f"{bad}:{line_of(bad, 'type: essay')}: question 'q': unknown type 'essay'" in out
    assert f"{unmade}:6: question 'g': its key raises NameError (name 'g' is not defined)" in out


def test_static_lint_needs_no_kernel_and_names_the_line(tmp_path):
    path = lesson(tmp_path, "syntax", "```python\nx = (1 +\n```\n\n```question\nid: q\ntype: predict\nprompt: p\n"
                  "ask: x\n```\n")
    done = lint("--static", str(path))
    assert done.returncode == 1
    assert done.stdout.strip() == f"{path}:7: python cell: syntax error: '(' was never closed"


def test_a_cell_that_runs_a_file_is_refused_by_lint_and_play(tmp_path):
    """A lesson is anyone's download: a `%run FILE` cell (or `!cmd`) would read a file or run a program
    when the learner plays it. Lint and the parser refuse it, naming the line; other magics stay."""
    path = lesson(tmp_path, "reads", "```python\n%time x = 1\n```\n\n```python\n%run /etc/hostname\n```\n\n"
                  "```python\n!cat /etc/hostname\n```\n\n" + ONE_PLUS_ONE)
    done = lint("--static", str(path))
    assert done.returncode == 1, done.stdout + done.stderr
    problems = done.stdout.strip().splitlines()
    assert problems == [f"{path}:11: python cell: %run reads a file and runs it, and a lesson's cells may not read "
                        "files or run programs: put the code in the cell itself",
                        f"{path}:15: python cell: !cat runs a program, and a lesson's cells may not read "
                        "files or run programs: put the code in the cell itself"], problems
    played = subprocess.run([*GRADREPL, "play", str(path)], input="2\n", capture_output=True, text=True,
                            timeout=110, cwd=ROOT)
    assert played.returncode == 2 and "%run reads a file" in played.stderr, played.stdout + played.stderr


def test_json_report(tmp_path):
    good = lesson(tmp_path, "fine", "```question\nid: q\ntype: predict\nprompt: p\nask: 1 + 1\n"
                  "hints:\n  - h1\n  - h2\n```\n")
    done = lint("--json", str(good))
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["ok"] and report["lessons"] == ["fine"] and report["problems"] == []


def test_missing_file_is_a_usage_error(tmp_path):
    done = lint(str(tmp_path / "nope.md"))
    assert done.returncode == 2 and "no such lesson file" in done.stderr


CHECK_A = "checks:\n  - state: a\n    message: m\n"


def test_questions_that_are_not_worth_asking_are_reported(tmp_path):
    one_hint = lesson(tmp_path, "one-hint", "```question\nid: q\ntype: predict\nprompt: p\nask: 1 + 1\n"
                      "hints:\n  - only one\n```\n")
    told = lesson(tmp_path, "told", "Two and two make 4, remember.\n\n```question\nid: q\ntype: predict\n"
                  f"prompt: What is 2 + 2?\nask: 2 + 2\n{HINTS}```\n")
    printed = lesson(tmp_path, "printed", "```python\nw = 3.0291\nprint(f'w = {w:.3f}')\n```\n\n```question\n"
                     f"id: q\ntype: numeric\nprompt: w?\nask: w\ntolerance: 0.1\n{HINTS}```\n")
    solved = lesson(tmp_path, "solved", "Clear it with `x.grad.zero_()`.\n\n```question\nid: t\ntype: task\n"
                    "prompt: p\nsetup: |\n  x = torch.tensor(1.0, requires_grad=True)\n  (x * 2).backward()\n"
                    "checks:\n  - state: x\n    facts: [grad]\n    message: m\nsolution: |\n  x.grad.zero_()\n"
                    + HINTS + "```\n")
    no_bug = lesson(tmp_path, "no-bug", "```question\nid: t\ntype: task\nprompt: fix it\n" + CHECK_A +
                    "starter: |\n  a = 2\nsolution: |\n  a = 2\n" + HINTS + "```\n")
    fine = lesson(tmp_path, "fine", "Add the numbers.\n\n```question\nid: q\ntype: predict\nprompt: 2 + 2?\n"
                  f"ask: 2 + 2\n{HINTS}```\n")
    done = lint(str(tmp_path))
    out = done.stdout
    assert done.returncode == 1
    assert f"{one_hint}:6: question 'q': 1 hint(s); give at least 2" in out
    assert f"{told}:8: question 'q': the prose at line 6 gives the answer away ('4')" in out
    assert f"{printed}:11: question 'q': the output of the cell at line 6 gives the answer away ('3.029')" in out
    assert f"{solved}:8: question 't': the prose at line 6 gives the answer away ('x.grad.zero_()')" in out
    assert f"{no_bug}:6: task 't': the starter code already passes the check" in out
    assert str(fine) not in out


TASK = ("```question\nid: t\ntype: task\nprompt: {prompt}\nsetup: |\n{setup}\nchecks:\n{checks}"
        "solution: |\n{solution}\n" + HINTS + "```\n")


def task(prompt: str, setup: str, checks: str, solution: str, shown: bool = True) -> str:
    """A task lesson; ``shown``: its setup is shown in a cell first (lint asks that of a setup's names)."""
    indent = lambda code: "\n".join("  " + line for line in code.splitlines())  # noqa: E731
    body = TASK.format(prompt=prompt, setup=indent(setup), checks=checks, solution=indent(solution))
    return f"```python\n{setup}\n```\n\n{body}" if shown else body


def test_a_task_that_a_fix_fixing_nothing_passes_fails_lint(tmp_path):
    # Each task's checks miss what its prompt asks, so one of lint's generic moves is accepted.
    assign = lesson(tmp_path, "assign", task(
        "Fill x.grad with d(x**3)/dx at 2 (that is 12) by calling backward.", "x = torch.tensor(2.0, requires_grad=True)",
        "  - state: x\n    facts: [grad]\n    message: x.grad is not 12.\n", "(x ** 3).backward()"))
    replace = lesson(tmp_path, "replace", task(
        "Make w, the tensor that is there, require grad.", "w = torch.ones(3)",
        "  - state: w\n    facts: [requires_grad]\n    message: w does not require grad.\n", "w.requires_grad_(True)"))
    half = lesson(tmp_path, "half", task(
        "Freeze the layer lin.", "lin = nn.Linear(2, 1)",
        "  - state: lin.weight\n    facts: [requires_grad]\n    message: lin.weight still requires grad.\n",
        "lin.requires_grad_(False)"))
    first = lesson(tmp_path, "first", task(
        "Freeze the layer lin.", "lin = nn.Linear(2, 1)",
        "  - state: lin\n    facts: [requires_grad]\n    message: lin still requires grad.\n",
        "lin.requires_grad_(False)"))
    done = lint(str(tmp_path), timeout=300)
    out = done.stdout
    assert done.returncode == 1, out
    assert f"{assign}:10: task 't': a fix that fixes nothing is accepted (assign the solution's final values and " \
           ".grad directly):\n      x.grad = torch.tensor(12.0, dtype=torch.float32)" in out
    assert f"{replace}:10: task 't': a fix that fixes nothing is accepted (replace w with a fresh object holding " \
           "the solution's state):\n      w = torch.tensor([1.0, 1.0, 1.0], dtype=torch.float32, requires_grad=True)" \
           in out
    # A check on the first of several tensors the solution changes: lin.bias goes unchecked.
    assert f"{half}:10: task 't': the solution changes lin.bias, and no check compares it" in out
    # Checked on both, the "fix only the first" move is refused and the lesson is clean.
    assert str(first) not in out, out



def test_a_task_whose_hidden_setup_binds_a_name_shown_otherwise_fails_static_lint(tmp_path):
    # issue 22: the screen showed one net (and x), the task's hidden setup made another
    shown = "```python\nnet = nn.Linear(3, 2)\nx = torch.tensor(2.0)\n```\n\n"
    body = task("Make J the Jacobian of net at x.", "net = nn.Sequential(nn.Linear(3, 2), nn.Tanh())\n"
                "x = torch.tensor(2.0)", "  - state: J\n    facts: [value]\n    message: J is not it.\n",
                "J = torch.func.jacrev(net)(x)", shown=False)
    path = lesson(tmp_path, "hidden", shown + body)
    out = lint("--static", str(path)).stdout
    assert "its hidden setup binds net by 'net = nn.Sequential(nn.Linear(3, 2), nn.Tanh())'" in out, out
    assert "binds x" not in out, out  # x is bound on screen by the very statement the setup runs
    shown_too = lesson(tmp_path, "shown", "```python\nnet = nn.Sequential(nn.Linear(3, 2), nn.Tanh())\n"
                       "x = torch.tensor(2.0)\n```\n\n" + body)
    assert "hidden setup" not in lint("--static", str(shown_too)).stdout
