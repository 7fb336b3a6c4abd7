"""The lesson loader: the shipped course, the model, and bad files reported with file and line."""

from pathlib import Path

import pytest

from gradrepl.tutor import task_checks
from gradrepl.tutor.lesson import LessonFormatError, load_course, load_lesson, parse_lesson, replay_sources
from tests.support.paths import ROOT

LESSONS = ROOT / "lessons"

GOOD = '''---
id: demo
title: "Demo: a lesson"
version: 2
requires: [other]
language: hi
---

# त्वरित जाँच

Some prose.

```python
x = torch.tensor(2.0, requires_grad=True)
```

```text
not a cell: shown as prose
```

```question
id: slope
type: predict
prompt: What is x.grad?
code: |
  (x ** 2).backward()
ask: x.grad
hints: [Differentiate x squared.]
misconceptions:
  - answer: "2"
    feedback: That is x, not the slope.
```

```question
id: pick
type: choice
prompt: Pick one.
options:
  - text: right
    correct: true
  - text: wrong
    feedback: the misconception
```

```question
id: make-z
type: task
prompt: Make z.
checks:
  - state: z
    message: z is not 3.
solution: |
  z = 3
```

```python
w = z + 1
```

```question
id: last
type: numeric
prompt: w?
ask: w
tolerance: 0.5
```
'''


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(text: str) -> list[str]:
    with pytest.raises(LessonFormatError) as caught:
        parse_lesson(text, "les.md")
    return [str(p) for p in caught.value.problems]


def test_shipped_course_loads_with_enough_lessons_and_questions():
    course = load_course(LESSONS)
    assert course.problems == []
    assert len(course.lessons) >= 10
    for lesson in course.lessons:
        assert len(lesson.questions) >= 2, lesson.id
    uids = [q.uid for q in course.questions]
    assert len(uids) == len(set(uids))
    assert course.get("accumulation").language == "hi"
    assert "त्वरित जाँच" in course.get("accumulation").title_in("hi-IN")


def test_shipped_course_covers_every_question_type():
    types = {q.type for q in load_course(LESSONS).questions}
    assert types == {"choice", "predict", "predict_state", "task", "derive", "numeric"}


def test_a_lesson_becomes_steps_with_lines_and_stable_ids():
    lesson = parse_lesson(GOOD, "demo.md")
    assert (lesson.id, lesson.title, lesson.version, lesson.requires, lesson.language) == \
        ("demo", "Demo: a lesson", "2", ["other"], "hi")
    assert [s.kind for s in lesson.steps] == ["prose", "code", "prose", "question", "question", "question",
                                              "code", "question"]
    assert lesson.steps[1].line == GOOD.splitlines().index("```python") + 1
    assert "not a cell" in lesson.steps[2].text
    slope = lesson.question("slope")
    assert slope.uid == "demo/slope"
    assert slope.hint(0) == "Differentiate x squared." and slope.hint(1) is None
    assert slope.misconceptions[0].feedback == "That is x, not the slope."
    pick = lesson.question("demo/pick")
    assert [o.correct for o in pick.options] == [True, None]
    assert lesson.question("last").tolerance == 0.5


def test_context_is_cells_question_code_and_task_solutions_in_order():
    lesson = parse_lesson(GOOD, "demo.md")
    context = [s.code.strip() for s in lesson.question("last").context]
    assert context == ["x = torch.tensor(2.0, requires_grad=True)", "(x ** 2).backward()", "z = 3", "w = z + 1"]
    assert [s.may_fail for s in lesson.question("last").context] == [False, True, False, False]
    assert replay_sources(lesson, 0) == []


def test_bad_front_matter_names_the_line():
    text = GOOD.replace("version: 2", "version: [2")
    assert any(p.startswith("les.md:") and "front matter is not valid YAML" in p for p in problems_of(text))


def test_missing_front_matter_and_missing_title():
    assert problems_of("# just prose\n") == ["les.md:1: a lesson starts with YAML front matter between '---' lines"]
    assert "les.md:2: front matter needs 'title'" in problems_of(GOOD.replace('title: "Demo: a lesson"\n', ""))


