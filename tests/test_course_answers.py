"""The shipped course accepts every right answer in the form asked for and rejects wrong ones, with reasons.

Each case is what a learner who knows PyTorch typed while playing the course;
grading runs in a real kernel that replays the lesson up to the question.
"""

import pytest

from gradrepl.tutor.grading import grade
from gradrepl.tutor.lesson import load_course
from conftest import ROOT

COURSE = load_course(ROOT / "lessons")


def question(uid: str):
    found = COURSE.question(uid)
    assert found is not None, uid
    return found


@pytest.mark.parametrize("uid, answer", [
    ("training-loop/one-step", "with torch.no_grad():\n    w -= lr * w.grad\n    b -= lr * b.grad\n"
                               "w.grad = None; b.grad = None"),
    ("training-loop/one-step", "opt = torch.optim.SGD([w, b], lr=lr)\nopt.step(); opt.zero_grad()"),
    ("dtypes/default-dtype", "torch.float"),
    ("dtypes/default-dtype", "float32"),
    ("non-scalar/vector-backward", "raises an error"),
    ("tracking/opt-in-later", "w.requires_grad = True"),
    ("accumulation/zero-it", "x.grad.fill_(0)"),
    ("leaves-and-hooks/keep-h-grad", "h = x * 3; h.retain_grad(); (h ** 2).backward(); grad_h = h.grad"),
    ("in-place/fix-leaf-init", "w = torch.tensor([2.0, 3.0], requires_grad=True)\n(w ** 2).sum().backward()"),
])
async def test_right_answers_in_another_spelling_are_accepted(session, uid, answer):
    graded = await grade(question(uid), answer, session)
    assert graded.correct, graded.feedback


async def test_a_grad_fn_written_as_its_repr_is_accepted_field_by_field(session):
    graded = await grade(question("tracking/mixed-inputs"),
                         {"requires_grad": "True", "is_leaf": "False", "grad_fn": "<AddBackward0 object>",
                          "grad": "None"}, session)
    assert graded.correct, graded.feedback


@pytest.mark.parametrize("uid, answer, says", [
    ("tracking/opt-in-later", "w = torch.ones(3, requires_grad=True)", "w now names a new tensor"),
    ("accumulation/zero-it", "x.grad = torch.zeros_like(x)", "x.grad is a new tensor"),
    ("accumulation/zero-it", "x.grad = None", "drops the gradient instead of zeroing it"),
    ("retain-graph/twice-on-purpose", "y = x ** 2 + 3 * x\ny.backward()\ny = x ** 2 + 3 * x\ny.backward()",
     "backward did not run through the given y twice"),
    ("parameters/freeze-first", "model[0].eval()", "eval() and no_grad() do not change a parameter's flag"),
    ("leaves-and-hooks/keep-h-grad", "h = x * 3\nz = h ** 2\nz.backward()\nh.retain_grad()\ngrad_h = h.grad",
     "only when asked to before it runs"),
    # The prompt asks for dz/dh read from h.grad: a gradient computed another way is not the fix asked for.
    ("leaves-and-hooks/keep-h-grad", "h = x * 3\ngrad_h, = torch.autograd.grad(h ** 2, h)",
     "backward keeps it only when asked to"),
    ("in-place/fix-leaf-init", "w = torch.tensor([1.0, 2.0], requires_grad=True)\nw = w + 1\n(w ** 2).sum().backward()",
     "w must be a leaf that requires grad"),
    ("module-loop/write-the-loop", "for step in range(100):\n    loss = loss_fn(model(X), Y)\n    loss.backward()\n"
                                   "    opt.step()", "the loss is still above 0.01"),
    ("training-loop/one-step", "with torch.no_grad():\n    w = w - lr * w.grad\n    b = b - lr * b.grad",
     "w or b is a new tensor now"),
    ("accumulation-on-purpose/accumulate-right",
     "for xb, yb in zip(X.chunk(4), Y.chunk(4)):\n    loss_fn(lin(xb), yb).backward()",
     "divide each micro-batch's loss by the number of micro-batches"),
    ("accumulation-on-purpose/accumulate-right", "loss_fn(lin(X), Y).backward()",
     "once per micro-batch"),
    ("autograd-grad/gradient-penalty",
     "g, = torch.autograd.grad(out, inp, create_graph=True)\n(out + (g.norm() - 1) ** 2).backward()",
     "backprop the penalty alone"),
    ("autograd-grad/gradient-penalty",
     "g, = torch.autograd.grad(out, inp, create_graph=True)\n((g.norm() - 1) ** 2).backward()\nout.backward()",
     "raised RuntimeError"),
])
async def test_wrong_task_answers_are_rejected_by_a_named_check(session, uid, answer, says):
    graded = await grade(question(uid), answer, session)
    assert not graded.correct
    assert says in graded.feedback, graded.feedback


async def test_predict_answers_get_a_diagnosis_and_off_form_answers_are_asked_again(session):
    before = question("first-gradient/grad-before-backward")
    zeros = await grade(before, "zeros", session)
    assert not zeros.correct and not zeros.retry and "not zeros" in zeros.feedback
    sentence = await grade(before, "it holds nothing yet because nothing ran", session)
    assert sentence.retry and not sentence.correct
    dtype = await grade(question("dtypes/default-dtype"), "[1.0, 2.0]", session)
    assert dtype.retry and "a name" in dtype.feedback
    state = await grade(question("leaves-and-hooks/state-of-h"),
                        {"requires_grad": "True", "is_leaf": "False", "grad_fn": "MulBackward0",
                         "grad": "tensor(12.)"}, session)
    assert not state.correct
    assert "h is not a leaf, so .grad stays None unless h.retain_grad() was called before backward" in state.feedback


def test_yes_no_questions_are_choices_and_every_question_has_two_hints():
    for q in COURSE.questions:
        assert len(q.hints) >= 2, q.uid
        if q.prompt.split()[0] in ("Does", "Do", "Is", "Are"):
            assert q.type == "choice", q.uid


def test_the_quick_check_lists_an_english_title_first_and_keeps_the_heading_inside():
    lesson = COURSE.get("accumulation")
    assert lesson.title.startswith("Quick check (त्वरित जाँच)")
    assert lesson.steps[0].text.startswith("# त्वरित जाँच")


def test_the_course_has_at_least_four_coding_exercises_whose_starter_code_fails():
    exercises = [q for q in COURSE.questions if q.starter]
    assert len(exercises) >= 4
    assert all(q.type == "task" and q.starter.strip() != q.solution.strip() for q in exercises)


@pytest.mark.parametrize("uid", ["training-loop/one-step", "tracking/opt-in-later", "accumulation/zero-it",
                                 "retain-graph/twice-on-purpose"])
async def test_a_tasks_helper_variables_never_reach_the_learners_panel(session, uid):
    from gradrepl.tutor.grading import prepare

    assert await prepare(question(uid), session) == []
    names = set(session.tensors) | {alias for row in session.tensors.values() for alias in row.get("aliases", [])}
    assert names and not [n for n in names if n.startswith("_") or n in ("w0", "b0", "gw", "gb")]


@pytest.mark.parametrize("uid, answer", [
    ("non-scalar/pass-a-seed", "y.backward(torch.ones(2))"),   # torch's message ends "torch.Size([3])."
    ("tracking/opt-in-later", "pass"),                        # the check's message ends with a period
])
async def test_feedback_never_doubles_a_period(session, uid, answer):
    graded = await grade(question(uid), answer, session)
    assert not graded.correct and ".." not in graded.feedback.replace("...", ""), graded.feedback
