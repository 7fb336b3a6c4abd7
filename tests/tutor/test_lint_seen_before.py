"""`gradrepl lint`: a question whose answer the learner has already seen fails, with where it was seen;
a ```python claim that does not hold fails the lesson (real kernels, through the CLI)."""

import subprocess

from tests.support.paths import GRADREPL, ROOT
from tests.support.cli import lint
from tests.support.lesson_files import HINTS, lesson


def predict(qid: str, prompt: str, ask: str, extra: str = "") -> str:
    return f"```question\nid: {qid}\ntype: predict\nprompt: \"{prompt}\"\nask: {ask}\n{extra}{HINTS}```\n"


def test_each_place_an_answer_can_be_seen_fails_lint_naming_it(tmp_path):
    in_prose = lesson(tmp_path, "in-prose", "Doubling 3 gives `tensor(6.)`.\n\n"
                      + predict("q", "What is x * 2 for x = 3?", "torch.tensor(3.) * 2"))
    in_prompt = lesson(tmp_path, "in-prompt", predict("q", "The data came from y = 3x + 2. What slope is learned?",
                                                      "torch.tensor(3.0)"))
    # The answer to the second question is in the explanation revealed after the first.
    in_explanation = lesson(tmp_path, "in-explanation", predict(
        "a", "What is 1 + 1?", "1 + 1", "explanation: and x.grad after backward would be [4., 4.]\n")
        + "\n" + predict("b", "What is x.grad?", "torch.tensor([4., 4.])"))
    # ... or in the feedback of a wrong answer to the first: a learner who got it wrong read that.
    in_feedback = lesson(tmp_path, "in-feedback", predict(
        "a", "What is 1 + 1?", "1 + 1", "misconceptions:\n  - answer: \"11\"\n    feedback: That joins text; "
        "x.grad after backward would be [4., 4.]\n") + "\n" + predict("b", "What is x.grad?", "torch.tensor([4., 4.])"))
    # A magic's output counts as the kernel prints it: %trace lists SumBackward0 first.
    in_output = lesson(tmp_path, "in-output", "```python\nx = torch.ones(2, requires_grad=True)\ny = (x * 3).sum()\n"
                       "```\n\n```python\n%trace y\n```\n\n"
                       + predict("q", "Which grad_fn does y have?", "y.grad_fn"))
    # The placeholder names forms, not values ("raises SomeError"): only an error of that very name is in it.
    in_placeholder = lesson(tmp_path, "in-placeholder", "```question\nid: q\ntype: predict\nprompt: What happens?\n"
                            "code: |\n  class SomeError(Exception):\n      pass\n  raise SomeError('no')\nask: 1\n"
                            + HINTS + "```\n")
    # Placeholders once held example values: 7 (a key of two questions), 2*x + 3 (the course's first derivative).
    derive = lesson(tmp_path, "derive", "```question\nid: q\ntype: derive\nprompt: d/dx of x**2 + 3*x?\n"
                    "function: x**2 + 3*x\nvariable: x\nsolution: 2*x + 3\n" + HINTS + "```\n")
    seven = lesson(tmp_path, "a-sum", predict("q", "What is 3 + 4?", "3 + 4"))
    flag_told = lesson(tmp_path, "flag-told", "```python\nx = torch.ones(2, requires_grad=True)\nz = x * 2\n"
                       "print('z.requires_grad is', z.requires_grad)\n```\n\n"
                       + predict("q", "Does z require grad?", "z.requires_grad"))
    asked_first = lesson(tmp_path, "asked-first", predict("q", "What is x * 2 for x = 3?", "torch.tensor(3.) * 2")
                         + "\nDoubling 3 gives `tensor(6.)`.\n")
    done = lint(str(tmp_path))
    out = done.stdout
    assert done.returncode == 1, out
    assert f"{in_prose}:8: question 'q': the prose at line 6 gives the answer away ('6')" in out
    assert f"{in_prompt}:6: question 'q': the prompt gives the answer away ('3')" in out
    assert (f"{in_explanation}:17: question 'b': the explanation revealed after question 'a' gives the answer away "
            "('[4., 4.]')") in out
    assert ("question 'b': the feedback of a wrong answer to question 'a' gives the answer away ('[4., 4.]')"
            in out and str(in_feedback) in out), out
    assert f"{in_output}:15: question 'q': the output of the cell at line 11 gives the answer away ('SumBackward0')" \
        in out
    assert f"{in_placeholder}:6: question 'q': the answer box's placeholder gives the answer away ('SomeError')" in out
    assert str(derive) not in out and str(seven) not in out, out
    assert (f"{flag_told}:12: question 'q': the output of the cell at line 6 gives the answer away "
            "('z.requires_grad is True')") in out
    assert str(asked_first) not in out, out


