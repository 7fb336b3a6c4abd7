"""Fixes that fix nothing are refused by the shipped course's tasks (issue 22 §1), and right ones are not.

Each gaming attempt is one a learner typed while playing the course: a target
hard-coded, a name the old expression checks read rebound (or torch patched),
or a half-fix. Grading runs in real kernels: the solution from the task's start
in one, the attempt from the same start in another, compared in the frontend.
"""

import pytest

from gradrepl.tutor.grading import grade
from tests.support.course import accepted, question, refusal


HARD_CODED = [
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\nx3.grad = torch.tensor(12.)"),
    ("non-scalar/pass-a-seed", "x.grad = torch.full((3,), 2 / 3)"),
    ("leaves-and-hooks/keep-h-grad", "h = x * 3\nz = h ** 2\nz.backward()\ngrad_h = torch.tensor(12.)"),
    ("module-loop/write-the-loop", "with torch.no_grad():\n    model.weight.copy_(torch.tensor([[2.0, -1.0]]))\n"
                                   "    model.bias.fill_(1.0)"),
    ("in-place/out-of-place", "a.grad = torch.tensor([0.5, 0.3932])"),
    ("in-place/fix-leaf-init", "w = torch.tensor([2.0, 3.0], requires_grad=True)\nw.grad = torch.tensor([4.0, 6.0])"),
]

REBOUND = [
    ("retain-graph/twice-on-purpose", "_passes = [1, 1]\nx.grad = torch.tensor(14.)"),
    ("accumulation-on-purpose/accumulate-right", "_backwards = [1] * 4\nlin.weight.grad = g_full.clone()"),
    ("tracking/opt-in-later", "w = torch.ones(3, requires_grad=True)\n_w_given = w"),
    ("accumulation/zero-it", "x.grad = torch.zeros(())\n_grad_given = x.grad"),
    ("trainable-parameters/filtered-optimizer",
     "_trainable = list(net.parameters())\nopt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)"),
    ("module-loop/write-the-loop", "loss_fn = lambda a, b: torch.tensor(0.0)"),
    ("training-loop/one-step", "torch.allclose = lambda *a, **k: True\nw.grad.zero_()\nb.grad.zero_()"),
    ("autograd-grad/gradient-penalty", "w.grad = _penalty_grad.clone()"),
    ("autograd-grad/gradient-penalty", "w.grad = torch.tensor([0.0] * 3)\ntorch.allclose = lambda *a, **k: True"),
]

HALF_FIXES = [
    ("accumulation-on-purpose/accumulate-right",
     "for xb, yb in zip(X.chunk(4), Y.chunk(4)):\n    loss_fn(lin(xb), yb).backward()\nlin.weight.grad /= 4"),
    ("parameters/freeze-first", "model[0] = nn.Linear(3, 4).requires_grad_(False)"),
    ("non-scalar/pass-a-seed", "y.mean().backward()"),
    ("in-place/out-of-place", "s = a.sigmoid().clone()\ns.mul_(2)\ns.sum().backward()"),
]


# Found by attacking each task by hand, beyond lint's generic moves: another function with the same
# slope, passes whose sum is right, a gradient read from the wrong place, a rule met in dead code.
BY_HAND = [
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 * 12).backward()"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\n(3 * x3 ** 2).backward()"),
    ("in-place/fix-leaf-init", "w = torch.tensor([2.0, 3.0], requires_grad=True)\n(w * (2 * w.detach())).sum().backward()"),
    ("module-loop/write-the-loop", "A = torch.cat([X, torch.ones(64, 1)], 1)\nsol = torch.linalg.lstsq(A, Y).solution\n"
                                   "with torch.no_grad():\n    model.weight.copy_(sol[:2].T)\n    model.bias.copy_(sol[2])\n"
                                   "for _ in range(100):\n    model(X).sum().backward()"),
    ("accumulation-on-purpose/accumulate-right", "for i in range(4):\n    (loss_fn(lin(X), Y) / 4).backward()"),
    ("in-place/out-of-place", "s = a.sigmoid().clone()\nm = s.mul_\nm(2)\ns.sum().backward()"),
    ("leaves-and-hooks/keep-h-grad", "h = x * 3\nh.retain_grad()\n(h ** 2).backward()\ngrad_h = x.grad / 3"),
    ("non-scalar/pass-a-seed", "if False:\n    y.backward(torch.ones(3) / 3)\ny.mean().backward()"),
    ("leaves-and-hooks/keep-h-grad", "h = x * 3\nz = h ** 2\nz.backward()\nh.retain_grad()\nh.grad = 2 * h.detach()\n"
                                     "grad_h = h.grad"),
]


# Found by a blind play-through: torch or an object patched so that the unfixed starter passes, grad
# mode left off for good.
PATCHED = [
    ("leaves-and-hooks/keep-h-grad", "h = x * 3\nz = h ** 2\n_b = torch.Tensor.backward\n"
     "torch.Tensor.backward = lambda self, *a, **k: (h.retain_grad(), _b(self, *a, **k))[1]\n"
     "z.backward()\ngrad_h = h.grad"),
    ("module-loop/write-the-loop", "_s = opt.step\nopt.step = lambda *a, **k: (_s(*a, **k), opt.zero_grad())[0]\n"
     "for step in range(100):\n    loss = loss_fn(model(X), Y)\n    loss.backward()\n    opt.step()"),
    ("autograd-grad/gradient-penalty", "import functools\n"
     "torch.autograd.grad = functools.partial(torch.autograd.grad, create_graph=True)"),
    ("training-loop/one-step", "torch.set_grad_enabled(False)\nw -= lr * w.grad\nb -= lr * b.grad\n"
     "w.grad.zero_()\nb.grad.zero_()"),
]


