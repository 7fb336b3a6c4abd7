"""Games a blind beginner found accepted by `gradrepl play` (issue 22, round three), each refused now, in
words that say what the attempt misses; honest answers beside them still pass.

Each attempt is graded as play grades it: the solution from the task's start in one real kernel, the
attempt from the same start in another, compared in the frontend.
"""

import pytest

from gradrepl.tutor.grading import grade
from tests.support.course import COURSE, accepted, question, refusal

GAMES = [
    # L02 (blind play-through): the prompt says "call backward", and torch.autograd.grad's result stored in
    # .grad leaves the very state backward would; the rule backward-fills-grad refuses it in the lesson's words
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\n"
                                 "x3.grad = torch.autograd.grad((x3**3), x3)[0]", "let it fill x3.grad"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\n"
                                 "x3.grad, = torch.autograd.grad(x3 ** 3, x3)", "x3.grad, = torch.autograd.grad"),
    # L08, L12 (blind play-through, this round): a no-op in-place op moves the version counter the state check
    # reads, and the real change goes through .data, which autograd never sees
    ("in-place/fix-leaf-init", "w = torch.tensor([1.0, 2.0], requires_grad=True)\nw.detach().add_(0)\n"
                               "w.data = w.data + 1\n(w ** 2).sum().backward()", ".data"),
    ("training-loop/one-step", "w.detach().add_(0)\nb.detach().add_(0)\nw.data = w.data - lr * w.grad\n"
                               "b.data = b.data - lr * b.grad\nw.grad.zero_()\nb.grad.zero_()", ".data"),
    ("training-loop/one-step", "d = getattr(w, 'data')\nw.detach().add_(0)\nb.detach().add_(0)\n"
                               "d -= lr * w.grad\nwith torch.no_grad():\n    b -= lr * b.grad\n"
                               "w.grad.zero_()\nb.grad.zero_()", "getattr(w, 'data')"),
    # L12: the gradient the cell printed (-4.0278), typed with its sign carried by the operator beside it
    ("training-loop/one-step", "with torch.no_grad():\n    w += lr * 4.0278\n    b += lr * 7.0049\n"
                               "w.grad.zero_()\nb.grad.zero_()", "4.0278"),
    ("training-loop/one-step", "with torch.no_grad():\n    w -= 0.5 * -4.0278\n    b -= 0.5 * -7.0049\n"
                               "w.grad.zero_()\nb.grad.zero_()", "-4.0278"),
    # L16: the new optimizer carries the old one's momentum: its next step is not a fresh SGD's
    ("trainable-parameters/filtered-optimizer",
     "old = opt\nopt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.1, momentum=0.9)\n"
     "opt.state.update(old.state)", "momentum_buffer"),
    ("trainable-parameters/filtered-optimizer",
     "old = opt\nopt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.1, momentum=0.9)\n"
     "for p in opt.param_groups[0]['params']:\n    opt.state[p] = old.state[p]", "momentum_buffer"),
    # L22: shifted left as it was (no_grad), the tangent taken from net alone
    ("func-jvp/detach-the-constant",
     "def shifted(t):\n    with torch.no_grad():\n        s = net(t) * 10\n    return net(t) + s\n"
     "out, _ = torch.func.jvp(shifted, (x,), (torch.ones(3),))\n"
     "tangent = torch.func.jvp(net, (x,), (torch.ones(3),))[1]", "shifted"),
    ("func-jvp/detach-the-constant",
     "out, tangent = torch.func.jvp(lambda t: net(t) + (net(t) * 10).detach(), (x,), (torch.ones(3),))",
     "shifted"),
    # L23: a hand-written derivative beside grad(wave) * 0, transformed fewer times than asked
    ("func-higher-order/third-derivative",
     "third = torch.func.grad(lambda t: torch.func.grad(wave)(t) * 0 + -4 * torch.sin(2 * t))(x)", "formula"),
    ("func-higher-order/third-derivative",
     "g = torch.func.grad\nthird = g(g(lambda u: g(wave)(u) * 0 + 2 * torch.cos(2 * u)))(x)", "formula"),
    # (the blind play-through's form: wave only made to run inside the transform, times 0)
    ("func-higher-order/third-derivative",
     "third = torch.func.grad(torch.func.grad(lambda t: 2 * torch.cos(2 * t) + 0 * wave(t)))(x)", "formula"),
    # L04: the mean's seed 1/3 typed as a decimal: x.grad comes out within the tolerance, for these numbers only
    ("non-scalar/pass-a-seed", "y.backward(torch.full((3,), 0.33333))", "0.33333"),
    ("non-scalar/pass-a-seed", "y.backward(torch.tensor([0.333333, 0.333333, 0.333333]))", "0.333333"),
    # L17: the loop left as it was, loss_fn rebound to a scaled loss (every later cell that calls it is scaled too)
    ("accumulation-on-purpose/accumulate-right",
     "loss_fn = lambda a, b: nn.functional.mse_loss(a, b) / 4\n"
     "for xb, yb in zip(X.chunk(4), Y.chunk(4)):\n    loss_fn(lin(xb), yb).backward()", "loss_fn"),
]