def test_unknown_question_type_is_reported_at_its_line():
    text = GOOD.replace("type: numeric", "type: essay")
    line = text.splitlines().index("type: essay") + 1
    assert any(p.startswith(f"les.md:{line}: question 'last': unknown type 'essay'") for p in problems_of(text))


def test_syntax_error_in_a_cell_names_the_line_of_the_error():
    text = GOOD.replace("w = z + 1", "w = (z + 1")
    line = text.splitlines().index("w = (z + 1") + 1
    assert any(p.startswith(f"les.md:{line}: python cell: syntax error") for p in problems_of(text))


def test_syntax_error_in_question_code_block_scalar():
    text = GOOD.replace("  (x ** 2).backward()", "  (x ** 2).backward(")
    line = text.splitlines().index("  (x ** 2).backward(") + 1
    assert any(p.startswith(f"les.md:{line}: question 'slope' code: syntax error") for p in problems_of(text))


def test_missing_key_and_unknown_key():
    text = GOOD.replace("checks:\n  - state: z\n    message: z is not 3.\n", "").replace("tolerance: 0.5", "tolerance: 0.5\nanswer: 7")
    found = problems_of(text)
    assert any("question 'make-z': a task question needs 'checks'" in p for p in found)
    assert any("question 'last': unknown key 'answer'" in p for p in found)


def test_duplicate_question_ids_and_wrong_option_without_feedback():
    text = GOOD.replace("id: make-z", "id: slope").replace("    feedback: the misconception\n", "")
    found = problems_of(text)
    assert any("question id 'slope' is already used on line" in p for p in found)
    assert any("wrong option 2 needs a 'feedback'" in p for p in found)


def test_choice_tied_to_code_needs_an_answer_per_option():
    text = GOOD.replace("prompt: Pick one.", "prompt: Pick one.\nask: x.grad")
    assert any("every option needs an 'answer'" in p for p in problems_of(text))


def test_unclosed_fence_is_reported():
    text = GOOD + "\n```python\nx = 1\n"
    line = len(GOOD.splitlines()) + 2
    assert f"les.md:{line}: ```python block is not closed" in problems_of(text)


def test_one_bad_lesson_leaves_the_rest_of_the_course(tmp_path):
    write(tmp_path, "01-good.md", GOOD.replace("requires: [other]\n", ""))
    write(tmp_path, "02-bad.md", GOOD.replace("id: demo", "id: broken").replace("type: numeric", "type: essay"))
    write(tmp_path, "03-dup.md", GOOD.replace("requires: [other]\n", ""))
    write(tmp_path, "04-binary.md", "---\nid: x\n").write_bytes(b"\xff\xfe---")
    course = load_course(tmp_path)
    assert [lesson.id for lesson in course.lessons] == ["demo"]
    messages = [str(p) for p in course.problems]
    assert any("02-bad.md" in m and "unknown type 'essay'" in m for m in messages)
    assert any("03-dup.md:2: lesson id 'demo' is also used by" in m for m in messages)
    assert any("04-binary.md:0: cannot read" in m for m in messages)


def test_course_finds_questions_by_card_id():
    course = load_course(LESSONS)
    question = course.question("first-gradient/slope-at-two")
    assert question is not None and question.ask == "x.grad"
    assert course.question("first-gradient/nope") is None
    assert course.question("nope/slope-at-two") is None


def test_load_lesson_reads_a_file(tmp_path):
    lesson = load_lesson(write(tmp_path, "one.md", GOOD))
    assert lesson.path.endswith("one.md")
    assert lesson.to_json()["questions"] == ["demo/slope", "demo/pick", "demo/make-z", "demo/last"]


