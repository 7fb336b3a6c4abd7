"""Every diagnosis is triggered by a real torch error; accumulation by real backward calls. The kernel sends
codes and data; the words checked here are views/diagnosis.py's, which the session attaches to a step."""

import warnings

import pytest
import torch
from torch import nn

from gradrepl.kernel.inspect import AccumulationWatch, Inspector, explain, explain_warning
from gradrepl.views.diagnosis import accumulation_words, error_words, warning_words


def raised(code: str) -> BaseException:
    namespace = {"torch": torch, "nn": nn}
    with pytest.raises(Exception) as info:
        exec(code, namespace)
    return info.value


# Each explanation names the concept the lessons teach (leaf, graph freed, in-place, dtype, ...) and the fix.
CASES = [
    ("x = torch.ones(3, requires_grad=True)\n(x * 2).backward()", ["scalar", ".sum()", "torch.ones_like"]),
    ("x = torch.ones(3, requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny.backward()",
     ["graph was freed", "retain_graph=True"]),
    ("torch.tensor([1, 2], requires_grad=True)", ["dtype", "float"]),
    ("torch.tensor([1, 2]).requires_grad_()", ["dtype", "float"]),
    ("x = torch.ones(3, requires_grad=True)\ny = x * 2\ny.requires_grad = False", ["not a leaf", "detach()"]),
    ("x = torch.ones(3, requires_grad=True)\nout = x * 2\nout.requires_grad_(False)", ["not a leaf", "detach()"]),
    ("x = torch.ones(3, requires_grad=True)\nx.add_(1)", ["in-place", "leaf", "torch.no_grad()", "out-of-place"]),
    ("x = torch.ones(3, requires_grad=True)\nx[0] = 5", ["in place", "part of a leaf", "torch.no_grad()"]),
    ("x = torch.ones(3, requires_grad=True)\ny = x.sigmoid()\ny.mul_(2)\ny.sum().backward()",
     ["in-place", "version counter", "clone()"]),
    ("x = torch.ones(3, requires_grad=True)\na = x * 1\nb = a ** 2\na.add_(1)\nb.sum().backward()",
     ["in-place", "version counter"]),
    ("torch.ones(2).sum().backward()", ["grad_fn", "leaf", "requires_grad=True"]),
    ("x = torch.ones(3, requires_grad=True)\n(x * 2).detach().sum().backward()", ["no graph", ".detach()"]),
    ("x = torch.ones(3, requires_grad=True)\nwith torch.no_grad():\n    y = (x * 2).sum()\ny.backward()", ["no_grad"]),
    ("with torch.inference_mode():\n    t = torch.ones(2)\nt.requires_grad_()", ["inference_mode", "clone()"]),
    ("with torch.inference_mode():\n    t = torch.ones(2)\nt.add_(1)", ["in-place", "clone()"]),
    ("x = torch.ones(2, requires_grad=True)\nwith torch.inference_mode():\n    t = torch.ones(2)\n(t * x).sum().backward()",
     ["graph", "clone()"]),
    ("x = torch.ones(3, requires_grad=True)\n(x * 2).backward(torch.ones(2))", ["shape", "ones_like"]),
    ("x = torch.ones(2, requires_grad=True)\nc = torch.ones(2)\ntorch.autograd.grad((x * c).sum(), [c])",
     ["requires_grad=True", "leaves"]),
]


@pytest.mark.parametrize("code,words", CASES)
def test_real_torch_errors_are_explained(code, words):
    explanation = error_words(explain(raised(code)))
    assert explanation is not None
    for word in words:
        assert word in explanation


def test_unknown_errors_get_no_explanation():
    assert explain(raised("torch.ones(2) @ torch.ones(3)")) is None
    assert explain(ZeroDivisionError("division by zero")) is None


def test_non_leaf_grad_warning_is_explained():
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y.grad
    explanation = warning_words(explain_warning(str(caught[0].message)))
    assert "not a leaf" in explanation and "retain_grad()" in explanation and "leaves it was computed from" in explanation
    assert explain_warning("something else") is None


def step(watch, inspector, namespace, code):
    with watch.during_step():
        exec(code, namespace)
    inspector.step(namespace)
    return [accumulation_words(found) for found in watch.diagnoses()]


@pytest.fixture
def session():
    namespace = {"torch": torch, "nn": nn}
    inspector = Inspector()
    return AccumulationWatch(inspector), inspector, namespace


FORWARD_BACKWARD = "y = x ** 2 + 3 * x\ny.backward()"


def test_quick_check_two_backwards_without_zeroing_fires(session):
    watch, inspector, namespace = session
    assert step(watch, inspector, namespace, "x = torch.tensor(2.0, requires_grad=True)") == []
    assert step(watch, inspector, namespace, FORWARD_BACKWARD) == []  # the first backward is fine
    notes = step(watch, inspector, namespace, FORWARD_BACKWARD)
    assert len(notes) == 1
    assert notes[0].startswith("x.grad already held 7 before this backward")
    assert "now holds 14" in notes[0] and "x.grad.zero_()" in notes[0]
    assert namespace["x"].grad.item() == 14.0  # the watch observes; it does not change the result