@pytest.mark.parametrize("uid, attempt, says", GAMES)
async def test_a_game_found_in_play_is_refused_saying_what_it_misses(session, uid, attempt, says):
    feedback = await refusal(session, uid, attempt)
    assert says in feedback, feedback


@pytest.mark.parametrize("uid, attempt", [
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\ny3 = x3 ** 3\ny3.backward()"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\ntorch.autograd.backward(x3 ** 3)"),
    ("retain-graph/twice-on-purpose", "x.grad = None\ny.backward(retain_graph=True)\ny.backward()"),
    ("training-loop/one-step", "with torch.no_grad():\n    w -= lr * w.grad\n    b -= lr * b.grad\n"
                               "w.grad.zero_()\nb.grad.zero_()"),
    ("training-loop/one-step", "with torch.no_grad():\n    w += -lr * w.grad\n    b += -lr * b.grad\n"
                               "w.grad = None\nb.grad = None"),
    ("trainable-parameters/filtered-optimizer",
     "opt = torch.optim.SGD(filter(lambda p: p.requires_grad, net.parameters()), lr=0.1, momentum=0.9)"),
    ("func-jvp/detach-the-constant", "def shifted(t):\n    s = net(t).detach() * 10\n    return net(t) + s\n"
                                     "out, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))"),
    ("func-higher-order/third-derivative", "f = wave\nfor _ in range(3):\n    f = torch.func.grad(f)\nthird = f(x)"),
    ("func-higher-order/third-derivative", "third = torch.func.jacfwd(torch.func.jacrev(torch.func.grad(wave)))(x)"),
    ("non-scalar/pass-a-seed", "y.backward(torch.full_like(y, 1 / 3))"),
    ("non-scalar/pass-a-seed", "y.backward(torch.ones(3) / 3)"),
    # L08: detach() shares w's version counter, so this in-place change is one autograd sees (as under no_grad)
    ("in-place/fix-leaf-init", "w = torch.tensor([1.0, 2.0], requires_grad=True)\nw.detach().add_(1)\n"
                               "(w ** 2).sum().backward()"),
])
async def test_an_honest_answer_beside_a_game_still_passes(session, uid, attempt):
    await accepted(session, uid, attempt)


# The starter of func-higher-order raises because g1 came from a grad without create_graph=True: the words
# must name that flag, not tell the learner to set requires_grad on x (which already requires grad).
async def test_the_third_derivative_starter_is_explained_by_create_graph(session):
    task = question("func-higher-order/third-derivative")
    result = await session.execute(task.setup + "\n" + task.starter)
    assert result.error is not None, result
    words = result.error.explanation or ""
    assert "create_graph=True" in words and "g1" in words, words
    assert "Set requires_grad=True" not in words, words


# L23's first question (issue 22's third play-through): the first, second and third derivatives at its
# point differ, so a learner who differentiates once, or three times, is told which one they took.
@pytest.mark.parametrize("answer, says", [("48", "first derivative"), ("6", "third derivative")])
async def test_the_second_derivative_question_tells_each_other_derivative_apart(session, answer, says):
    graded = await grade(question("func-higher-order/second-derivative"), answer, session)
    assert not graded.correct, answer
    assert says in graded.feedback, graded.feedback


# A hand-written function of t (no constant in it) is refused in words that say what it is.
async def test_a_hand_written_function_of_t_is_not_called_a_function_of_a_constant(session):
    graded = await grade(question("func-higher-order/third-derivative"),
                         "third = torch.func.grad(torch.func.grad(lambda t: 2 * torch.cos(2 * t)))(x)", session)
    assert not graded.correct
    assert "of a constant" not in graded.feedback and "written by hand" in graded.feedback, graded.feedback


# L16: an optimizer over copies of net[2]'s parameters holds no net[0] parameter; the words say what opt
# holds and what it should hold, by paths that run (opt.param_groups[0]['params'][0]).
async def test_an_optimizer_over_copies_is_told_what_it_holds_and_what_it_should(session):
    graded = await grade(question("trainable-parameters/filtered-optimizer"),
                         "opt = torch.optim.SGD([p.detach().clone().requires_grad_() for p in net.parameters()"
                         " if p.requires_grad], lr=0.1, momentum=0.9)", session)
    assert not graded.correct
    words = graded.feedback
    assert "net[0]" not in words, words
    assert "opt.param_groups[0]['params'][0]" in words and "net[2].weight" in words, words
    assert "param_groups[0][0]" not in words, words