def test_the_tutor_side_imports_neither_torch_nor_sympy():
    import subprocess
    import sys

    code = ("import sys\n"
            "import gradrepl.tutor.lesson, gradrepl.tutor.grading, gradrepl.tutor.lesson_run, gradrepl.tutor.asking, gradrepl.tutor.lint\n"
            "import gradrepl.commands.play, gradrepl.commands.lint, gradrepl.commands.lessons\n"
            "print(sorted(m for m in ('torch', 'sympy') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_lessons_command_lists_the_course_as_json(tmp_path):
    import json
    import subprocess
    import sys

    (tmp_path / "01-demo.md").write_text(GOOD.replace("requires: [other]\n", ""), encoding="utf-8")
    (tmp_path / "02-bad.md").write_text("no front matter\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "gradrepl.cli", "lessons", "--json", "--lessons", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0
    rows = json.loads(done.stdout)
    assert [(r["id"], r["title"]) for r in rows] == [("demo", "Demo: a lesson")]
    assert rows[0]["path"].endswith("01-demo.md") and rows[0]["questions"][0] == "demo/slope"
    assert f"{tmp_path / '02-bad.md'}:1: a lesson starts with YAML front matter" in done.stderr


EXERCISE = """---
id: ex
title: Exercise
---

```question
id: fix
type: task
prompt: Fix it.
given: |
  w = torch.ones(3)
setup: |
  _hidden = 1
starter: |
  w = torch.ones(3, requires_grad=True)
checks:
  - state: w
    facts: [requires_grad]
    message: w does not require grad.
  - state: " w "
    facts: identity, value
    message: w is a new tensor.
  - code: no-inplace
    message: no in-place ops here.
solution: |
  w.requires_grad_(True)
```
"""


def test_a_task_with_named_checks_a_starter_and_given_code():
    fix = parse_lesson(EXERCISE, "ex.md").question("fix")
    assert [(c.kind, c.target, c.facts, c.rule, c.message) for c in fix.checks] == [
        ("state", "w", ("requires_grad",), "", "w does not require grad."),
        ("state", "w", ("identity", "value"), "", "w is a new tensor."),
        ("code", "", task_checks.DEFAULT_FACTS, "no-inplace", "no in-place ops here.")]
    assert fix.starter == "w = torch.ones(3, requires_grad=True)\n"
    # The hidden helper in setup is not shown; the code to fix is.
    assert fix.quiz_code == ("w = torch.ones(3)\n# This code has a bug; enter it fixed:\n"
                             "w = torch.ones(3, requires_grad=True)")


def test_malformed_checks_and_a_starter_with_a_syntax_error_are_reported():
    found = problems_of(EXERCISE.replace("    message: w is a new tensor.\n", "")
                        .replace("  w = torch.ones(3, requires_grad=True)", "  w = torch.ones(3,"))
    assert any("question 'fix': check 2: needs a 'message'" in p for p in found), found
    assert any("question 'fix' starter: syntax error" in p for p in found)
    for broken, says in [("facts: [requires_grad]", "facts: [requires_grad, color]"),
                         ("state: w\n    facts: [requires_grad]", "state: w.sum()\n    facts: [requires_grad]"),
                         ("code: no-inplace", "code: no-loops")]:
        found = problems_of(EXERCISE.replace(broken, says, 1))
        assert any("question 'fix': check" in p for p in found), (says, found)


def test_an_expression_check_is_refused_with_the_reason():
    # A check read in the learner's namespace can be rebound by the learner: the format has none.
    found = problems_of(EXERCISE.replace("checks:\n", "check: w.requires_grad\nchecks:\n"))
    assert any("'check' expressions ran in the learner's namespace" in p for p in found), found
    only_code = EXERCISE.split("checks:\n")[0] + "checks:\n  - code: no-inplace\n    message: m\n" + \
        "solution: |\n  w.requires_grad_(True)\n```\n"
    assert any("needs at least one 'state' check" in p for p in problems_of(only_code))


MAGIC_CELL = ("---\nid: magic\ntitle: t\nversion: 1\n---\n\n```python\ny = torch.ones(1)\n```\n\n"
              "```python\n%trace y\n```\n\n"
              "```question\nid: q\ntype: predict\nprompt: p\nask: y.grad\n```\n")


def test_a_cell_of_one_magic_line_runs_as_at_the_prompt_and_mixed_cells_are_syntax_errors():
    lesson = parse_lesson(MAGIC_CELL, "magic.md")
    assert [step.text.strip() for step in lesson.steps if step.kind == "code"] == ["y = torch.ones(1)", "%trace y"]
    mixed = MAGIC_CELL.replace("%trace y\n", "%trace y\nz = 1\n")
    assert any("python cell: syntax error" in problem for problem in problems_of(mixed))