# Found by a second blind play-through: a backward seed chosen to make the number come out on the wrong
# graph, a cancelling backward, the input gradient derived by hand, gradient numbers typed in.
BLIND = [
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 2).backward(torch.tensor(3.0))"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\nx3.pow(1).backward(torch.tensor(12.0))"),
    ("non-scalar/pass-a-seed", "y.mean().backward(retain_graph=True); y.backward(torch.zeros(3))"),
    ("retain-graph/twice-on-purpose", "y.backward(torch.tensor(2.0), retain_graph=True); y.backward(torch.tensor(0.0))"),
    ("retain-graph/twice-on-purpose", "y.backward(torch.tensor(3.0), retain_graph=True); y.backward(torch.tensor(-1.0))"),
    ("accumulation/zero-it", "(-2 * (x ** 2 + 3 * x)).backward()"),
    ("accumulation/zero-it", "x.grad.sub_(14)"),
    ("autograd-grad/gradient-penalty", "g = w * (1 - (w * inp).tanh() ** 2)\npenalty = (g.norm() - 1) ** 2\n"
                                       "penalty.backward()"),
    ("autograd-grad/gradient-penalty", "g = w / torch.cosh(w * inp) ** 2\npenalty = (g.norm() - 1) ** 2\n"
                                       "penalty.backward()"),
    ("training-loop/one-step", "with torch.no_grad():\n    w -= lr * torch.tensor([-4.0278239250183105])\n"
                               "    b -= lr * torch.tensor([-7.004881858825684])\nw.grad.zero_()\nb.grad.zero_()"),
]


# Found by a third blind play-through: a gradient hook rescales the gradient as backward runs, so the
# wrong computation's state matches the solution's.
@pytest.mark.parametrize("uid, attempt", [
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\nhk = x3.register_hook(lambda g: g * 3)\n"
                                 "(x3 ** 2).backward()"),
    ("accumulation-on-purpose/accumulate-right",
     "for p in lin.parameters():\n    p.register_hook(lambda g: g / 4)\n"
     "for xb, yb in zip(X.chunk(4), Y.chunk(4)):\n    loss_fn(lin(xb), yb).backward()"),
    ("in-place/fix-leaf-init", "w = torch.tensor([2.0, 3.0], requires_grad=True)\n"
                               "w.register_hook(lambda g: g * 2)\n(w * w.detach()).sum().backward()"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\ny = x3 ** 2\n"
                                 "y.grad_fn.register_hook(lambda gi, go: (gi[0] * 3,))\ny.backward()"),
])
async def test_a_gradient_hook_is_refused_with_why(session, uid, attempt):
    feedback = await refusal(session, uid, attempt, "a hook")
    assert "hook" in feedback, feedback


@pytest.mark.parametrize("uid, attempt, says", [
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 2).backward(torch.tensor(3.0))",
     "seed"),
    ("retain-graph/twice-on-purpose", "y.backward(torch.tensor(2.0), retain_graph=True); y.backward(torch.tensor(0.0))",
     "seed"),
    ("accumulation/zero-it", "(-2 * (x ** 2 + 3 * x)).backward()", "backward"),
    ("accumulation/zero-it", "x.grad.sub_(14)", "x.grad.sub_(14)"),
    ("autograd-grad/gradient-penalty", "g = w / torch.cosh(w * inp) ** 2\npenalty = (g.norm() - 1) ** 2\n"
                                       "penalty.backward()", "torch.autograd.grad"),
    ("training-loop/one-step", "with torch.no_grad():\n    w -= lr * torch.tensor([-4.0278239250183105])\n"
                               "    b -= lr * torch.tensor([-7.004881858825684])\nw.grad.zero_()\nb.grad.zero_()",
     "-4.0278"),
])
async def test_a_blind_fix_is_refused_with_what_it_misses(session, uid, attempt, says):
    feedback = await refusal(session, uid, attempt)
    assert says in feedback, feedback


@pytest.mark.parametrize("uid, attempt", [
    ("in-place/out-of-place", "s = a.sigmoid()\ns = s + s\ns.sum().backward()"),
    ("in-place/out-of-place", "s = torch.add(a.sigmoid(), a.sigmoid())\ns.sum().backward()"),
    ("trainable-parameters/filtered-optimizer",
     "opt = torch.optim.SGD(filter(lambda p: p.requires_grad, net.parameters()), lr=0.1, momentum=0.9)"),
    ("training-loop/one-step", "torch.set_grad_enabled(False)\nw -= lr * w.grad\nb -= lr * b.grad\n"
     "torch.set_grad_enabled(True)\nw.grad.zero_()\nb.grad.zero_()"),
    ("accumulation-on-purpose/accumulate-right",
     "for xb, yb in zip(X.chunk(4), Y.chunk(4)):\n    loss_fn(lin(xb), yb).backward(torch.tensor(0.25))"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3.0).backward(torch.tensor(1.0))"),
    ("retain-graph/twice-on-purpose", "y.backward(torch.tensor(1.0), retain_graph=True)\ny.backward(torch.ones(()))"),
    ("accumulation/zero-it", "x.grad.fill_(0)"),
    ("autograd-grad/gradient-penalty", "g = torch.autograd.grad(outputs=[out], inputs=[inp], create_graph=True)[0]\n"
                                       "penalty = (g.norm() - 1) ** 2\npenalty.backward()"),
    ("autograd-grad/gradient-penalty", "out2 = (w * inp).tanh().sum()\n"
                                       "g = torch.autograd.grad(out2, inp, create_graph=True)[0]\n"
                                       "penalty = (g.pow(2).sum().sqrt() - 1) ** 2\npenalty.backward()"),
    ("training-loop/one-step", "with torch.no_grad():\n    w.add_(w.grad, alpha=-lr)\n    b.add_(b.grad, alpha=-lr)\n"
                               "w.grad.zero_()\nb.grad.zero_()"),
])
async def test_right_answers_in_another_form_still_pass(session, uid, attempt):
    await accepted(session, uid, attempt)