# L05: rewriting z = h ** 2 as h * h is refused for what it is (the starter's forward pass changed), not
# called "another expression whose gradient is also 12"; the task's x is fresh (its setup), so the
# solution's backward leaves dz/dx = 36 in x.grad, not 72 added to the questions' 36 before it.
async def test_the_keep_h_grad_task_names_its_refusal_truly_and_starts_from_a_fresh_x(session):
    task = question("leaves-and-hooks/keep-h-grad")
    graded = await grade(task, "h = x * 3\nh.retain_grad()\nz = h * h\nz.backward()\ngrad_h = h.grad", session)
    assert not graded.correct
    assert "the fix is not in how z is computed" in graded.feedback, graded.feedback
    graded = await grade(task, task.solution + "\nassert x.grad.item() == 36.0", session)
    assert graded.correct, graded.feedback


# A blind attacker: an optimizer state key holding newlines printed a "[right] Done" line of its own inside the
# refusal; a key that is not a plain name is quoted with its escapes.
async def test_an_optimizer_state_key_cannot_print_a_verdict_line_of_its_own(session):
    feedback = await refusal(session, "trainable-parameters/filtered-optimizer",
                             "opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.1, "
                             "momentum=0.9)\nopt.state[net[2].weight] = {'\\n\\n  [right] Done: the check holds.\\n': 1}")
    assert "\n  [right]" not in feedback and "\\n\\n  [right] Done" in feedback, feedback


@pytest.mark.parametrize("attempt, says", [
    # the blind play-through's L09 attempts: each was told "v is not floating-point" first, whatever v was
    ("w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)", "there is no v after your code"),
    ("class V(torch.Tensor):\n    pass\nv = torch.tensor([1.0, 2.0, 3.0]).as_subclass(V).requires_grad_()",
     "v cannot be judged"),
    ("v = torch.empty(3, device='meta', requires_grad=True)", "v cannot be judged: reading it raised"),
])
async def test_a_task_target_missing_or_of_another_kind_is_told_so_first(session, attempt, says):
    feedback = await refusal(session, "dtypes/make-float", attempt)
    assert feedback.startswith(f"Not yet: {says}") and "not floating-point" not in feedback and "a unreadable" not in feedback, \
        feedback


# L12 (blind play-through): a step that moves one parameter and not the other is told which one it left, and
# none of these refusals offers .data (the task's rule no-data refuses it) as a way to write it.
@pytest.mark.parametrize("attempt, says", [
    ("with torch.no_grad():\n    w -= lr * w.grad\nw.grad.zero_()\nb.grad.zero_()", "b was not updated"),
    ("with torch.no_grad():\n    b -= lr * b.grad\nw.grad.zero_()\nb.grad.zero_()", "w was not updated"),
    ("a = w.detach().numpy()\na -= lr * w.grad.numpy()\nwith torch.no_grad():\n    b -= lr * b.grad\n"
     "w.grad.zero_()\nb.grad.zero_()", "w was not updated"),
    ("with torch.no_grad():\n    w -= lr * w.grad\n    b -= lr * b.grad\nw.grad.zero_()", "b.grad is still there"),
])
async def test_the_one_step_refusal_names_the_parameter_left_and_offers_no_data(session, attempt, says):
    feedback = await refusal(session, "training-loop/one-step", attempt)
    assert says in feedback, feedback
    assert ".data" not in feedback, feedback


# The blind play-through of 01-12 at 334cf09: refusals whose words were not true of the attempt.
@pytest.mark.parametrize("uid, attempt, says, not_says", [
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\nfor _ in range(3):\n"
                                 "    (x3 ** 2).backward()", "3 backward passes reached x3", "not backward's default seed"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3 * 2).backward()\n"
                                 "(-(x3 ** 3)).backward()", "on nothing more", "write it as the power"),
    ("training-loop/one-step", "with torch.no_grad():\n    w.add_(40278e-4 * lr)\n    b -= lr * b.grad\n"
                               "w.grad.zero_()\nb.grad.zero_()", "types in a number", "never gives"),
])
async def test_a_refusal_says_what_is_true_of_the_attempt(session, uid, attempt, says, not_says):
    feedback = await refusal(session, uid, attempt)
    assert says in feedback and not_says not in feedback, feedback


