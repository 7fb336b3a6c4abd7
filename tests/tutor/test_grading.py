"""Grading: tolerant reading of answers, keys computed in a real kernel, tasks graded on state."""

import pytest

from gradrepl.tutor.answers import matches, read_answer, read_key, wrong_form
from gradrepl.tutor.grading import compute_key, grade, grade_task, key_answer
from gradrepl.tutor import tasks
from gradrepl.tutor.lesson import parse_lesson

LESSON = '''---
id: g
title: Grading
---

```python
x = torch.tensor(2.0, requires_grad=True)
y = x ** 2 + 3 * x
```

```question
id: slope
type: predict
prompt: x.grad after backward?
code: |
  y.backward()
ask: x.grad
misconceptions:
  - answer: "10"
    feedback: That is y, not its slope.
```

```question
id: twice
type: choice
prompt: Backward a second time through y?
code: |
  y.backward()
ask: x.grad
options:
  - text: It raises
    answer: raises RuntimeError
  - text: 14
    answer: "14"
    feedback: The first backward freed the graph's saved values.
```

```question
id: state
type: predict_state
prompt: State of y?
ask: y
```

```question
id: fix
type: task
prompt: Make x.grad hold 7 from a fresh graph.
setup: |
  x.grad = None
checks:
  - state: x
    facts: [grad]
    message: x.grad does not hold 7.
  - state: x
    facts: [backward]
    message: no backward pass reached x.
solution: |
  (x ** 2 + 3 * x).backward()
```

```question
id: slope-formula
type: derive
prompt: d/dx of x**2 + 3*x?
function: x**2 + 3*x
variable: x
solution: 2*x + 3
```
'''


@pytest.fixture
def lesson():
    return parse_lesson(LESSON, "g.md")


# -- reading answers (no kernel) ----------------------------------------------------------

@pytest.mark.parametrize("typed", ["7", "7.", "7.0", "tensor(7.)", "tensor([7.0000])", " 7.0004 ",
                                   "tensor(7., grad_fn=<AddBackward0>)"])
def test_many_spellings_of_seven_match_a_scalar_tensor_key(typed):
    key = read_key({"kind": "tensor", "dtype": "torch.float32", "value": {"shape": [], "values": 7.0}})
    assert matches(key, read_answer(typed))


@pytest.mark.parametrize("typed", ["8", "None", "raises RuntimeError", "[7, 7]", "seven"])
def test_wrong_spellings_do_not_match_seven(typed):
    key = read_key({"kind": "tensor", "dtype": "torch.float32", "value": {"shape": [], "values": 7.0}})
    assert not matches(key, read_answer(typed))


def test_errors_none_names_and_shapes():
    error = read_key({"kind": "error", "type": "RuntimeError", "message": "boom"})
    assert matches(error, read_answer("raises RuntimeError"))
    assert matches(error, read_answer("RuntimeError"))
    assert matches(error, read_answer("an error"))
    assert not matches(error, read_answer("raises TypeError"))
    assert not matches(error, read_answer("0"))
    assert matches(read_key({"kind": "none"}), read_answer("none"))
    assert not matches(read_key({"kind": "none"}), read_answer("0"))
    node = read_key({"kind": "other", "repr": "<MulBackward0 object at 0x7f3a>"})
    assert matches(node, read_answer("MulBackward0")) and matches(node, read_answer("mul"))
    assert not matches(node, read_answer("AddBackward0"))
    size = read_key({"kind": "other", "repr": "torch.Size([2, 3])"})
    assert matches(size, read_answer("(2, 3)")) and not matches(size, read_answer("(3, 2)"))
    dtype = read_key({"kind": "other", "repr": "torch.int64"})
    assert matches(dtype, read_answer("int64")) and not matches(dtype, read_answer("torch.float32"))


def test_tolerance_is_absolute_when_the_author_states_it():
    key = read_key({"kind": "number", "value": 3.03})
    assert matches(key, read_answer("3.0"), tolerance=0.1)
    assert not matches(key, read_answer("3.2"), tolerance=0.1)