@pytest.mark.parametrize("uid, attempt", BY_HAND + PATCHED + BLIND)
async def test_a_fix_found_by_hand_is_refused(session, uid, attempt):
    await refusal(session, uid, attempt, "a fix found by hand")


@pytest.mark.parametrize("uid, attempt", HARD_CODED)
async def test_a_hard_coded_target_is_refused(session, uid, attempt):
    await refusal(session, uid, attempt, "a hard-coded answer")


@pytest.mark.parametrize("uid, attempt", REBOUND)
async def test_rebinding_what_a_check_read_or_patching_torch_is_refused(session, uid, attempt):
    await refusal(session, uid, attempt, "a rebinding")


@pytest.mark.parametrize("uid, attempt", HALF_FIXES)
async def test_a_half_fix_is_refused(session, uid, attempt):
    await refusal(session, uid, attempt, "a half-fix")


@pytest.mark.parametrize("uid, attempt, says", [
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\nx3.grad = torch.tensor(12.)",
     "not be written in by hand"),
    ("parameters/freeze-first", "model[0] = nn.Linear(3, 4).requires_grad_(False)",
     "freeze it, do not replace it"),
    ("non-scalar/pass-a-seed", "y.mean().backward()", "pass the gradient argument"),
    ("in-place/out-of-place", "s = a.sigmoid().clone()\ns.mul_(2)\ns.sum().backward()", "s.mul_(2)"),
    ("accumulation-on-purpose/accumulate-right",
     "for xb, yb in zip(X.chunk(4), Y.chunk(4)):\n    loss_fn(lin(xb), yb).backward()\nlin.weight.grad /= 4",
     "lin.bias.grad"),
    ("module-loop/write-the-loop", "with torch.no_grad():\n    model.weight.copy_(torch.tensor([[2.0, -1.0]]))\n"
                                   "    model.bias.fill_(1.0)", "backward"),
    ("leaves-and-hooks/keep-h-grad", "import sys\ngrad_h = sys.modules", "reaches into"),
])
async def test_each_refusal_says_what_the_attempt_misses(session, uid, attempt, says):
    feedback = await refusal(session, uid, attempt)
    assert says in feedback, feedback


@pytest.mark.parametrize("uid, attempt", [
    ("tracking/opt-in-later", "w.requires_grad = True"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2., requires_grad=True)\ny = x3 ** 3\ny.backward()"),
    ("accumulation/zero-it", "x.grad.mul_(0)"),
    ("non-scalar/pass-a-seed", "y.backward(gradient=torch.ones(3) / 3)"),
    ("non-scalar/pass-a-seed", "torch.autograd.backward(y, torch.full_like(y, 1 / 3))"),
    ("leaves-and-hooks/keep-h-grad", "h = x * 3\nh.retain_grad()\nz = h ** 2\nz.backward()\ngrad_h = h.grad"),
    ("leaves-and-hooks/keep-h-grad", "h = x * 3\nh.retain_grad()\nz = h.pow(2)\ntorch.autograd.backward(z)\n"
                                     "grad_h = h.grad"),
    ("retain-graph/twice-on-purpose", "y.backward(retain_graph=True)\ny.backward(retain_graph=True)"),
    ("in-place/fix-leaf-init", "w = torch.tensor([1.0, 2.0], requires_grad=True)\nwith torch.no_grad():\n"
                               "    w.add_(1)\n(w ** 2).sum().backward()"),
    ("in-place/out-of-place", "s = 2 * a.sigmoid()\ns.sum().backward()"),
    ("dtypes/make-float", "v = torch.tensor([1, 2, 3], dtype=torch.float32).requires_grad_()"),
    ("parameters/freeze-first", "model[0].requires_grad_(False)"),
    ("training-loop/one-step", "with torch.no_grad():\n    w.sub_(lr * w.grad)\n    b.sub_(lr * b.grad)\n"
                               "w.grad = None\nb.grad = None"),
    ("autograd-grad/gradient-penalty", "g = torch.autograd.grad(out, inp, create_graph=True)[0]\n"
                                       "((g.norm() - 1) ** 2).backward()"),
    ("module-loop/write-the-loop", "for _ in range(100):\n    opt.zero_grad()\n    loss_fn(model(X), Y).backward()\n"
                                   "    opt.step()"),
    ("trainable-parameters/filtered-optimizer",
     "opt = torch.optim.SGD([p for _, p in net.named_parameters() if p.requires_grad], lr=0.1, momentum=0.9)"),
    ("accumulation-on-purpose/accumulate-right",
     "for xb, yb in zip(X.chunk(4), Y.chunk(4)):\n    loss = loss_fn(lin(xb), yb) / 4\n    loss.backward()"),
])
async def test_right_answers_written_another_way_still_pass(session, uid, attempt):
    await accepted(session, uid, attempt)


