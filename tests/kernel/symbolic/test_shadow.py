"""Live mode: the shadow formulas recorded while code runs, and %check's verdict on .grad."""

import gc

import pytest
import torch

from gradrepl.kernel.symbolic import limits, shadow
from gradrepl.kernel.symbolic.checks import check_tensor, recording
from gradrepl.views.check import render_check, word_check


class Kernelish:
    """A namespace that runs steps the way the worker does: each step inside recording()."""

    def __init__(self):
        self.ns = {"torch": torch, "nn": torch.nn, "F": torch.nn.functional}

    def run(self, source: str) -> None:
        with recording():
            exec(source, self.ns)

    def check(self, name: str) -> dict:
        return word_check(check_tensor(self.ns, name, lambda n: self.ns.get(n)))  # worded as the session does


@pytest.fixture
def k():
    return Kernelish()


def leaf(result, name):
    return next(item for item in result["leaves"] if item["name"] == name)


def test_seed_example_before_and_after_backward(k):
    k.run("x = torch.tensor(2.0, requires_grad=True)\ny = x ** 2 + 3 * x")
    before = k.check("y")
    assert before["formula"] == "x**2 + 3*x"
    x = leaf(before, "x")
    assert x["elements"][0]["symbolic"] == "2*x + 3"
    assert x["elements"][0]["expected"] == 7
    assert x["status"] == "pending" and "will make it 7" in x["note"]
    k.run("y.backward()")
    after = k.check("y")
    assert leaf(after, "x")["status"] == "agree" and leaf(after, "x")["grad"] == [7.0]
    assert after["agree"] is True
    assert "2*x + 3" in render_check(after) and "✓" in render_check(after)


def test_two_backward_calls_without_clearing_warn_about_accumulation(k):
    k.run("x = torch.tensor(2.0, requires_grad=True)\n"
          "y = x ** 2 + 3 * x\ny.backward()\n"
          "y2 = x ** 2 + 3 * x\ny2.backward()")
    result = k.check("y2")
    x = leaf(result, "x")
    assert x["grad"] == [14.0]
    assert x["status"] == "accumulated"
    assert "2 backward calls" in x["note"] and "alone gives 7" in x["note"] and "the sum is 14" in x["note"]
    k.run("x.grad = None\ny3 = x ** 2 + 3 * x\ny3.backward()")
    assert leaf(k.check("y3"), "x")["status"] == "agree"


def test_linear_regression_loss_over_a_small_batch(k):
    k.run("torch.manual_seed(0)\n"
          "xs = torch.linspace(0, 1, 8)\n"
          "y_true = 3 * xs + 2 + 0.1 * torch.randn(8)\n"
          "w = torch.randn(1, requires_grad=True)\n"
          "b = torch.zeros(1, requires_grad=True)\n"
          "y_pred = w * xs + b\n"
          "loss = (y_pred - y_true).pow(2).mean()")
    ns = k.ns
    residual = (ns["w"].detach().double() * ns["xs"].double() + ns["b"].detach().double() - ns["y_true"].double())
    by_hand = {"w": float((2 * residual * ns["xs"].double()).mean()), "b": float((2 * residual).mean())}
    before = k.check("loss")
    for name in ("w", "b"):
        assert leaf(before, name)["elements"][0]["expected"] == pytest.approx(by_hand[name], rel=1e-5)
    k.run("loss.backward()")
    after = k.check("loss")
    assert after["agree"] is True
    assert {leaf(after, n)["status"] for n in ("w", "b")} == {"agree"}
    # the update under no_grad keeps w a leaf; zeroing .grad is reported, not mistaken for a disagreement
    k.run("with torch.no_grad():\n    w -= 0.1 * w.grad\n    b -= 0.1 * b.grad\nw.grad.zero_(); b.grad.zero_()")
    cleared = k.check("loss")
    assert leaf(cleared, "w")["status"] == "cleared"
    k.run("loss2 = ((w * xs + b - y_true) ** 2).mean()\nloss2.backward()")
    assert k.check("loss2")["agree"] is True


def test_detach_makes_a_constant_like_autograd(k):
    k.run("x = torch.tensor(2.0, requires_grad=True)\ny = x * x.detach()\ny.backward()")
    result = k.check("y")
    assert result["formula"] == "2*x"
    assert leaf(result, "x")["elements"][0]["expected"] == 2 == k.ns["x"].grad.item()
    assert leaf(result, "x")["status"] == "agree"


def test_no_grad_results_have_no_gradient_to_check(k):
    k.run("x = torch.tensor(2.0, requires_grad=True)\nwith torch.no_grad():\n    z = x * 3")
    assert "does not require grad" in k.check("z")["problem"]