CLAIM_LESSON = """Inference tensors keep no version counter.

```python
with torch.inference_mode():
    t = torch.ones(2)
```

```python claim
{claim}
```

```question
id: q
type: predict
prompt: "What is t.is_inference()?"
ask: t.is_inference()
{hints}```
"""


def test_a_claim_that_does_not_hold_fails_lint_and_play_never_shows_it(tmp_path):
    for folder in "abc":
        (tmp_path / folder).mkdir()
    false = lesson(tmp_path / "a", "false-claim", CLAIM_LESSON.format(
        claim="assert not t.is_inference(), 'inference tensors are ordinary'", hints=HINTS))
    true = lesson(tmp_path / "b", "true-claim", CLAIM_LESSON.format(
        claim="try:\n    t._version\n    counted = True\nexcept RuntimeError:\n    counted = False\nassert not counted",
        hints=HINTS))
    # A claim's own names go when it returns: the lesson's namespace stays what the cells made.
    keeps = lesson(tmp_path / "c", "claim-keeps", CLAIM_LESSON.format(
        claim="t = 'rebound by the claim'\nassert isinstance(t, str)", hints=HINTS))
    done = lint(str(false))
    assert done.returncode == 1
    assert f"{false}:14: the claim does not hold: AssertionError: inference tensors are ordinary" in done.stdout
    for path in (true, keeps):
        done = lint(str(path))
        assert done.returncode == 0, done.stdout + done.stderr
    played = subprocess.run([*GRADREPL, "play", str(true), "--auto"], capture_output=True, text=True, timeout=120,
                            cwd=ROOT)
    assert played.returncode == 0, played.stdout + played.stderr
    assert "counted" not in played.stdout and "Inference tensors keep no version counter." in played.stdout