# z made but never backpropagated: another graph through h whose gradient at h is also 12.
async def test_keep_h_grad_refuses_a_backward_that_skips_z(session):
    attempt = "h = x * 3\nh.retain_grad()\nz = h ** 2\n(h * h.detach() * 2).backward()\ngrad_h = h.grad"
    graded = await grade(question("leaves-and-hooks/keep-h-grad"), attempt, session)
    assert not graded.correct, f"accepted: {attempt!r}"
    assert "through z" in graded.feedback, graded.feedback


# A refusal's words must be true of the attempt: these tensors do require grad.
@pytest.mark.parametrize("uid, attempt, says, never", [
    ("dtypes/make-float", "v = torch.tensor([1., 2., 3.], requires_grad=True) * 1", "leaf",
     "does not require grad"),
    ("tracking/opt-in-later", "w = nn.Parameter(w)", "nn.Parameter", "does not require grad"),
])
async def test_a_refusal_says_what_is_true_of_the_attempt(session, uid, attempt, says, never):
    feedback = await refusal(session, uid, attempt)
    assert says in feedback and never not in feedback, feedback


# Found by a fourth blind play-through: honest answers the checks refused. The optimizer is judged by the
# parameters it really holds (net[2]'s are exactly the trainable ones), not by whether the code reads a
# requires_grad flag (a dead line reading one passed); a Parameter made from a float tensor is floating-point.
@pytest.mark.parametrize("uid, attempt", [
    ("trainable-parameters/filtered-optimizer", "opt = torch.optim.SGD(net[2].parameters(), lr=0.1, momentum=0.9)"),
    ("trainable-parameters/filtered-optimizer",
     "opt = torch.optim.SGD(list(net.parameters())[2:], lr=0.1, momentum=0.9)"),
    ("trainable-parameters/filtered-optimizer",
     "opt = torch.optim.SGD([net[2].weight, net[2].bias], lr=0.1, momentum=0.9)"),
    ("dtypes/make-float", "v = nn.Parameter(torch.tensor([1., 2., 3.]))"),
    ("dtypes/make-float", "v = torch.nn.Parameter(torch.arange(1, 4).float())"),
    ("dtypes/make-float", "v = torch.arange(1., 4.).requires_grad_()"),
    # in-place writes autograd sees (detach() shares the tensor's version counter; .data does not)
    ("in-place/fix-leaf-init", "w = torch.tensor([1.0, 2.0], requires_grad=True)\nwith torch.no_grad():\n"
                               "    w += 1\n(w ** 2).sum().backward()"),
    ("in-place/fix-leaf-init", "w = torch.tensor([1.0, 2.0], requires_grad=True)\nw.detach().add_(1)\n"
                               "(w ** 2).sum().backward()"),
    ("training-loop/one-step", "with torch.no_grad():\n    w.copy_(w - lr * w.grad)\n    b.copy_(b - lr * b.grad)\n"
                               "w.grad.zero_()\nb.grad.zero_()"),
    # issue 22, a blind beginner: the penalty's gradient by autograd.grad, stored into .grad, is that pass's;
    # a Jacobian built by vmap over vjp's pull is what jacrev itself does
    ("autograd-grad/gradient-penalty", "g, = torch.autograd.grad(out, inp, create_graph=True)\n"
                                       "penalty = (g.norm() - 1) ** 2\nw.grad = torch.autograd.grad(penalty, w)[0]"),
    ("func-transforms/jacobian-by-transform", "out, pull = torch.func.vjp(net, z)\n"
                                              "J, = torch.func.vmap(pull)(torch.eye(2))"),
    ("func-transforms/jacobian-by-transform",
     "J = torch.func.vmap(lambda v: torch.func.vjp(net, z)[1](v)[0])(torch.eye(2))"),
])
async def test_an_honest_answer_is_accepted(session, uid, attempt):
    await accepted(session, uid, attempt)