def test_vector_keys_accept_flat_lists_but_not_other_shapes():
    key = read_key({"kind": "tensor", "dtype": "torch.float32",
                    "value": {"shape": [2, 2], "values": [[1.0, 2.0], [3.0, 4.0]]}})
    assert matches(key, read_answer("tensor([[1., 2.], [3., 4.]])"))
    assert matches(key, read_answer("[1, 2, 3, 4]"))
    assert not matches(key, read_answer("[[1, 2, 3, 4]]"))
    assert not matches(key, read_answer("[1, 2, 3]"))


def test_answers_are_read_never_run():
    # A learner's text is parsed by a whitelist; anything else is plain text that matches nothing.
    sneaky = read_answer("__import__('os').system('echo hi')")
    assert sneaky.kind == "text"
    assert not matches(read_key({"kind": "number", "value": 0}), sneaky)


# -- keys and grades in a real kernel -------------------------------------------------------

async def test_predict_key_is_computed_in_a_fresh_kernel_and_graded_tolerantly(lesson, session):
    slope = lesson.question("slope")
    await session.execute("x = 'the learner broke x'")
    key = await compute_key(slope, session)
    assert key.problems == []
    assert key.text == "tensor(7.)"
    assert (await grade(slope, "7", session, key)).correct
    assert (await grade(slope, "tensor(7.0)", session, key)).correct
    wrong = await grade(slope, "10", session, key)
    assert not wrong.correct and wrong.misconception == "That is y, not its slope."
    assert wrong.expected == "tensor(7.)"
    assert not (await grade(slope, "None", session, key)).correct
    assert (await grade(slope, key_answer(slope, key), session, key)).correct


async def test_choice_tied_to_code_finds_the_one_matching_option(lesson, session):
    twice = lesson.question("twice")
    key = await compute_key(twice, session)
    assert key.correct_options == [0]
    assert key.value.kind == "error" and key.value.name == "RuntimeError"
    assert (await grade(twice, 0, session, key)).correct
    assert (await grade(twice, "It raises", session, key)).correct
    wrong = await grade(twice, 1, session, key)
    assert not wrong.correct and wrong.misconception == "The first backward freed the graph's saved values."


async def test_predict_state_is_graded_field_by_field(lesson, session):
    state = lesson.question("state")
    key = await compute_key(state, session)
    assert key.field_text == {"requires_grad": "True", "is_leaf": "False", "grad_fn": "AddBackward0",
                              "grad": "None"}
    right = await grade(state, {"requires_grad": "True", "is_leaf": "no", "grad_fn": "Add", "grad": "None"},
                        session, key)
    assert right.correct
    half = await grade(state, {"requires_grad": "True", "is_leaf": "True", "grad_fn": "MulBackward0",
                               "grad": "None"}, session, key)
    assert not half.correct
    assert half.fields == {"requires_grad": True, "is_leaf": False, "grad_fn": False, "grad": True}
    assert "is_leaf is False" in half.feedback and "grad_fn is AddBackward0" in half.feedback


async def test_a_wrong_task_attempt_restores_the_namespace_it_started_from(lesson, session):
    fix = lesson.question("fix")
    # The attempt changes x's value and makes a new name, and the check fails.
    wrong = await grade(fix, "x.data.fill_(100.0)\nleftover = 1\n(x * 1).backward()", session)
    assert not wrong.correct and wrong.restored
    assert (await session.inspect("x.item()"))["value"] == 2.0
    assert (await session.inspect("x.grad"))["kind"] == "none"
    assert (await session.inspect("leftover"))["kind"] == "error"
    assert (await session.inspect("y.grad_fn is not None"))["value"] is True
    # An attempt that raises is undone too, and the right code then passes where the undo left the kernel.
    key = await compute_key(fix, session)
    _problems, start = await tasks.restart_at(fix, session)
    crashed = await grade_task(fix, "x.grad = 5", session, key, start=start)
    assert not crashed.correct and crashed.restored and "raised TypeError" in crashed.feedback
    right = await grade_task(fix, "y2 = x ** 2 + 3 * x\ny2.backward()", session, key, start=crashed.start)
    assert right.correct and not right.restored
    assert (await session.inspect("x.grad.item()"))["value"] == 7.0