def test_in_place_ops_on_an_intermediate_are_followed(k):
    k.run("x = torch.tensor(2.0, requires_grad=True)\ny = x * 1\ny.add_(x)\ny.mul_(x)\ny.backward()")
    result = k.check("y")
    assert result["formula"] == "2*x**2"
    assert leaf(result, "x")["elements"][0]["expected"] == 8 == k.ns["x"].grad.item()


def test_in_place_change_under_no_grad_is_named_not_silently_wrong(k):
    k.run("x = torch.tensor(2.0, requires_grad=True)\ny = x * 2\nwith torch.no_grad():\n    y.mul_(10)")
    assert "under torch.no_grad()" in k.check("y")["problem"]


def test_ops_outside_the_shadow_are_named_and_the_name_travels(k):
    k.run("v = torch.tensor([1., 2., 3.], requires_grad=True)\n"
          "s = F.softmax(v, dim=0)\nz = (s * 2).sum()")
    assert k.check("s")["problem"] == "F.softmax is not traced symbolically"
    assert k.check("z")["problem"] == "F.softmax is not traced symbolically"


@pytest.mark.parametrize("loop", [
    "for _ in range(40):\n    y = y * y + y",        # the formula doubles every step
    "for _ in range(300):\n    y = torch.tanh(y)",   # a chain deeper than sympy can recurse
])
def test_formulas_beyond_the_cap_say_so_instead_of_hanging(k, loop):
    k.run("x = torch.tensor(0.5, requires_grad=True)\ny = x\n" + loop)
    assert k.check("y")["problem"] == "too large to derive symbolically"


def test_big_tensors_are_not_traced_and_leave_nothing_behind(k):
    before = len(shadow.RECORDER.shadows)
    k.run("big = torch.randn(100, requires_grad=True)\nh = (big * 2).tanh()\nbig_loss = h.sum()")
    assert len(shadow.RECORDER.shadows) == before + 1  # only the 1-element big_loss
    assert "more than 16" in k.check("big_loss")["problem"]


def test_relu_at_zero_has_gradient_zero_like_autograd(k):
    k.run("x = torch.tensor(0.0, requires_grad=True)\ny = torch.relu(x) + x\ny.backward()")
    result = k.check("y")
    assert leaf(result, "x")["elements"][0]["expected"] == 1 == k.ns["x"].grad.item()
    assert result["agree"] is True


def test_vectors_get_one_symbol_per_element_and_non_scalars_check_the_sum(k):
    k.run("v = torch.tensor([1., 2., 3.], requires_grad=True)\nm = v @ v\nu = v[1:] * 2")
    result = k.check("m")
    assert result["formula"] == "v_0**2 + v_1**2 + v_2**2"
    assert [e["expected"] for e in leaf(result, "v")["elements"]] == [2, 4, 6]
    vector = k.check("u")
    assert vector["formula"] == ["2*v_1", "2*v_2"]
    assert "u.sum()" in vector["of"]
    assert [e["expected"] for e in leaf(vector, "v")["elements"]] == [2, 2]


def test_shape_ops_and_a_small_linear_layer(k):
    k.run("torch.manual_seed(1)\nmodel = nn.Linear(2, 1)\nx = torch.tensor([[1., 2.], [3., 4.]])\n"
          "out = model(x).reshape(-1).t().sum()\nout.backward()")
    result = k.check("out")
    names = {item["name"] for item in result["leaves"]}
    assert names == {"model.weight", "model.bias"}
    assert result["agree"] is True
    weight = leaf(result, "model.weight")
    assert [e["expected"] for e in weight["elements"]] == [4, 6]  # column sums of x


def test_backward_with_a_gradient_argument_checks_the_vector_jacobian_product(k):
    k.run("v = torch.tensor([1., 2.], requires_grad=True)\ny = v ** 2\ny.backward(torch.tensor([1., 10.]))")
    result = k.check("y")
    assert [e["expected"] for e in leaf(result, "v")["elements"]] == [2, 40]
    assert result["agree"] is True


def test_shadows_are_forgotten_when_their_tensors_die(k):
    gc.collect()
    k.run("x = torch.tensor(2.0, requires_grad=True)\nys = [x * i for i in range(5)]")
    count = len(shadow.RECORDER.shadows)
    k.run("del ys")
    gc.collect()
    assert len(shadow.RECORDER.shadows) == count - 5


def test_check_names_what_it_cannot_check(k):
    k.run("x = torch.tensor(2.0, requires_grad=True)\nn = 3")
    assert "leaf" in k.check("x")["problem"]
    assert "not a tensor" in k.check("n")["error"]["message"]
    assert "no tensor" in k.check("missing")["error"]["message"]