@pytest.mark.parametrize("uid, attempt, says, never", [
    # a requires_grad flag read in dead code (or in a filter that keeps everything) moves nothing
    ("trainable-parameters/filtered-optimizer",
     "flags = [p.requires_grad for p in net.parameters()]\nopt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)",
     "net[0]", "requires_grad flag"),
    ("trainable-parameters/filtered-optimizer",
     "opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad or True], lr=0.1, momentum=0.9)",
     "net[0]", "requires_grad flag"),
    # a float Parameter that does not require grad: the refusal says so, not "not floating-point"
    ("dtypes/make-float", "v = nn.Parameter(torch.tensor([1., 2., 3.]), requires_grad=False)",
     "does not require grad", "floating-point"),
    ("dtypes/make-float", "v = torch.tensor([1, 2, 3])", "not floating-point", "does not require grad"),
    # a dtype named by its kind (complex64 is no integer), and a number typed a hair off the right one called
    # the learner's, not "one the solution computes" (issue 22, sixth play-through)
    ("dtypes/make-float", "v = torch.tensor([1, 2, 3], dtype=torch.complex64, requires_grad=True)", "complex",
     "integer tensors"),
    ("dtypes/make-float", "v = torch.tensor([1, 2, 3], dtype=torch.bool)", "bool", "integer tensors"),
    ("dtypes/make-float", "v = torch.tensor([1, 2, 3])", "an integer dtype", "complex dtype"),
    ("dtypes/make-float", "v = torch.tensor([1., 2., 3.00001], requires_grad=True)", "3.00001",
     "the solution computes"),
    # a deep copy keeps the trained numbers: the refusal says what it loses (the object), not the weights
    ("parameters/freeze-first", "import copy\nmodel[0] = copy.deepcopy(model[0]).requires_grad_(False)",
     "copy.deepcopy", "would throw the trained weights away"),
    # issue 22, round three's blind play-through: an object of a class of its own is not a tensor, whatever
    # its dtype attribute says; a float64 x3 is the leaf, holding 2, of another dtype; x3 * x3 * x3 is x³
    ("dtypes/make-float", "class Fake:\n    dtype = torch.float32\n    requires_grad = True\nv = Fake()",
     "not a torch.Tensor", "not floating-point"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2, dtype=torch.float64, requires_grad=True)\n(x3 ** 3).backward()",
     "torch.float64", "the leaf you made"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\ny = x3 * x3 * x3\ny.backward()",
     "the power written with `**`", "another expression"),
    # the seventh: a hand-written derivative is not told about x3 * x3 * x3; a detached h is a leaf, not told
    # "h is not a leaf"; the in-place op named is the one the attempt wrote
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\n(3 * x3 ** 2).backward()",
     "`**`", "x3 * x3 * x3"),
    ("leaves-and-hooks/keep-h-grad", "h = (x * 3).detach().requires_grad_()\nz = h ** 2\nz.backward()\ngrad_h = h.grad",
     "detach", "h is not a leaf"),
    ("in-place/out-of-place", "s = a.sigmoid().clone()\ns.add_(s.clone())\ns.sum().backward()",
     "s.add_(s.clone())", "s.mul_"),
])
async def test_a_gaming_answer_is_refused_in_true_words(session, uid, attempt, says, never):
    feedback = await refusal(session, uid, attempt)
    assert says in feedback and never not in feedback, feedback


# Found by a fifth blind play-through (issue 22, lessons 13-23): a transform of a hand-made function of
# constants computed from the task's model or function, and a penalty whose backward goes "through" g only
# as g * 0 while constants computed by hand carry the gradient.
TRANSFORM_OF_CONSTANTS = [
    ("func-transforms/jacobian-by-transform", "M = ((1 - net(z) ** 2)[:, None] * net[0].weight).detach()\n"
                                              "J = torch.func.jacrev(lambda t: M @ t)(z)", "net"),
    ("func-jvp/detach-the-constant", "W, b = net[0].weight.detach(), net[0].bias.detach()\n"
                                     "s = (torch.tanh(x @ W.T + b) * 10)\n"
                                     "def shifted(t):\n    return torch.tanh(t @ W.T + b) + s\n"
                                     "out, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))", "net"),
    ("func-higher-order/third-derivative", "c = (-8 * torch.cos(2 * x)).detach()\n"
                                           "third = torch.func.grad(lambda t: c * t)(x)", "wave"),
]


@pytest.mark.parametrize("uid, attempt, says", TRANSFORM_OF_CONSTANTS)
async def test_a_transform_of_constants_is_refused_naming_what_never_ran(session, uid, attempt, says):
    feedback = await refusal(session, uid, attempt)
    assert f"{says} never ran inside" in feedback, feedback


@pytest.mark.parametrize("uid, attempt", [
    ("func-transforms/jacobian-by-transform", "J = torch.func.jacfwd(net)(z)"),
    ("func-transforms/jacobian-by-transform", "J = torch.func.jacrev(lambda t: net(t))(z)"),
    ("func-jvp/detach-the-constant", "def shifted(t):\n    y = net(t)\n    return y + (y * 10).detach()\n"
                                     "out, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))"),
    ("func-higher-order/third-derivative", "from torch.func import grad\nthird = grad(grad(grad(wave)))(x)"),
    ("func-higher-order/third-derivative", "d = torch.func.grad\nthird = d(d(d(lambda t: wave(t))))(x)"),
])
async def test_a_transform_of_the_tasks_own_function_passes(session, uid, attempt):
    await accepted(session, uid, attempt)


# The penalty's gradient must reach w through g: a g * 0 term makes the pass go "through" g while
# constants computed by hand on detached copies carry d(penalty)/dw.
PENALTY_BY_CONSTANTS = ("w2 = w.detach().requires_grad_()\ni2 = inp.detach().requires_grad_()\n"
                        "g2, = torch.autograd.grad((w2 * i2).tanh().sum(), i2, create_graph=True)\n"
                        "cw, ci = torch.autograd.grad((g2.norm() - 1) ** 2, [w2, i2])\n"
                        "g, = torch.autograd.grad(out, inp, create_graph=True)\n"
                        "penalty = (g * 0).sum() + (w * cw).sum() + (inp * ci).sum()\npenalty.backward()")


