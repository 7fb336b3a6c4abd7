"""`gradrepl lint`: the shipped course is clean; each kind of broken lesson is caught with file and line."""

import json
import re
import subprocess
from pathlib import Path

from conftest import GRADREPL, ROOT


def lint(*args: str, timeout: float = 110) -> subprocess.CompletedProcess:
    return subprocess.run([*GRADREPL, "lint", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def lesson(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.md"
    path.write_text(f"---\nid: {name}\ntitle: {name}\n---\n\n{body}", encoding="utf-8")
    return path


def line_of(path: Path, text: str) -> int:
    return path.read_text(encoding="utf-8").splitlines().index(text) + 1


def test_the_shipped_course_is_clean():
    done = lint()
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""
    assert f"{len(list((ROOT / 'lessons').glob('*.md')))} lesson(s) checked: ok" in done.stderr


def test_every_kind_of_broken_lesson_is_reported_with_file_and_line(tmp_path):
    pre = lesson(tmp_path, "pre-holds", "```question\nid: t\ntype: task\nprompt: p\ncheck: 1 == 1\n"
                 "solution: |\n  a = 1\n```\n")
    own = lesson(tmp_path, "own-check", "```question\nid: t\ntype: task\nprompt: p\ncheck: a == 2\n"
                 "solution: |\n  a = 1\n```\n")
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
    done = lint(str(tmp_path), "--time-limit", "1")
    out = done.stdout
    assert done.returncode == 1
    assert f"{pre}:6: task 't': the check already holds before the solution runs" in out
    assert f"{own}:6: task 't': the solution does not pass its own check (a == 2)" in out
    assert f"{two}:6: question 'c': 2 options match the computed key" in out
    assert f"{rand}:6: question 'r': the key changed between two runs" in out
    took = re.search(rf"{re.escape(str(slow))}:6: a step took (\d+\.\d) s \(the limit is 1 s per step\)", out)
    assert took and float(took.group(1)) >= 1.5  # the measured time: more than the sleep under load
    assert f"{cell}:7: the cell raised ZeroDivisionError" in out
    assert f"{trap}:6: question 'q': the misconception '4' is the right answer" in out
    assert f"{wrong}:6: question 'd': the solution '3*x' is not the derivative autograd computes" in out
    assert f"{bad}:{line_of(bad, 'type: essay')}: question 'q': unknown type 'essay'" in out


def test_static_lint_needs_no_kernel_and_names_the_line(tmp_path):
    path = lesson(tmp_path, "syntax", "```python\nx = (1 +\n```\n\n```question\nid: q\ntype: predict\nprompt: p\n"
                  "ask: x\n```\n")
    done = lint("--static", str(path))
    assert done.returncode == 1
    assert done.stdout.strip() == f"{path}:7: python cell: syntax error: '(' was never closed"


def test_json_report(tmp_path):
    good = lesson(tmp_path, "fine", "```question\nid: q\ntype: predict\nprompt: p\nask: 1 + 1\n"
                  "hints:\n  - h1\n  - h2\n```\n")
    done = lint("--json", str(good))
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["ok"] and report["lessons"] == ["fine"] and report["problems"] == []


def test_missing_file_is_a_usage_error(tmp_path):
    done = lint(str(tmp_path / "nope.md"))
    assert done.returncode == 2 and "no such lesson file" in done.stderr


HINTS = "hints:\n  - first\n  - second\n"


def test_questions_that_are_not_worth_asking_are_reported(tmp_path):
    one_hint = lesson(tmp_path, "one-hint", "```question\nid: q\ntype: predict\nprompt: p\nask: 1 + 1\n"
                      "hints:\n  - only one\n```\n")
    told = lesson(tmp_path, "told", "Two and two make 4, remember.\n\n```question\nid: q\ntype: predict\n"
                  f"prompt: What is 2 + 2?\nask: 2 + 2\n{HINTS}```\n")
    printed = lesson(tmp_path, "printed", "```python\nw = 3.0291\nprint(f'w = {w:.3f}')\n```\n\n```question\n"
                     f"id: q\ntype: numeric\nprompt: w?\nask: w\ntolerance: 0.1\n{HINTS}```\n")
    solved = lesson(tmp_path, "solved", "Clear it with `x.grad.zero_()`.\n\n```question\nid: t\ntype: task\n"
                    "prompt: p\nsetup: |\n  x = torch.tensor(1.0, requires_grad=True)\n  (x * 2).backward()\n"
                    "check: x.grad.item() == 0\nsolution: |\n  x.grad.zero_()\n" + HINTS + "```\n")
    no_bug = lesson(tmp_path, "no-bug", "```question\nid: t\ntype: task\nprompt: fix it\ncheck: a == 2\n"
                    "starter: |\n  a = 2\nsolution: |\n  a = 2\n" + HINTS + "```\n")
    fine = lesson(tmp_path, "fine", "Add the numbers.\n\n```question\nid: q\ntype: predict\nprompt: 2 + 2?\n"
                  f"ask: 2 + 2\n{HINTS}```\n")
    done = lint(str(tmp_path))
    out = done.stdout
    assert done.returncode == 1
    assert f"{one_hint}:6: question 'q': 1 hint(s); give at least 2" in out
    assert f"{told}:8: question 'q': the text just above gives the answer away ('4')" in out
    assert f"{printed}:11: question 'q': the text just above gives the answer away ('3.029')" in out
    assert f"{solved}:8: question 't': the text just above gives the answer away ('x.grad.zero_()')" in out
    assert f"{no_bug}:6: task 't': the starter code already passes the check" in out
    assert str(fine) not in out