def test_a_claim_sees_what_the_front_matter_setup_made(tmp_path):
    """Claims run in the lesson's canonical namespace, whose first part is the front matter's hidden setup
    (training-loop makes its data there, so the slope is not on screen): a cell reading it holds."""
    path = tmp_path / "setup-data.md"
    path.write_text("---\nid: setup-data\ntitle: setup data\nsetup: |\n  made = torch.ones(2)\n---\n\n"
                    "```python\ndoubled = made * 2\n```\n\n```python claim\nassert doubled.sum().item() == 4\n```\n\n"
                    + predict("q", "What is doubled.sum().item()?", "doubled.sum().item() + 1"), encoding="utf-8")
    done = lint(str(path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_title_or_a_heading_above_that_gives_the_answer_fails_lint(tmp_path):
    # The title is play's first line; a heading stays on screen above every question under it,
    # even one asked after another question.
    titled = tmp_path / "titled.md"
    titled.write_text("---\nid: titled\ntitle: Three cubed is 27\n---\n\n"
                      + predict("q", "What is 3 ** 3?", "3 ** 3"), encoding="utf-8")
    headed = lesson(tmp_path, "headed", "# y's grad_fn is MulBackward0\n\n"
                    + predict("a", "What is 1 + 1?", "1 + 1") + "\n"
                    + "```python\nx = torch.ones(2, requires_grad=True)\ny = x * 3\n```\n\n"
                    + predict("q", "Which grad_fn does y have?", "y.grad_fn"))
    # A heading under the question, or one asking rather than telling, gives nothing away.
    later = lesson(tmp_path, "later", "# Products\n\n"
                   + predict("q", "What is 3 * 4?", "3 * 4") + "\n## 3 * 4 is 12\n\nIt is.\n")
    done = lint(str(tmp_path))
    out = done.stdout
    assert done.returncode == 1, out
    assert f"{titled}:6: question 'q': the lesson's title gives the answer away ('27')" in out
    assert f"{headed}:23: question 'q': the heading at line 6 gives the answer away ('MulBackward0')" in out
    assert str(later) not in out, out


def choice(qid: str, prompt: str, right: str, wrong: list[str]) -> str:
    options = f"  - text: {right}\n    correct: true\n" + "".join(
        f"  - text: {text}\n    feedback: not that\n" for text in wrong)
    return f"```question\nid: {qid}\ntype: choice\nprompt: \"{prompt}\"\noptions:\n{options}{HINTS}```\n"


def titled_lesson(folder, name: str, title: str, body: str):
    path = folder / f"{name}.md"
    path.write_text(f"---\nid: {name}\ntitle: {title}\n---\n\n{body}", encoding="utf-8")
    return path


def test_an_answer_in_a_note_a_number_word_or_a_title_naming_the_right_option_fails_lint(tmp_path):
    # A warning's note is printed with its step: the learner has read it.
    noted = lesson(tmp_path, "noted", "```python\nimport warnings\nwarnings.warn('x.grad will be 42 after backward')\n"
                   "```\n\n" + predict("q", "What is x.grad?", "6 * 7"))
    # "six" is 6 spelled out; "one" is left alone (it is an article more often than a number).
    worded = lesson(tmp_path, "worded", "Doubling three gives six.\n\n" + predict("q", "What is 3 * 2?", "3 * 2"))
    one = lesson(tmp_path, "one", "One tracked input is enough.\n\n" + predict("q", "What is 3 - 2?", "3 - 2"))
    # The title names what only the right option says.
    optimizer_choice = choice("q", "What should the optimizer be given?", "Only the parameters that still require grad",
                              ["All of net.parameters()", "The frozen parameters too, with requires_grad=True set again"])
    titled = titled_lesson(tmp_path, "only", "Give the optimizer only what you train", optimizer_choice)
    neutral = titled_lesson(tmp_path, "neutral", "The optimizer and frozen layers", optimizer_choice)
    # The previous question's answer, as play reveals it, is on the screen too.
    revealed = lesson(tmp_path, "revealed", predict("a", "What is 3.5 * 2?", "3.5 * 2") + "\n"
                      + predict("b", "What is 14 / 2?", "14 / 2"))
    # The title names the first section only: a later section's choice shares words with it by chance.
    far = titled_lesson(tmp_path, "far", "Give the optimizer only what you train",
                        "# Start\n\nText.\n\n## Later\n\n" + optimizer_choice)
    done = lint(str(tmp_path))
    out = done.stdout
    assert done.returncode == 1, out
    assert f"{revealed}:16: question 'b': the answer revealed after question 'a' gives the answer away ('7')" in out
    assert str(far) not in out, out
    assert f"{noted}:11: question 'q': the output of the cell at line 6 gives the answer away ('42')" in out
    assert f"{worded}:8: question 'q': the prose at line 6 gives the answer away ('six')" in out
    assert f"{titled}:6: question 'q': the lesson's title gives the answer away ('only')" in out
    assert str(one) not in out and str(neutral) not in out, out


KEEP_TASK = """```question
id: keep
type: task
prompt: "This code should leave dz/dh in `grad_h`, but it comes out None. Fix it and run it."
given: |
  x = torch.tensor(2.0, requires_grad=True)
setup: |
  x = torch.tensor(2.0, requires_grad=True)
starter: |
  h = x * 3
  z = h ** 2
  z.backward()
  grad_h = h.grad
checks:
  - state: h
    facts: [retains_grad, grad]
    message: h.grad must hold h's own gradient.
solution: |
  h = x * 3
  h.retain_grad()
  z = h ** 2
  z.backward()
  grad_h = h.grad
{hints}```
"""


def test_a_fix_the_code_task_whose_fix_the_prose_above_names_fails_lint(tmp_path):
    """The blind play-through: "ask to keep it with `retain_grad()`" above the task that asks for that fix."""
    told = lesson(tmp_path, "told", "A tensor can ask to keep its gradient with `retain_grad()`.\n\n"
                  + KEEP_TASK.format(hints=HINTS))
    asked_first = lesson(tmp_path, "asked-first", "A tensor that is not a leaf can ask to keep its gradient.\n\n"
                         + KEEP_TASK.format(hints=HINTS) + "\nThe request is `h.retain_grad()`.\n")
    done = lint(str(tmp_path))
    out = done.stdout
    assert f"{told}:8: question 'keep': the prose at line 6 gives the answer away ('retain_grad()')" in out, out
    assert not [line for line in out.splitlines() if str(asked_first) in line and "gives the answer away" in line], out


TWICE_TASK = """```question
id: twice
type: task
prompt: "Run backward through this same `y` twice."
setup: |
  x.grad = None
  y = x ** 2
checks:
  - state: x
    facts: [grad]
    message: x.grad should hold two passes.
solution: |
  y.backward(retain_graph=True)
  y.backward()
{hints}```
"""

TOLD_BY_TORCH = """```python
x = torch.tensor(2.0, requires_grad=True)
y = x ** 2
y.backward()
```

```question
id: again
type: predict
prompt: "What does a second `y.backward()` do?"
given: |
  x = torch.tensor(2.0, requires_grad=True)
  y = x ** 2
  y.backward()
code: |
  y.backward()
ask: x.grad
{hints}```

""" + TWICE_TASK

TOLD_BY_WHY = """```python
w = torch.tensor([1.0, 2.0], requires_grad=True)
```

```question
id: leaf
type: predict
prompt: "What does `w.add_(1)` do to a leaf that requires grad?"
given: |
  w = torch.tensor([1.0, 2.0], requires_grad=True)
code: |
  w.add_(1)
ask: w
{hints}```

```question
id: init
type: task
prompt: "This code raises. Fix it."
starter: |
  w = torch.tensor([1.0, 2.0], requires_grad=True)
  w.add_(1)
checks:
  - state: w
    facts: [value, requires_grad, is_leaf]
    message: w should be a leaf holding [2, 3].
solution: |
  w = torch.tensor([1.0, 2.0], requires_grad=True)
  with torch.no_grad():
      w.add_(1)
{hints}```
"""


def test_a_fix_that_torchs_error_or_a_why_line_above_names_fails_lint(tmp_path):
    """Issue 22 (round three): torch's own "Specify retain_graph=True" revealed just above the task that asks
    for two passes, and the why-line's "wrap it in `with torch.no_grad():`" above the task whose fix that is.
    Kernel output counts as prose does: a keyword argument or a call the solution adds, named there."""
    by_torch = lesson(tmp_path, "by-torch", TOLD_BY_TORCH.format(hints=HINTS))
    by_why = lesson(tmp_path, "by-why", TOLD_BY_WHY.format(hints=HINTS))
    done = lint(str(tmp_path))
    out = done.stdout
    assert done.returncode == 1, out
    assert (f"{by_torch}:28: question 'twice': the output revealed after question 'again' gives the answer away "
            "('retain_graph=True')") in out, out
    assert (f"{by_why}:24: question 'init': the output revealed after question 'leaf' gives the answer away "
            "('no_grad()')") in out, out


TOLD_IN_PROSE = """```python
x = torch.tensor(2.0, requires_grad=True)
y = x ** 2
```

{prose}

""" + TWICE_TASK + "{after}"


def test_a_keyword_flag_the_fix_passes_named_in_the_prose_above_fails_lint(tmp_path):
    """The blind play-through: lesson 14's prose gave `create_graph=True` just above the task needing it."""
    told = lesson(tmp_path, "told", TOLD_IN_PROSE.format(
        prose="To walk a graph twice, pass `retain_graph = True` to the first backward.", hints=HINTS, after=""))
    asked_first = lesson(tmp_path, "asked-first", TOLD_IN_PROSE.format(
        prose="A graph is freed by its backward.", hints=HINTS,
        after="\nThe first backward needs `retain_graph=True`.\n"))
    out = lint(str(tmp_path)).stdout
    assert f"{told}:13: question 'twice': the prose at line 11 gives the answer away ('retain_graph=True')" in out, out
    assert not [line for line in out.splitlines() if str(asked_first) in line and "gives the answer away" in line], out