async def test_a_penalty_that_carries_nothing_through_g_is_refused(session):
    graded = await grade(question("autograd-grad/gradient-penalty"), PENALTY_BY_CONSTANTS, session)
    assert not graded.correct, "accepted a penalty whose gradient skips g"
    assert "through g" in graded.feedback, graded.feedback


# The task asks for w.grad: a backward that fills w.grad alone (inputs=[w]) is right.
async def test_a_penalty_backward_into_w_alone_passes(session):
    attempt = ("g, = torch.autograd.grad(out, inp, create_graph=True)\npenalty = (g.norm() - 1) ** 2\n"
               "penalty.backward(inputs=[w])")
    graded = await grade(question("autograd-grad/gradient-penalty"), attempt, session)
    assert graded.correct, graded.feedback


# Found by a sixth blind play-through (issue 22): a write through .data moves no version counter, so autograd
# never saw the change the task is about; a storage swap keeps the tensor's name but not its memory.
WRITES_UNSEEN = [
    ("in-place/fix-leaf-init", "w = torch.tensor([1.0, 2.0], requires_grad=True)\nw.data.add_(1)\n"
                               "(w ** 2).sum().backward()", "version"),
    ("in-place/fix-leaf-init", "w = torch.tensor([2.0, 3.0], requires_grad=True)\n(w ** 2).sum().backward()",
     "version"),
    ("training-loop/one-step", "w.data -= lr * w.grad\nb.data -= lr * b.grad\nw.grad.zero_()\nb.grad.zero_()",
     ".data"),
    ("accumulation/zero-it", "x.grad.data = torch.tensor(0.)", "storage"),
    ("accumulation/zero-it", "x.grad.set_(torch.zeros(()))", "storage"),
]


# One tolerance for every parameter (abs + rel, as torch.allclose): a value scaled by hand by 1.0001 is
# refused on w and on b alike, not on whichever the float rounding puts past the line.
@pytest.mark.parametrize("attempt", [
    "with torch.no_grad():\n    w -= lr * w.grad * 1.0001\n    b -= lr * b.grad\nw.grad.zero_()\nb.grad.zero_()",
    "with torch.no_grad():\n    w -= lr * w.grad\n    b -= lr * b.grad * 1.0001\nw.grad.zero_()\nb.grad.zero_()",
])
async def test_a_hand_scaled_step_is_refused_on_every_parameter(session, attempt):
    graded = await grade(question("training-loop/one-step"), attempt, session)
    assert not graded.correct, f"accepted: {attempt!r}"
    assert "did not move by exactly" in graded.feedback, graded.feedback


# torch's process-wide switches: a default dtype changed is refused (the tensor passed only through it), and
# nothing an attempt switches outlives it, accepted or refused.
async def test_a_changed_default_dtype_is_refused_and_put_back(session):
    attempt = "torch.set_default_dtype(torch.float64)\nv = torch.tensor([1., 2., 3.], requires_grad=True)"
    graded = await grade(question("dtypes/make-float"), attempt, session)
    assert not graded.correct, f"accepted: {attempt!r}"
    assert "default dtype" in graded.feedback, graded.feedback
    after = await session.execute("print(torch.get_default_dtype())")
    assert after.stdout.strip() == "torch.float32", after


async def test_an_accepted_attempt_leaves_no_switch_flipped(session):
    attempt = ("torch.manual_seed(123)\ntorch.autograd.set_detect_anomaly(True)\ntorch.use_deterministic_algorithms(True)\n"
               "v = torch.tensor([1., 2., 3.], requires_grad=True)")
    graded = await grade(question("dtypes/make-float"), attempt, session)
    assert graded.correct, graded.feedback
    switches = await session.execute("print(torch.is_anomaly_enabled(), torch.are_deterministic_algorithms_enabled())\n"
                                     "print(torch.randn(3).tolist())")
    seeded = await session.execute("torch.manual_seed(123)\nprint(torch.randn(3).tolist())")
    first, drawn = switches.stdout.splitlines()
    assert first == "False False", switches
    assert drawn != seeded.stdout.strip(), "the attempt's manual_seed outlived it"


# The task's own function runs inside the transform, but only as net(t) * 0: the value comes from constants
# computed by hand at this one point. The transform, run again at moved inputs, tells them apart.
MODEL_TIMES_ZERO = [
    ("func-transforms/jacobian-by-transform", "M = torch.func.jacrev(net)(z).detach().clone()\n"
                                              "J = torch.func.jacrev(lambda t: net(t) * 0 + M @ t)(z)", "other inputs"),
    ("func-jvp/detach-the-constant", "o = net(x).detach() * 11\nd = torch.func.jvp(net, (x,), (torch.ones(3),))[1].detach()\n"
                                     "def shifted(t):\n    return net(t) * 0 + o + d @ torch.eye(3) * (t - x).sum() / 3\n"
                                     "out, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))", "other inputs"),
    ("func-higher-order/third-derivative", "c = (-8 * torch.cos(2 * x)).detach()\n"
                                           "d = torch.func.grad\nthird = d(d(d(lambda t: wave(t) * 0 + c * t ** 3 / 6)))(x)",
     "other inputs"),
]


@pytest.mark.parametrize("uid, attempt, says", WRITES_UNSEEN + MODEL_TIMES_ZERO)
async def test_a_fix_autograd_or_the_model_never_carried_is_refused(session, uid, attempt, says):
    feedback = await refusal(session, uid, attempt)
    assert says in feedback, feedback


