"""The shipped course accepts every right answer in the form asked for and rejects wrong ones, with reasons.

Each case is what a learner who knows PyTorch typed while playing the course;
grading runs in a real kernel that replays the lesson up to the question.
"""

import pytest

from gradrepl.tutor.grading import grade
from tests.support.course import COURSE, question


@pytest.mark.parametrize("uid, answer", [
    ("training-loop/one-step", "with torch.no_grad():\n    w -= lr * w.grad\n    b -= lr * b.grad\n"
                               "w.grad = None; b.grad = None"),
    ("training-loop/one-step", "opt = torch.optim.SGD([w, b], lr=lr)\nopt.step(); opt.zero_grad()"),
    ("dtypes/default-dtype", "torch.float"),
    ("dtypes/default-dtype", "float32"),
    ("non-scalar/vector-backward", "raises an error"),
    ("tracking/opt-in-later", "w.requires_grad = True"),
    ("accumulation/zero-it", "x.grad.fill_(0)"),
    ("leaves-and-hooks/keep-h-grad", "h = x * 3; h.retain_grad(); z = h ** 2; torch.autograd.backward(z); grad_h = h.grad"),
    ("in-place/fix-leaf-init", "w = torch.tensor([1.0, 2.0], requires_grad=True)\nwith torch.no_grad():\n"
                               "    w.add_(torch.ones_like(w))\n(w ** 2).sum().backward()"),
    # torch.func (issue 25)
    ("func-transforms/jacobian-by-transform", "from torch.func import jacrev\nJ = jacrev(net)(z)"),
    ("func-transforms/jacobian-by-transform", "J = torch.func.jacfwd(net)(z)"),
    ("func-jvp/detach-the-constant", "def shifted(t):\n    return net(t) + net(t).detach() * 10\n"
                                     "out, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))"),
    ("func-higher-order/third-derivative",
     "from torch.func import grad\nd3 = grad(grad(grad(wave)))\nthird = d3(x)"),
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
    # Y rebound (to the model's own outputs): the check names Y, not only the weights (blind play-through)
    ("module-loop/write-the-loop", "Y = model(X).detach()\nfor step in range(100):\n    opt.zero_grad()\n"
                                   "    loss = loss_fn(model(X), Y)\n    loss.backward()\n    opt.step()",
     "Y holds other values than the targets the task gave"),
    ("training-loop/one-step", "with torch.no_grad():\n    w = w - lr * w.grad\n    b = b - lr * b.grad",
     "w is a new tensor now"),
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
    # torch.func (issue 25): gamed or hand-made answers
    # the starter's own way: backward writes z.grad, and one seed gives one vjp, not the Jacobian
    ("func-transforms/jacobian-by-transform", "out = net(z)\nout.backward(torch.ones(2))\nJ = z.grad",
     "not net's Jacobian"),
    # the Jacobian read off the screen and typed in (to the last digit, so only the typed-number rule refuses it)
    ("func-transforms/jacobian-by-transform",
     "J = torch.tensor([[-0.00247062, 0.17702383, -0.27160099], [-0.27671477, -0.14481892, 0.10082778]])",
     "not written out by hand"),
    # right rows, but built by backward passes: .grad is written
    ("func-transforms/jacobian-by-transform",
     "rows = []\nfor i in range(2):\n    z.grad = None\n    net(z)[i].backward()\n    rows.append(z.grad.clone())\n"
     "J = torch.stack(rows)", "z.grad changed"),
    ("func-jvp/detach-the-constant", "def shifted(t):\n    with torch.no_grad():\n        s = net(t) * 10\n"
                                     "    return net(t) + s\nout, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))",
     "tangent still carries s's part"),
    # typed in after the starter's jvp call: the tangent is no longer the one jvp returned
    ("func-jvp/detach-the-constant", "def shifted(t):\n    return net(t) + (net(t) * 10).detach()\n"
     "out, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))\n"
     "tangent = torch.tensor([-0.04646583, -0.46146822, 0.19008900])", "not what a torch.func transform"),
    # s dropped instead of made a constant: the tangent is right, the value is not
    ("func-jvp/detach-the-constant", "def shifted(t):\n    return net(t)\n"
     "out, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))", "keep s in it"),
    ("func-higher-order/third-derivative", "third = -8 * torch.cos(2 * x)", "not with a formula of your own"),
    # A transform called beside a hand-made answer, its result dropped (the blind play's gamed answers): the
    # target must be the very tensor the transform returned.
    ("func-transforms/jacobian-by-transform", "_ = torch.func.grad(lambda t: net(t).sum())(z)\n"
     "with torch.no_grad():\n    J = (1 - net(z) ** 2)[:, None] * net[0].weight", "not what a torch.func transform"),
    ("func-transforms/jacobian-by-transform", "_ = torch.func.jacrev(net)(z)\nJ = torch.autograd.functional.jacobian(net, z)",
     "not what a torch.func transform"),
    # rows from vjp, stacked: a transform's pieces, but the prompt asks for the Jacobian a transform builds
    ("func-transforms/jacobian-by-transform",
     "out, pull = torch.func.vjp(net, z)\nJ = torch.stack([pull(row)[0] for row in torch.eye(2)])", "row by row"),
    ("func-jvp/detach-the-constant", "def shifted(t):\n    with torch.no_grad():\n        s = net(t) * 10\n"
     "    return net(t) + s\nout, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))\ntangent = tangent / 11",
     "not what a torch.func transform"),
    ("func-jvp/detach-the-constant", "out, tangent = torch.func.jvp(net, (x,), (torch.ones(3),))\nout = out * 11",
     "not what a torch.func transform"),
    ("func-higher-order/third-derivative", "_ = torch.func.grad(wave)(x)\nthird = -8 * torch.cos(2 * x)",
     "not what a torch.func transform"),
    ("func-higher-order/third-derivative", "third = torch.func.grad(torch.func.grad(wave))(x)",
     "three derivatives"),
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


def test_the_quick_check_has_a_title_in_each_language_and_keeps_the_heading_inside():
    lesson = COURSE.get("accumulation")
    assert lesson.title == lesson.title_in("en") == "Quick check: a second backward()"  # nothing in Hindi
    assert lesson.title_in("hi").startswith("त्वरित जाँच") and "Quick" not in lesson.title_in("hi")
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



# Verdicts a blind play-through found wrong (issue 22, round four): each answer is judged by what the
# prompt asks for, not only by closeness.
@pytest.mark.parametrize("uid, answer, right", [
    # "to one decimal": w is 3.03, which rounds to 3.0; 3.1 is another rounding, not the same one
    ("training-loop/learned-slope", "3.1", False),
    ("training-loop/learned-slope", "2.9", False),
    ("training-loop/learned-slope", "3.0", True),
    ("training-loop/learned-slope", "3", True),
    ("training-loop/learned-slope", "3.03", True),
    # x.grad is a leaf's gradient: no grad_fn, no requires_grad; a repr that says otherwise is another tensor
    ("first-gradient/slope-at-two", "tensor(7., grad_fn=<AddBackward0>)", False),
    ("first-gradient/slope-at-two", "tensor(7., requires_grad=True)", False),
    ("first-gradient/slope-at-two", "tensor(7.)", True),
    ("first-gradient/slope-at-two", "7", True),
    # seen is a list: the number alone is not what it holds
    ("leaves-and-hooks/hook-sees", "10", False),
    ("leaves-and-hooks/hook-sees", "10.0", False),
    ("leaves-and-hooks/hook-sees", "[10]", True),
    ("leaves-and-hooks/hook-sees", "[10.0]", True),
    # a Hessian of second derivatives of a polynomial: exact, and symmetric
    ("func-higher-order/hessian-entries", "[[6, 1.001], [1, 12]]", False),
    ("func-higher-order/hessian-entries", "[[6, 1], [0.9995, 12]]", False),
    ("func-higher-order/hessian-entries", "[[6, 1], [1, 12]]", True),
    ("func-higher-order/hessian-entries", "tensor([[6., 1.], [1., 12.]])", True),
])
async def test_an_answer_is_judged_in_the_form_the_prompt_asks_for(session, uid, answer, right):
    graded = await grade(question(uid), answer, session)
    assert graded.correct is right, f"{uid}: {answer!r}: {graded.feedback}"
    assert not graded.retry, graded.feedback


# A reason is true of the tensor asked about (issue 22, seventh blind play-through): p = nn.Parameter(zeros)
# was not created with the flag on (torch.zeros made it off; nn.Parameter switched it on).
async def test_a_tracked_leafs_reason_says_how_a_leaf_gets_its_flag(session):
    graded = await grade(question("parameters/parameter-state"),
                         {"requires_grad": "False", "is_leaf": "True", "grad_fn": "None", "grad": "None"}, session)
    assert not graded.correct
    assert "created with the flag on" not in graded.feedback and "nn.Parameter" in graded.feedback, graded.feedback


# A misconception names only what the learner was shown in the question (autograd-again shows no d2).
async def test_autograd_again_feedback_names_no_function_the_question_never_showed(session):
    graded = await grade(question("func-higher-order/autograd-again"), "tensor(24.)", session)
    assert not graded.correct
    assert "d2" not in graded.feedback, graded.feedback


async def test_a_none_grad_after_a_backward_is_not_said_to_have_had_none(session):
    # L03 zero-grad-none: a backward did run (the cell showed p.grad); zero_grad() emptied it, so the words for
    # an unnamed wrong answer may not claim that no backward pass wrote into it (blind play-through)
    graded = await grade(question("accumulation/zero-grad-none"), "1", session)
    assert not graded.correct
    assert "no backward pass" not in graded.feedback and "zero_grad()" in graded.feedback, graded.feedback
