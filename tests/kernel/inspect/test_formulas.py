"""Every formula of the table (kernel/inspect/formulas.py), evaluated on a real node's saved values, equals
the gradient that node really sent (1e-6 relative), and an op outside the table says it has none."""

import pytest
import torch
import torch.nn.functional as F

from gradrepl.kernel.inspect import formulas
from gradrepl.kernel.inspect.trace import preview


def leaf(*shape, low=0.5):
    return (torch.rand(*shape) + low).requires_grad_()


def leaves(*shapes):
    return [leaf(*shape) for shape in shapes]


# node class -> how to make one from fresh leaves; every entry of the table is made here
OPS = {
    "AddBackward0": lambda: (lambda x, y: torch.add(x, y, alpha=2.0))(*leaves((3,), (2, 3))),
    "SubBackward0": lambda: (lambda x, y: x - y)(*leaves((3,), (3,))),
    "RsubBackward0": lambda: (lambda x, y: torch.rsub(x, y))(*leaves((3,), (3,))),
    "RsubBackward1": lambda: 2 - leaf(3),
    "MulBackward0": lambda: (lambda x, y: x * y)(*leaves((2, 3), (3,))),
    "DivBackward0": lambda: (lambda x, y: x / y)(*leaves((3,), (3,))),
    "NegBackward0": lambda: -leaf(3),
    "PowBackward0": lambda: leaf(3) ** 3,
    "PowBackward1": lambda: (lambda x, y: x ** y)(*leaves((3,), (3,))),
    "PowBackward2": lambda: 2 ** leaf(3),
    "ReciprocalBackward0": lambda: leaf(3).reciprocal(),
    "SqrtBackward0": lambda: leaf(3).sqrt(),
    "RsqrtBackward0": lambda: leaf(3).rsqrt(),
    "AbsBackward0": lambda: (leaf(4) - 1).abs(),
    "SignBackward0": lambda: leaf(3).sign(),
    "FloorBackward0": lambda: leaf(3).floor(),
    "RoundBackward0": lambda: leaf(3).round(),
    "CloneBackward0": lambda: leaf(3).clone(),
    "AddcmulBackward0": lambda: torch.addcmul(*leaves((3,), (3,), (3,)), value=0.5),
    "LerpBackward0": lambda: torch.lerp(*leaves((3,), (3,)), 0.3),
    "Atan2Backward0": lambda: torch.atan2(*leaves((3,), (3,))),
    "MaximumBackward0": lambda: torch.maximum(*leaves((4,), (4,))),
    "MinimumBackward0": lambda: torch.minimum(*leaves((4,), (4,))),
    "ExpBackward0": lambda: leaf(3).exp(),
    "Exp2Backward0": lambda: torch.exp2(leaf(3)),
    "Expm1Backward0": lambda: leaf(3).expm1(),
    "LogBackward0": lambda: leaf(3).log(),
    "Log2Backward0": lambda: leaf(3).log2(),
    "Log10Backward0": lambda: leaf(3).log10(),
    "Log1PBackward0": lambda: leaf(3).log1p(),
    "LogsumexpBackward0": lambda: leaf(2, 3).logsumexp(1),
    "ErfBackward0": lambda: leaf(3).erf(),
    "SinBackward0": lambda: leaf(3).sin(),
    "CosBackward0": lambda: leaf(3).cos(),
    "TanBackward0": lambda: leaf(3).tan(),
    "AsinBackward0": lambda: (leaf(3, low=0.0) * 0.5).asin(),
    "AcosBackward0": lambda: (leaf(3, low=0.0) * 0.5).acos(),
    "AtanBackward0": lambda: leaf(3).atan(),
    "SinhBackward0": lambda: leaf(3).sinh(),
    "CoshBackward0": lambda: leaf(3).cosh(),
    "TanhBackward0": lambda: leaf(3).tanh(),
    "SigmoidBackward0": lambda: leaf(3).sigmoid(),
    "LogSigmoidBackward0": lambda: F.logsigmoid(leaf(3)),
    "ReluBackward0": lambda: (leaf(4) - 1).relu(),
    "LeakyReluBackward0": lambda: F.leaky_relu(leaf(4) - 1, 0.1),
    "EluBackward0": lambda: F.elu(leaf(4) - 1),
    "SoftplusBackward0": lambda: F.softplus(leaf(4) - 1),
    "GeluBackward0": lambda: F.gelu(leaf(4) - 1),
    "SiluBackward0": lambda: F.silu(leaf(4) - 1),
    "HardtanhBackward0": lambda: F.hardtanh(leaf(4) * 2 - 2),
    "ClampBackward1": lambda: leaf(4).clamp(0.7, 1.2),
    "WhereBackward0": lambda: (lambda x, y: torch.where(x > 1, x, y))(*leaves((4,), (4,))),
    "MaskedFillBackward0": lambda: leaf(3).masked_fill(torch.tensor([True, False, True]), 0.0),
    "SumBackward0": lambda: leaf(2, 3).sum(),
    "SumBackward1": lambda: leaf(2, 3).sum(1),
    "MeanBackward0": lambda: leaf(2, 3).mean(),
    "MeanBackward1": lambda: leaf(2, 3).mean(0),
    "ProdBackward0": lambda: leaf(3).prod(),
    "CumsumBackward0": lambda: leaf(4).cumsum(0),
    "MaxBackward1": lambda: leaf(4).max(),
    "AmaxBackward0": lambda: leaf(2, 3).amax(1),
    "MaxBackward0": lambda: leaf(2, 3).max(1).values,
    "VarBackward0": lambda: leaf(4).var(),
    "StdBackward0": lambda: leaf(4).std(),
    "LinalgVectorNormBackward0": lambda: leaf(3).norm(),
    "TraceBackward0": lambda: leaf(3, 3).trace(),
    "MmBackward0": lambda: (lambda a, b: a @ b)(*leaves((2, 3), (3, 4))),
    "MvBackward0": lambda: (lambda a, v: a @ v)(*leaves((2, 3), (3,))),
    "DotBackward0": lambda: (lambda x, y: x @ y)(*leaves((3,), (3,))),
    "BmmBackward0": lambda: (lambda a, b: a.bmm(b))(*leaves((2, 3, 4), (2, 4, 5))),
    "AddmmBackward0": lambda: F.linear(*leaves((2, 3), (4, 3), (4,))),
    "TBackward0": lambda: leaf(2, 3).t(),
    "TransposeBackward0": lambda: leaf(2, 3, 4).transpose(0, 2),
    "PermuteBackward0": lambda: leaf(2, 3, 4).permute(2, 0, 1),
    "ViewBackward0": lambda: leaf(2, 3).view(6),
    "UnsafeViewBackward0": lambda: leaf(2, 3).t().reshape(6),
    "ReshapeAliasBackward0": None,  # torch 2 makes a view or an UnsafeView instead; kept for older torch
    "SqueezeBackward0": lambda: leaf(1, 3, 1).squeeze(),
    "SqueezeBackward1": lambda: leaf(2, 1, 3).squeeze(1),
    "SqueezeBackward2": lambda: leaf(2, 1, 3, 1).squeeze((1, 3)),
    "UnsqueezeBackward0": lambda: leaf(3).unsqueeze(0),
    "ExpandBackward0": lambda: leaf(3).expand(2, 3),
    "RepeatBackward0": lambda: leaf(2, 3).repeat(2, 2),
    "SelectBackward0": lambda: leaf(2, 3)[1],
    "SliceBackward0": lambda: leaf(2, 5)[:, 1:4:2],
    "IndexBackward0": lambda: leaf(4)[torch.tensor([0, 2, 2])],
    "DiagonalBackward0": lambda: leaf(3, 3).diagonal(),
    "CatBackward0": lambda: torch.cat(leaves((2,), (3,)), 0),
    "StackBackward0": lambda: torch.stack(leaves((3,), (3,))),
    "SplitBackward0": lambda: leaf(5).split(2)[1],
    "UnbindBackward0": lambda: leaf(3).unbind()[1],
    "MseLossBackward0": lambda: F.mse_loss(*leaves((3,), (3,))),
    "NllLossBackward0": lambda: F.nll_loss(leaf(2, 3).log_softmax(1), torch.tensor([0, 2])),
    "LogSoftmaxBackward0": lambda: leaf(2, 3).log_softmax(1),
    "SoftmaxBackward0": lambda: leaf(2, 3).softmax(1),
    "BinaryCrossEntropyBackward0": lambda: F.binary_cross_entropy(leaf(3, low=0.1) * 0.8, torch.tensor([1.0, 0.0, 1.0])),
    "BinaryCrossEntropyWithLogitsBackward0": lambda: F.binary_cross_entropy_with_logits(leaf(3),
                                                                                         torch.tensor([1.0, 0.0, 1.0])),
    "SmoothL1LossBackward0": lambda: F.smooth_l1_loss(leaf(4) * 3, leaf(4)),
    "HuberLossBackward0": lambda: F.huber_loss(leaf(4) * 3, leaf(4)),
}