# A gradient written by hand into .grad stays refused when it came from autograd.grad of another function, or
# was changed after; a Jacobian by vmap over the pull of a function of constants stays refused too.
@pytest.mark.parametrize("uid, attempt", [
    ("autograd-grad/gradient-penalty", "g, = torch.autograd.grad(out, inp, create_graph=True)\n"
                                       "penalty = (g.norm() - 1) ** 2\nw.grad = torch.autograd.grad(penalty * 2, w)[0] / 2"),
    ("autograd-grad/gradient-penalty", "g = w * (1 - (w * inp).tanh() ** 2)\npenalty = (g.norm() - 1) ** 2\n"
                                       "w.grad = torch.autograd.grad(penalty, w)[0]"),
    ("func-transforms/jacobian-by-transform", "M = torch.func.jacrev(net)(z).detach().clone()\n"
                                              "out, pull = torch.func.vjp(lambda t: net(t) * 0 + M @ t, z)\n"
                                              "J, = torch.func.vmap(pull)(torch.eye(2))"),
    ("func-transforms/jacobian-by-transform", "M = torch.func.jacrev(net)(z).detach().clone()\n"
                                              "J = torch.func.vmap(lambda r: r)(M)"),
    ("func-transforms/jacobian-by-transform", "M = torch.func.jacrev(net)(z).detach().clone()\n"
                                              "J = torch.func.vmap(lambda r: torch.func.vjp(net, z)[1](r * 0)[0] + r)(M)"),
])
async def test_a_game_through_autograd_grad_or_vmap_is_refused(session, uid, attempt):
    await refusal(session, uid, attempt, "a game through autograd.grad or vmap")


# A refusal never prints a number the solution computes (the learner would type it in): the gradient that
# reached g in the solution's pass is the solution's, so only the learner's own is said.
async def test_a_refusal_prints_no_number_of_the_solutions(session):
    graded = await grade(question("autograd-grad/gradient-penalty"), PENALTY_BY_CONSTANTS, session)
    assert not graded.correct
    assert "through g" in graded.feedback, graded.feedback
    for shown in ("-1.18", "0.212"):  # the solution's d(penalty)/dg, as it printed
        assert shown not in graded.feedback, graded.feedback


# Found by a seventh blind play-through (issue 22, a beginner who knows autograd): honest fixes the checks
# refused. setattr with a literal name is the assignment it spells; a method on the transform's input (x.detach())
# is no formula of the learner's.
@pytest.mark.parametrize("uid, attempt", [
    ("tracking/opt-in-later", "setattr(w, 'requires_grad', 1 > 0)"),
    ("tracking/opt-in-later", "setattr(w, \"requires_grad\", True)"),
    ("func-higher-order/third-derivative", "from torch.func import jacfwd, jacrev, grad\n"
                                           "third = jacfwd(jacrev(grad(wave)))(x.detach())"),
    ("func-higher-order/third-derivative", "g = torch.func.grad\nthird = g(g(g(wave)))(x.clone())"),
])
async def test_an_honest_fix_by_another_road_is_accepted(session, uid, attempt):
    await accepted(session, uid, attempt)


# ... and the games those roads could carry are still refused.
@pytest.mark.parametrize("uid, attempt", [
    ("tracking/opt-in-later", "w.requires_grad_(True)\nsetattr(torch, 'allclose', lambda *a, **k: True)"),
    ("tracking/opt-in-later", "setattr(w, 'requires_grad_', lambda *a: w)\nw.requires_grad = True"),
    ("tracking/opt-in-later", "n = 'requires_grad'\nsetattr(w, n, True)"),
    ("func-higher-order/third-derivative", "third = torch.func.grad(torch.func.grad(wave))(x).neg()"),
    ("func-higher-order/third-derivative", "third = torch.func.grad(torch.func.grad(torch.func.grad(wave)))(x.mul(1))"),
])
async def test_a_game_by_those_roads_is_still_refused(session, uid, attempt):
    await refusal(session, uid, attempt, "a game by setattr or a method")


# Found by a blind attacker (lesson 12, --from 2): the target values the first attempt printed, typed in the
# second as strings a conversion turns into numbers; a number is typed however it is spelled.
@pytest.mark.parametrize("attempt", [
    'with torch.no_grad():\n    w.copy_(torch.tensor([float("2.0139119625091553")]))\n'
    '    b.copy_(torch.tensor([float("3.502440929412842")]))\nw.grad = None\nb.grad = None',
    "with torch.no_grad():\n    w.copy_(torch.tensor([float(' 2.01391 ')]))\n"
    "    b.copy_(torch.tensor([float('3.50244')]))\nw.grad = None\nb.grad = None",
    "with torch.no_grad():\n    w.copy_(torch.tensor([float.fromhex('0x1.01c7de0000000p+1')]))\n"
    "    b.copy_(torch.tensor([float.fromhex('0x1.c04ffc0000000p+1')]))\nw.grad = None\nb.grad = None",
    "with torch.no_grad():\n    w.copy_(torch.tensor([float(b'2.01391'.decode())]))\n"
    "    b.copy_(torch.tensor([float(f'{3.50244}')]))\nw.grad = None\nb.grad = None",
    "s = '2.01391,3.50244'.split(',')\nwith torch.no_grad():\n    w.copy_(torch.tensor([float(s[0])]))\n"
    "    b.copy_(torch.tensor([float(s[1])]))\nw.grad = None\nb.grad = None",
    "with torch.no_grad():\n    w.copy_(torch.tensor([int('201391') / 100000]))\n"
    "    b.copy_(torch.tensor([int('350244') / 100000]))\nw.grad = None\nb.grad = None",
])
async def test_a_number_typed_as_a_string_is_typed_in(session, attempt):
    await refusal(session, "training-loop/one-step", attempt, "a number typed as a string")