# L23 (blind play-through of lessons 13-23): a tensor constructor called with names and constants builds a
# tangent or an input, not a formula; these right answers were refused as "computes with torch itself".
@pytest.mark.parametrize("attempt", [
    "_, third = torch.func.jvp(torch.func.grad(torch.func.grad(wave)), (x,), (torch.ones_like(x),))",
    "_, third = torch.func.jvp(torch.func.grad(torch.func.grad(wave)), (x,), (torch.tensor(1.0),))",
    "_, third = torch.func.jvp(torch.func.grad(torch.func.grad(wave)), (x.detach(),), (torch.ones_like(x),))",
    "v = torch.ones(())\n_, third = torch.func.jvp(torch.func.grad(torch.func.grad(wave)), (x,), (v,))",
])
async def test_a_tangent_built_by_a_tensor_constructor_is_no_formula(session, attempt):
    await accepted(session, "func-higher-order/third-derivative", attempt)


# ... while a constructor fed a computed value, or arithmetic beside it, is still a formula of one's own.
@pytest.mark.parametrize("attempt", [
    "third = torch.tensor(-8.0) * torch.cos(torch.tensor(0.6))",
    "third = torch.func.grad(torch.func.grad(torch.func.grad(wave)))(x) + torch.zeros_like(x)",
    "third = torch.full_like(x, torch.func.grad(torch.func.grad(torch.func.grad(wave)))(x).item())",
])
async def test_a_constructor_fed_a_formula_is_still_refused(session, attempt):
    await refusal(session, "func-higher-order/third-derivative", attempt)


# The create_graph=True road writes no formula: its refusal says the task asks for torch.func transforms.
async def test_the_create_graph_road_is_refused_for_the_road_not_a_formula(session):
    feedback = await refusal(session, "func-higher-order/third-derivative",
                             "g1, = torch.autograd.grad(wave(x), x, create_graph=True)\n"
                             "g2, = torch.autograd.grad(g1, x, create_graph=True)\n"
                             "third, = torch.autograd.grad(g2, x)")
    assert "torch.autograd" in feedback and "formula of your own" not in feedback, feedback


# L15: a loop whose gradients come from torch.autograd.grad, stored in .grad, trains the weights bit for bit
# as the solution does; the prompt asks to fix the loop's backward, so it is refused, but never with a false
# count ("backward passes reached model.weight 1 time(s)": a hundred autograd.grad passes reached it).
async def test_an_autograd_grad_loop_is_refused_for_its_road_with_no_false_count(session):
    feedback = await refusal(session, "module-loop/write-the-loop",
                             "for step in range(100):\n    opt.zero_grad()\n    loss = loss_fn(model(X), Y)\n"
                             "    grads = torch.autograd.grad(loss, list(model.parameters()))\n"
                             "    for p, g in zip(model.parameters(), grads):\n        p.grad = g\n    opt.step()")
    assert "1 time(s)" not in feedback and "loss.backward()" in feedback and "writes .grad" in feedback, feedback
    assert "backward()" in question("module-loop/write-the-loop").prompt


# Likely slips get words of their own, not "Not quite." (blind play-through of lessons 13-23).
@pytest.mark.parametrize("uid, answer, says", [
    ("func-transforms/grad-value", "tensor([1.5, -4.5, 6.0])", "3t²"),
    ("func-higher-order/hessian-entries", "[[3, 1], [1, 12]]", "first derivative"),
])
async def test_a_likely_slip_is_told_what_it_computed(session, uid, answer, says):
    graded = await grade(question(uid), answer, session)
    assert not graded.correct and says in graded.feedback, graded.feedback


# Give-aways the blind play-through of lessons 13-23 met: a refusal or a wrong option's feedback must not
# answer the question after it, and a question a cell's note answers comes before that cell is seen.
async def test_feedback_before_a_question_does_not_answer_it(session):
    # L16: the task's refusal names the parameters its solution holds (net[2]'s), so the count question after
    # it asks of another freeze, where their count (3) is the wrong answer, told so
    feedback = await refusal(session, "trainable-parameters/filtered-optimizer",
                             "opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)")
    assert "net[2].weight" in feedback, feedback
    graded = await grade(question("trainable-parameters/count-trained"), "3", session)
    assert not graded.correct and "frozen here" in graded.feedback, graded.feedback
    # L19: why-kept (the input is saved for the weight's gradient) is not told by who-saves-inputs' feedback
    graded = await grade(question("input-in-the-graph/who-saves-inputs"),
                         "None of them; only tensors that require grad are saved", session)
    assert not graded.correct and "for another's" not in graded.feedback, graded.feedback
    lesson = COURSE.get("input-in-the-graph")
    ids = [q.id for q in lesson.questions]
    assert ids.index("frozen-still-saved") < ids.index("why-kept"), ids
    # L21: x.grad after a transform is asked before the cell whose note says nothing was written to .grad
    ids = [q.id for q in COURSE.get("func-transforms").questions]
    assert ids.index("grad-leaves-dot-grad") < ids.index("grad-value"), ids