def scalar_of(out: torch.Tensor) -> torch.Tensor:
    """A root whose gradient differs per element, so a formula that ignores it is caught."""
    if out.numel() == 1:
        return out * 1.5 if out.dim() == 0 else out.sum() * 1.5
    weights = torch.linspace(0.5, 2.0, out.numel()).reshape(out.shape)
    return (out * weights).sum()


def node_named(trace: dict, name: str) -> dict:
    return next(node for node in trace["nodes"] if node["name"] == name)


def test_the_table_covers_at_least_sixty_ops_and_each_is_made_here():
    assert len(formulas.RULES) >= 60
    assert set(formulas.RULES) - {"DiagonalBackward0_copy"} == set(OPS)


@pytest.mark.parametrize("name", [name for name, make in OPS.items() if make is not None])
def test_the_formula_equals_the_gradient_the_node_sent(name):
    torch.manual_seed(0)
    out = OPS[name]()
    kind = type(out.grad_fn).__name__
    assert formulas.RULES.get(kind) is formulas.RULES[name], f"{name}'s maker made a {kind}"
    trace = preview(scalar_of(out), "root", {})
    node = node_named(trace, kind)
    assert node["in_table"]
    sent = [i for i, g in enumerate(node["grad_inputs"]) if g is not None]
    assert sent, "no gradient left the node"
    for i in sent:
        assert node["formulas"][i] is not None, f"input {i}: the formula disagreed with the engine"