async def test_derive_answers_are_checked_by_the_symbolic_engine(lesson, session):
    formula = lesson.question("slope-formula")
    assert (await grade(formula, "3 + x*2", session)).correct
    assert (await grade(formula, "2*x", session)).correct is False
    unreadable = await grade(formula, "2*x +", session)
    assert not unreadable.correct and unreadable.feedback.startswith("Could not read that expression")


# -- every spelling of the form asked for; the wrong form is named, not counted ---------------

@pytest.mark.parametrize("typed", ["torch.float", "float", "torch.float32", "float32"])
def test_every_spelling_of_float32_matches_the_dtype(typed):
    assert matches(read_key({"kind": "other", "repr": "torch.float32"}), read_answer(typed))
    assert not matches(read_key({"kind": "other", "repr": "torch.float64"}), read_answer(typed))


@pytest.mark.parametrize("typed", ["<AddBackward0 object>", "<AddBackward0 object at 0x7f00>", "<AddBackward0>",
                                   "AddBackward0", "add"])
def test_a_grad_fn_node_is_matched_however_it_is_written(typed):
    node = read_key({"kind": "other", "repr": "<AddBackward0 object at 0x7f3a12>"})
    assert matches(node, read_answer(typed))
    assert not matches(read_key({"kind": "other", "repr": "<MulBackward0 object at 0x1>"}), read_answer(typed))


@pytest.mark.parametrize("typed", ["raises an error", "it raises an error", "error", "an exception",
                                   "raises a RuntimeError"])
def test_saying_it_raises_without_naming_a_class_is_right(typed):
    assert matches(read_key({"kind": "error", "type": "RuntimeError", "message": "m"}), read_answer(typed))


def test_answers_in_the_wrong_form_are_named_and_content_answers_are_not():
    dtype = read_key({"kind": "other", "repr": "torch.float32"})
    number = read_key({"kind": "number", "value": 7})
    none = read_key({"kind": "none"})
    assert "a name" in wrong_form(dtype, read_answer("[2, 3]"))
    assert "a value" in wrong_form(number, read_answer("it is the slope of y"))
    assert "a value" in wrong_form(number, read_answer("torch.float32"))
    assert wrong_form(number, read_answer("8")) is None
    assert wrong_form(none, read_answer("zeros")) is None  # a belief about .grad, graded as wrong
    assert wrong_form(read_key({"kind": "error", "type": "RuntimeError"}), read_answer("[2, 2]")) is None


@pytest.mark.parametrize("typed", ["torch.zeros(2, 2)", "torch.zeros((2, 2))", "zeros([2, 2])",
                                   "torch.zeros(2, 2, dtype=torch.float32)"])
def test_a_tensor_of_zeros_written_as_a_call_is_read_as_that_value(typed):
    # `torch.zeros(4, 3)` for an empty .grad is a belief to grade wrong, not a form to ask again.
    zeros = read_key({"kind": "tensor", "value": {"shape": [2, 2], "values": [[0.0, 0.0], [0.0, 0.0]]}})
    assert matches(zeros, read_answer(typed))
    assert not matches(zeros, read_answer("torch.ones(2, 2)")) and not matches(zeros, read_answer("torch.zeros(3)"))
    none = read_key({"kind": "none"})
    assert wrong_form(none, read_answer(typed)) is None and not matches(none, read_answer(typed))
    assert read_answer("torch.zeros(n)").kind == read_answer("torch.zeros(10**9)").kind == "text"


TASKS = '''---
id: t
title: Tasks
---

```python
w = torch.ones(3)
x = torch.tensor(2.0, requires_grad=True)
h = x * 3
(h ** 2).backward()
```

```question
id: state-h
type: predict_state
prompt: State of h?
ask: h
```

```question
id: grad-h
type: predict
prompt: u.grad before any backward?
setup: |
  u = torch.tensor(5.0, requires_grad=True)
ask: u.grad
```

```question
id: track-w
type: task
prompt: Track w, keeping it the same tensor.
checks:
  - state: w
    facts: [requires_grad]
    message: w does not require grad yet.
  - state: w
    facts: [identity]
    message: w is a new tensor now; switch the flag on the tensor that is there.
solution: |
  w.requires_grad_(True)
```
'''