# Found by a blind attacker (lesson 2, --from 8): a generator's frame walked up to the kernel's own module, whose
# reader of the task's state was replaced so that the check read a forged state.


@pytest.mark.parametrize("attempt", [
    "def g():\n    yield f.f_back\nx3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3).backward()",
    "g = (i for i in [1])\nfr = g.gi_frame\nx3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3).backward()",
    "import operator\nfr = operator.attrgetter('gi_frame')((i for i in [1]))\n"
    "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3).backward()",
    "async def c():\n    pass\nfr = c().cr_frame\nx3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3).backward()",
    "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3).backward()\nfr = (i for i in [1]).gi_frame\nc = fr.f_code",
    "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3).backward()\nq = (i for i in [1]).gi_frame.f_globals",
    "import traceback\nx3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3).backward()",
    "import operator\nfr = operator.attrgetter('gi_' + 'frame')((i for i in [1]))\n"
    "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3).backward()",
    "import string\nfr = string.Formatter().get_field('0.gi' + '_frame', [(i for i in [1])], {})\n"
    "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3).backward()",
])
async def test_frame_and_code_introspection_is_reaching_in(session, attempt):
    feedback = await refusal(session, "first-gradient/cube-task", attempt, "frame introspection")
    assert "reaches into" in feedback, feedback


# The attacker's walk itself, run where no code rule reads it (a door the static guard may not know): the
# kernel's reader of a task's state is not the one the walk replaced, and the replacement is reported.
WALK = ("def _walk():\n    yield\n_g = _walk()\n"
        "def _up():\n    fr = _g.gi_frame.f_back\n    while fr is not None and 'task_state' not in fr.f_globals:\n"
        "        fr = fr.f_back\n    return fr.f_globals\n"
        "_real = None\n"
        "def _find():\n    global _real\n    g = _up()\n    _real = g['task_state']\n"
        "    class Fake:\n        def read(self, *a, **k):\n            return {'forged': True}\n"
        "    g['task_state'] = Fake()\n    yield\n"
        "_g = _find()\nnext(_g)\n")


async def test_a_reader_replaced_in_the_kernels_module_is_not_used(session):
    from gradrepl.tutor import tasks
    from gradrepl.tutor.grading import compute_key

    uid = "first-gradient/cube-task"
    reference = (await compute_key(question(uid), session)).reference  # the solution's, in a fresh kernel
    start = await tasks.begin(question(uid), session)
    walked = await session.execute(WALK)
    assert walked.error is None, walked.error
    end = await tasks.read(question(uid), session, start)
    assert "forged" not in end, end
    assert end.get("tampered"), end
    verdict = tasks.judge(question(uid), reference, end, "x3 = torch.tensor(2.0, requires_grad=True)\n"
                                                         "(x3 ** 3).backward()")
    assert not verdict.ok and "replaced part of the tutor's own reader" in verdict.message, verdict
    graded = await grade(question(uid), "x3 = torch.tensor(2.0, requires_grad=True)\n(x3 ** 3).backward()", session)
    assert graded.correct, graded.feedback  # the next attempt starts in a fresh kernel


# Found by a blind play-through (issue 22, helper J): a 0-d tensor lr is the number it holds (SGD takes it and
# steps the same), so it is accepted.
async def test_a_zero_d_tensor_learning_rate_is_accepted(session):
    await accepted(session, "trainable-parameters/filtered-optimizer",
                   "opt = torch.optim.SGD(filter(lambda p: p.requires_grad, net.parameters()), "
                   "lr=torch.tensor(0.1), momentum=0.9)")


# ... and the refusals' words say what is wrong, no more: a right value left a float must stay a tensor (its
# value is not wrong), a transform of another function names the task's function, not an earlier cell's, and
# a gradient written in by hand is told both honest roads (backward or autograd.grad, which is accepted).
@pytest.mark.parametrize("uid, attempt, says, never", [
    ("func-higher-order/third-derivative", "g3 = torch.func.grad(torch.func.grad(torch.func.grad(wave)))\n"
                                           "third = g3(x).item()", "tensor", "is not d³wave"),
    # the lesson's first cell made d2 = grad(grad(f)): torch's wrapper code, which runs inside any grad
    ("func-higher-order/third-derivative", "third = torch.func.grad(lambda t: -4 * wave(t))(x)", "wave", "d2"),
    ("autograd-grad/gradient-penalty", "g, = torch.autograd.grad(out, inp, create_graph=True)\n"
                                       "penalty = (g.norm() - 1) ** 2\nw.grad = torch.autograd.grad(penalty * 2, w)[0] / 2",
     "torch.autograd.grad", "one backward pass"),
])
async def test_a_refusal_says_only_what_is_wrong(session, uid, attempt, says, never):
    feedback = await refusal(session, uid, attempt)
    assert says in feedback and never not in feedback, feedback
