"""Fixes that fix nothing are refused by the shipped course's tasks (issue 22 §1), and right ones are not.

Each gaming attempt is one a learner typed while playing the course: a target
hard-coded, a name the old expression checks read rebound (or torch patched),
or a half-fix. Grading runs in real kernels: the solution from the task's start
in one, the attempt from the same start in another, compared in the frontend.
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


HARD_CODED = [
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\nx3.grad = torch.tensor(12.)"),
    ("non-scalar/pass-a-seed", "x.grad = torch.tensor([2., 2., 2.])"),
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
    ("non-scalar/pass-a-seed", "y.sum().backward()"),
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
    ("non-scalar/pass-a-seed", "if False:\n    y.backward(torch.ones(3))\ny.sum().backward()"),
    ("leaves-and-hooks/keep-h-grad", "h = x * 3\nz = h ** 2\nz.backward()\nh.retain_grad()\nh.grad = 2 * h.detach()\n"
                                     "grad_h = h.grad"),
]


# Found by a blind play-through: torch or an object patched so that the unfixed starter passes, grad
# mode left off for good, parameters picked by hand where the prompt asks for a filter by requires_grad.
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
    ("trainable-parameters/filtered-optimizer", "opt = torch.optim.SGD(net[2].parameters(), lr=0.1, momentum=0.9)"),
    ("trainable-parameters/filtered-optimizer",
     "opt = torch.optim.SGD(list(net.parameters())[2:], lr=0.1, momentum=0.9)"),
]


@pytest.mark.parametrize("uid, attempt", [
    ("in-place/out-of-place", "s = a.sigmoid()\ns = s + s\ns.sum().backward()"),
    ("in-place/out-of-place", "s = torch.add(a.sigmoid(), a.sigmoid())\ns.sum().backward()"),
    ("trainable-parameters/filtered-optimizer",
     "opt = torch.optim.SGD(filter(lambda p: p.requires_grad, net.parameters()), lr=0.1, momentum=0.9)"),
    ("training-loop/one-step", "torch.set_grad_enabled(False)\nw -= lr * w.grad\nb -= lr * b.grad\n"
     "torch.set_grad_enabled(True)\nw.grad.zero_()\nb.grad.zero_()"),
])
async def test_right_answers_in_another_form_still_pass(session, uid, attempt):
    graded = await grade(question(uid), attempt, session)
    assert graded.correct, f"{uid} refused: {attempt!r}: {graded}"


@pytest.mark.parametrize("uid, attempt", BY_HAND + PATCHED)
async def test_a_fix_found_by_hand_is_refused(session, uid, attempt):
    graded = await grade(question(uid), attempt, session)
    assert not graded.correct, f"{uid} accepted: {attempt!r}"


@pytest.mark.parametrize("uid, attempt", HARD_CODED)
async def test_a_hard_coded_target_is_refused(session, uid, attempt):
    graded = await grade(question(uid), attempt, session)
    assert not graded.correct, f"{uid} accepted a hard-coded answer: {attempt!r}"


@pytest.mark.parametrize("uid, attempt", REBOUND)
async def test_rebinding_what_a_check_read_or_patching_torch_is_refused(session, uid, attempt):
    graded = await grade(question(uid), attempt, session)
    assert not graded.correct, f"{uid} accepted a rebinding: {attempt!r}"


@pytest.mark.parametrize("uid, attempt", HALF_FIXES)
async def test_a_half_fix_is_refused(session, uid, attempt):
    graded = await grade(question(uid), attempt, session)
    assert not graded.correct, f"{uid} accepted a half-fix: {attempt!r}"


@pytest.mark.parametrize("uid, attempt, says", [
    ("first-gradient/cube-task", "x3 = torch.tensor(2.0, requires_grad=True)\nx3.grad = torch.tensor(12.)",
     "not be written in by hand"),
    ("parameters/freeze-first", "model[0] = nn.Linear(3, 4).requires_grad_(False)",
     "freeze it, do not replace it"),
    ("non-scalar/pass-a-seed", "y.sum().backward()", "pass the gradient argument"),
    ("in-place/out-of-place", "s = a.sigmoid().clone()\ns.mul_(2)\ns.sum().backward()", "s.mul_(2)"),
    ("accumulation-on-purpose/accumulate-right",
     "for xb, yb in zip(X.chunk(4), Y.chunk(4)):\n    loss_fn(lin(xb), yb).backward()\nlin.weight.grad /= 4",
     "lin.bias.grad"),
    ("module-loop/write-the-loop", "with torch.no_grad():\n    model.weight.copy_(torch.tensor([[2.0, -1.0]]))\n"
                                   "    model.bias.fill_(1.0)", "backward"),
    ("leaves-and-hooks/keep-h-grad", "import sys\ngrad_h = sys.modules", "reaches into"),
])
async def test_each_refusal_says_what_the_attempt_misses(session, uid, attempt, says):
    graded = await grade(question(uid), attempt, session)
    assert not graded.correct
    assert says in graded.feedback, graded.feedback


@pytest.mark.parametrize("uid, attempt", [
    ("tracking/opt-in-later", "w.requires_grad = True"),
    ("first-gradient/cube-task", "x3 = torch.tensor(2., requires_grad=True)\ny = x3 ** 3\ny.backward()"),
    ("accumulation/zero-it", "x.grad.mul_(0)"),
    ("non-scalar/pass-a-seed", "y.backward(gradient=torch.ones(3))"),
    ("non-scalar/pass-a-seed", "torch.autograd.backward(y, torch.ones_like(y))"),
    ("leaves-and-hooks/keep-h-grad", "h = x * 3\nh.retain_grad()\nz = h ** 2\nz.backward()\ngrad_h = h.grad"),
    ("retain-graph/twice-on-purpose", "y.backward(retain_graph=True)\ny.backward(retain_graph=True)"),
    ("in-place/fix-leaf-init", "w = torch.tensor([2.0, 3.0], requires_grad=True)\n(w ** 2).sum().backward()"),
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
    graded = await grade(question(uid), attempt, session)
    assert graded.correct, graded.feedback