# (z * 0).backward(), tried to clear a gradient (leaves-and-hooks, a blind beginner): it added 0, and the note
# said "now holds 36: gradients accumulate" as if it had added something; it says what happened and how to clear.
def test_a_backward_that_adds_zero_is_said_to_add_nothing(session):
    watch, inspector, namespace = session
    step(watch, inspector, namespace, "x = torch.tensor(2.0, requires_grad=True)\nh = x * 3\nz = h ** 2")
    step(watch, inspector, namespace, "z.backward(retain_graph=True)")
    notes = step(watch, inspector, namespace, "(z * 0).backward()")
    assert len(notes) == 1 and "added 0 to x.grad" in notes[0] and "still holds 36" in notes[0], notes
    assert "already held" not in notes[0] and "x.grad = None" in notes[0], notes


# A weight update between two backward calls of one step: the second adds onto the gradient of the old x.
UPDATE_X = "\n    with torch.no_grad():\n        x -= 0.1 * x.grad"


def test_a_backward_after_an_update_in_one_step_fires(session):
    watch, inspector, namespace = session
    code = "x = torch.tensor(2.0, requires_grad=True)\nfor _ in range(2):\n    (x ** 2 + 3 * x).backward()" + UPDATE_X
    notes = step(watch, inspector, namespace, code)
    assert len(notes) == 1 and "x.grad already held 7 " in notes[0]


def test_micro_batches_summed_in_one_step_at_the_same_weights_are_quiet(session):
    # Gradient accumulation on purpose: several backward calls, no update between them, in one cell.
    watch, inspector, namespace = session
    setup = "torch.manual_seed(0)\nlin = nn.Linear(3, 1)\nX, Y = torch.randn(8, 3), torch.randn(8, 1)\n"
    loop = ("lin.zero_grad()\nfor xb, yb in zip(X.chunk(4), Y.chunk(4)):\n"
            "    (nn.functional.mse_loss(lin(xb), yb) / 4).backward()")
    step(watch, inspector, namespace, setup)
    assert step(watch, inspector, namespace, loop) == []
    # The same loop run again without zeroing adds onto the last step's sum: that one is noted.
    again = loop.replace("lin.zero_grad()\n", "")
    notes = step(watch, inspector, namespace, again)
    assert len(notes) == 1 and "lin.weight.grad" in notes[0]


@pytest.mark.parametrize("reset", ["x.grad.zero_()", "x.grad = None"])
def test_no_note_after_zeroing(session, reset):
    watch, inspector, namespace = session
    step(watch, inspector, namespace, "x = torch.tensor(2.0, requires_grad=True)\n" + FORWARD_BACKWARD)
    step(watch, inspector, namespace, reset)
    assert step(watch, inspector, namespace, FORWARD_BACKWARD) == []


def test_training_loop_with_zero_grad_is_quiet_and_without_is_not(session):
    watch, inspector, namespace = session
    setup = ("torch.manual_seed(0)\nmodel = nn.Linear(2, 1)\n"
             "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nxb = torch.randn(8, 2)\n")
    step(watch, inspector, namespace, setup)
    good = "for _ in range(3):\n    opt.zero_grad()\n    model(xb).pow(2).mean().backward()\n    opt.step()"
    assert step(watch, inspector, namespace, good) == []
    bad = "for _ in range(2):\n    model(xb).pow(2).mean().backward()\n    opt.step()"
    notes = step(watch, inspector, namespace, bad)
    assert len(notes) == 1
    assert "model.weight.grad" in notes[0] and "model.bias.grad" in notes[0]
    assert "optimizer.zero_grad()" in notes[0]


def test_backward_is_restored_and_errors_pass_through(session):
    watch, inspector, namespace = session
    real = torch.autograd.backward
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        with watch.during_step():
            exec("x = torch.ones(2, requires_grad=True)\n(x * 2).backward()", namespace)
    assert torch.autograd.backward is real
    assert watch.diagnoses() == []


def test_unnamed_leaf_is_described_by_shape(session):
    watch, inspector, namespace = session
    code = "for _ in range(2):\n    w = torch.ones(2, requires_grad=True) if _ == 0 else w\n    (w * 3).sum().backward()\n    with torch.no_grad():\n        w += 1"
    with watch.during_step():
        exec(code, namespace)
    notes = [accumulation_words(found) for found in watch.diagnoses()]  # the inspector has not seen w yet
    assert len(notes) == 1 and "unnamed leaf of shape 2 " in notes[0] and "norm" in notes[0]


def test_autograd_backward_with_a_generator_and_inputs(session):
    watch, inspector, namespace = session
    code = ("a = torch.tensor(1.0, requires_grad=True)\nb = torch.tensor(1.0, requires_grad=True)\n"
            "for _ in range(2):\n"
            "    torch.autograd.backward((t for t in [a * 2 + b * 5]), inputs=(t for t in [a]))\n"
            "    with torch.no_grad():\n        a += 1\n")
    notes = step(watch, inspector, namespace, code)
    assert namespace["a"].grad.item() == 4.0 and namespace["b"].grad is None and namespace["a"].item() == 3.0  # torch behaves as without the watch
    assert len(notes) == 1 and "a.grad already held 2 " in notes[0]


def test_a_long_loop_that_never_zeroes_is_still_noted(session):
    watch, inspector, namespace = session
    code = ("x = torch.tensor(1.0, requires_grad=True)\nfor i in range(100):\n"
            "    if i < 10:\n        x.grad = None\n    (x * 2).backward()" + UPDATE_X)
    notes = step(watch, inspector, namespace, code)  # accumulation only starts past the calls watched one by one
    assert len(notes) == 1 and "x.grad already held" in notes[0]