def test_learner_code_behaves_the_same_under_the_mode(k):
    k.run("torch.manual_seed(0)\na = torch.randn(3, requires_grad=True)\n"
          "r = (a.sigmoid() * a.exp()).sum() / a.norm()\nr.backward()\ng = a.grad.clone()")
    plain = torch.randn(3, generator=torch.Generator().manual_seed(0)).requires_grad_()
    value = (plain.sigmoid() * plain.exp()).sum() / plain.norm()
    value.backward()
    assert torch.equal(k.ns["g"], plain.grad)
    assert k.check("r")["problem"] == "Tensor.norm is not traced symbolically"


OPS_TABLE = [
    "out = (a * c + 1).sum() + ((1 - a) * c).sum()",  # d/da is exactly 0
    "out = ((1 - a) * a * c).sum()",
    "out = (2 ** a - a / 3 + 1 - c).mean()",
    "out = torch.exp(a).sum() + a.abs().sum() + a.sqrt().sum() + torch.log(a).sum()",
    "out = (a.sin() * a.cos() + a.tanh() + a.sigmoid() + torch.relu(a - 2)).sum()",
    "out = F.mse_loss(a * c, torch.tensor([1., 2., 2.5]))",
    "out = torch.cat([a, a * c]).pow(2).sum() + torch.stack([a, a]).mean()",
    "m = a.reshape(3, 1).expand(3, 2) * torch.tensor([[1., 2.]])\nout = m.t().sum(dim=1, keepdim=True).sum()",
    "b = a * 1\nb[0] = c * 5\nout = b.sum()",
    "p, q, r = a.chunk(3)\nout = (p * q * r).sum() / c",
    "b = a.unsqueeze(0) * 1\nb.unsqueeze_(0)\nout = (b ** 2).sum()",
    "out = a @ torch.tensor([1., -1., 0.5]) + torch.dot(a, a)",
    "w2 = torch.tensor([[0.5, -1., 2.], [1., 1., 1.]], requires_grad=True)\nout = F.linear(a, w2, torch.tensor([0.1, 0.2])).sum()",
    "out = (a / a.sum())[1] + a.flip(0)[0] * a[-1]",
    "out = (1 / (1 + torch.exp(-a * c))).mean() - a.square().rsqrt().sum()",
]


@pytest.mark.parametrize("source", OPS_TABLE)
def test_traced_ops_give_the_gradient_autograd_computes(k, source):
    k.run("a = torch.tensor([0.5, 1.5, 2.5], requires_grad=True)\nc = torch.tensor(0.7, requires_grad=True)")
    k.run(source + "\nout.backward()")
    result = k.check("out")
    assert "problem" not in result, result.get("problem")
    assert result["agree"] is True, render_check(result)
    for item in result["leaves"]:
        assert item["status"] == "agree"


LONG_LOOP = "for _ in range(1500):\n    z = x * 2\n    z.backward()\n"  # 3,000 torch calls


def test_a_step_past_the_call_budget_leaves_the_mode_and_says_so(k):
    k.run("x = torch.tensor(2.0, requires_grad=True)\n" + LONG_LOOP +
          "stack_inside = torch._C._len_torch_function_stack()\nlate = x ** 2 + 1")
    assert k.ns["stack_inside"] == 0  # the rest of the step ran without the mode: at torch's own speed
    assert torch._C._len_torch_function_stack() == 0
    assert k.check("late")["problem"].startswith(f"too long to check: it was made after the first {limits.MAX_CALLS:,} torch calls")
    assert k.ns["x"].grad.item() == 3000.0  # the learner's code ran as without the mode
    k.run("x.grad = None\ny = x ** 2 + 3 * x\ny.backward()")  # the next step is traced again
    result = k.check("y")
    assert result["formula"] == "x**2 + 3*x" and result["agree"] is True


def test_gradients_from_an_untraced_stretch_are_not_called_wrong(k):
    k.run("x = torch.tensor(2.0, requires_grad=True)\ny = x ** 2 + 3 * x\ny.backward()")
    assert k.check("y")["agree"] is True
    k.run(LONG_LOOP)  # 1,500 more backward calls into x.grad, past the budget
    x = leaf(k.check("y"), "x")
    assert x["status"] == "untraced" and "too long to trace" in x["note"]
    assert "not checked" in render_check(k.check("y"))
    k.run("y2 = x ** 2 + 3 * x\ny2.backward()")  # adds to a .grad whose history has a gap
    x = leaf(k.check("y2"), "x")
    assert x["status"] == "accumulated" and "not traced" in x["note"]