@pytest.fixture
def task_lesson():
    return parse_lesson(TASKS, "t.md")


async def test_a_sentence_for_a_value_is_asked_again_not_graded_wrong(lesson, session):
    slope = lesson.question("slope")
    key = await compute_key(slope, session)
    graded = await grade(slope, "the slope of y at two", session, key)
    assert graded.retry and not graded.correct and "a value, such as 7" in graded.feedback
    assert not (await grade(slope, "8", session, key)).retry


async def test_zeros_for_an_empty_grad_is_told_grad_is_none_not_zeros(task_lesson, session):
    question = task_lesson.question("grad-h")
    key = await compute_key(question, session)
    graded = await grade(question, "zeros", session, key)
    assert not graded.correct and not graded.retry
    assert "None here, not zeros: it holds no tensor until a backward pass writes one" in graded.feedback


async def test_a_wrong_state_field_says_why_it_has_its_value(task_lesson, session):
    question = task_lesson.question("state-h")
    key = await compute_key(question, session)
    graded = await grade(question, {"requires_grad": "True", "is_leaf": "False", "grad_fn": "MulBackward0",
                                    "grad": "tensor(12.)"}, session, key)
    assert not graded.correct and graded.fields["grad"] is False
    assert "h is not a leaf, so .grad stays None unless h.retain_grad() was called before backward" \
        in graded.feedback
    off = await grade(question, {"requires_grad": "True", "is_leaf": "no idea", "grad_fn": "Mul",
                                 "grad": "None"}, session, key)
    assert off.retry and "is_leaf could not be read" in off.feedback


async def test_named_checks_say_which_one_failed_and_identity_is_checked(task_lesson, session):
    track = task_lesson.question("track-w")
    assert [c.message for c in track.checks][0] == "w does not require grad yet."
    nothing = await grade(track, "pass", session)
    assert not nothing.correct and nothing.failed_check == "w does not require grad yet."
    replaced = await grade(track, "w = torch.ones(3, requires_grad=True)", session)
    assert not replaced.correct and "w is a new tensor now" in replaced.feedback
    assert (await grade(track, "w.requires_grad_(True)", session)).correct
    assert (await grade(track, "w.requires_grad = True", session)).correct


def test_a_typed_repr_must_agree_with_the_keys_grad_fn_and_flag_and_a_list_key_is_no_bare_number():
    leaf_grad = read_key({"kind": "tensor", "dtype": "torch.float32", "value": {"shape": [], "values": 7.0},
                          "grad_fn": None, "requires_grad": False})
    assert matches(leaf_grad, read_answer("tensor(7.)")) and matches(leaf_grad, read_answer("7"))
    assert not matches(leaf_grad, read_answer("tensor(7., grad_fn=<AddBackward0>)"))
    assert not matches(leaf_grad, read_answer("tensor(7., requires_grad=True)"))
    made = read_key({"kind": "tensor", "dtype": "torch.float32", "value": {"shape": [], "values": 7.0},
                     "grad_fn": "AddBackward0", "requires_grad": True})
    assert matches(made, read_answer("tensor(7., grad_fn=<AddBackward0>)"))
    assert not matches(made, read_answer("tensor(7., grad_fn=<MulBackward0>)"))
    listed = read_key({"kind": "other", "type": "list", "repr": "[10.0]"})
    assert matches(listed, read_answer("[10]")) and not matches(listed, read_answer("10"))


def test_a_rounded_answer_rounds_as_the_key_does_both_ways():
    low, high = read_answer("3.03"), read_answer("3.07")
    for typed, key, right in (("3.0", low, True), ("3", low, True), ("3.1", low, False), ("2.9", low, False),
                              ("3.1", high, True), ("3.0", high, False)):
        assert matches(key, read_answer(typed), 0.1, ("rounded",)) is right, (typed, key)
    assert matches(low, read_answer("3.1"), 0.1)  # a plain tolerance of 0.1 takes 3.1 for 3.03