def test_the_evaluation_is_the_engines_gradient_within_1e_6():
    """The check itself (formulas.expected), beside torch's own hook on the node."""
    torch.manual_seed(1)
    for name, make in OPS.items():
        if make is None:
            continue
        out = make()
        node = out.grad_fn
        seen = {}
        node.register_hook(lambda grad_inputs, grad_outputs: seen.update(inputs=grad_inputs, outputs=grad_outputs))
        if name in ("SplitBackward0", "UnbindBackward0"):
            continue  # their node takes several gradients: checked through the trace above
        scalar_of(out).backward(retain_graph=True)
        shapes = [list(g.shape) if g is not None else None for g in seen["inputs"]]
        predicted = formulas.expected(node, seen["outputs"], shapes)
        for p, real in zip(predicted, seen["inputs"]):
            if real is not None:
                assert formulas.agrees(p, real), name
                p, real = p.detach().double(), real.detach().double()
                scale = float(real.abs().max()) or 1.0
                assert float((p - real).abs().max()) <= 1e-6 * scale, name  # 1e-6 relative to the gradient


def test_a_wrong_formula_is_caught():
    x = leaf(3)
    real = torch.cos(x.detach())
    assert formulas.agrees(real, real.clone())
    assert not formulas.agrees(real * (1 + 1e-4), real)


def test_an_op_outside_the_table_has_no_formula():
    x = leaf(4)
    out = torch.special.i0(x)  # I0Backward0: not in the table
    trace = preview(out.sum(), "root", {})
    node = node_named(trace, type(out.grad_fn).__name__)
    assert node["in_table"] is False
    assert node["formulas"] == [None]
