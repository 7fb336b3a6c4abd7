"""The formula a learner reads (`x receives grad_a * w`), not only the numbers the kernel checked: each
formula of the table, as the trace says it over the learner's names, evaluated on the values the trace
shows (its terms and the gradient arriving), equals the gradient the node really sent (1e-6 relative).

test_formulas.py checks the table's `grads` (the computation) against the engine; a `receives` string that
said `cos` where the computation says `sin` would pass there and fail here. Formulas said in words (a place,
a shape, a condition) cannot be evaluated; they are named below, so one that stops evaluating is noticed.
"""

import ast
import math

import pytest
import torch

from gradrepl.kernel.inspect.trace import preview
from gradrepl.views.trace_story import gradient_name
from tests.kernel.inspect.test_formulas import OPS, scalar_of

FUNCTIONS = ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "exp2", "expm1", "log",
             "log2", "log10", "log1p", "sqrt", "rsqrt", "erf", "sign", "sigmoid", "relu", "abs", "outer", "clamp")
# Formulas said in words, or whose dims are implied (`g.sum(1)` that keeps its dim): checked by numbers only.
IN_WORDS = {
    "AddmmBackward0", "AmaxBackward0", "CatBackward0", "ClampBackward1", "CumsumBackward0", "DiagonalBackward0",
    "EluBackward0", "ExpandBackward0", "GeluBackward0", "HardtanhBackward0", "IndexBackward0", "LeakyReluBackward0",
    "LogSoftmaxBackward0", "LogsumexpBackward0", "MaskedFillBackward0", "MaxBackward0", "MaxBackward1",
    "MaximumBackward0", "MeanBackward0", "MeanBackward1", "MinimumBackward0", "NllLossBackward0", "PermuteBackward0",
    "RepeatBackward0", "SelectBackward0", "SliceBackward0", "SoftmaxBackward0", "SplitBackward0", "SqueezeBackward0",
    "SqueezeBackward1", "SqueezeBackward2", "StackBackward0", "SumBackward0", "SumBackward1", "TraceBackward0",
    "UnbindBackward0", "UnsafeViewBackward0", "ViewBackward0", "WhereBackward0",
}


def tensor(value) -> torch.Tensor:
    return value if isinstance(value, torch.Tensor) else torch.tensor(value, dtype=torch.float64)


def shown(summary: dict) -> torch.Tensor:
    """A tensor from the values the trace shows (small tensors: every value)."""
    return torch.tensor(summary["values"], dtype=torch.float64)


def leaves_of(root: torch.Tensor) -> list[torch.Tensor]:
    found, seen, pending = [], set(), [root.grad_fn]
    while pending:
        node = pending.pop(0)
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            found.append(node.variable)
        pending.extend(child for child, _ in node.next_functions)
    return found


def words_of(node) -> dict:
    """What a formula's plain words stand for: n (elements averaged), mean, y (a loss's target)."""
    saved = {name[len("_saved_"):]: getattr(node, name) for name in dir(node) if name.startswith("_saved_")}
    tensors = [saved.get("self"), *saved.values()]  # the op's input first, else any tensor it saved
    first = next((value for value in tensors if isinstance(value, torch.Tensor) and value.is_floating_point()), None)
    words = {}
    if first is not None:
        words.update(n=first.numel(), mean=first.detach().double().mean())
    if isinstance(saved.get("target"), torch.Tensor):
        words["y"] = saved["target"].detach().double()
    return words


def evaluated(formula: str, node: dict, namespace: dict) -> torch.Tensor | None:
    """The formula over the trace's own values; None when it is words, not an expression."""
    expression = formula.replace(gradient_name(node), "G_")
    local = {**namespace, "G_": shown(node["grad_outputs"][0])}
    for k, (term, summary) in enumerate(sorted((node.get("terms") or {}).items(), key=lambda item: -len(item[0]))):
        expression = expression.replace(term, f"T{k}_")
        local[f"T{k}_"] = shown(summary)
    try:
        code = compile(ast.parse(expression, mode="eval"), "<formula>", "eval")
        return tensor(eval(code, {"__builtins__": {}}, local)).double()  # a formula the kernel wrote, in a test
    except (SyntaxError, NameError, RuntimeError):
        return None


def sent_shape(value: torch.Tensor, shape) -> torch.Tensor:
    """A broadcast formula summed back to the input's shape, as the engine does (a `0` spread over it)."""
    if value.dim() == 0:
        return value.expand(shape)
    while value.dim() > len(shape):
        value = value.sum(0)
    return value


def test_every_formula_said_as_an_expression_evaluates_to_the_gradient_the_node_sent():
    said_in_words, checked = set(), []
    for name, make in OPS.items():
        if make is None:
            continue
        torch.manual_seed(0)
        out = make()
        root = scalar_of(out)
        leaves = leaves_of(root)
        trace = preview(root, "root", {id(leaf): f"p{i}" for i, leaf in enumerate(leaves)})
        node = [n for n in trace["nodes"] if n["name"] == type(out.grad_fn).__name__][-1]  # scalar_of's come first
        namespace = {f"p{i}": leaf.detach().double() for i, leaf in enumerate(leaves)}
        namespace.update({f: (lambda op: lambda *args: op(*map(tensor, args)))(getattr(torch, f)) for f in FUNCTIONS})
        namespace.update(pi=math.pi, **words_of(out.grad_fn))
        for i, formula in enumerate(node["formulas"]):
            if formula is None:
                continue
            value = evaluated(formula, node, namespace) if node["grad_outputs"][0] else None
            if value is None:
                said_in_words.add(name)
                continue
            sent = shown(node["grad_inputs"][i])
            value = sent_shape(value, sent.shape)
            assert list(value.shape) == list(sent.shape), (name, i, formula)
            floor = 1e-6 * float(sent.abs().max() or 1.0)
            assert torch.allclose(value, sent, rtol=1e-6, atol=floor), (name, i, formula, value, sent)
            checked.append((name, i))
    assert said_in_words == IN_WORDS
    assert len({name for name, _ in checked}) >= 50, checked


def test_a_formula_said_wrongly_is_caught():
    """The check itself: the sine's formula with sin where cos belongs does not pass."""
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    trace = preview((x.sin() * 1.5).sum(), "root", {id(x): "x"})
    node = next(n for n in trace["nodes"] if n["name"] == "SinBackward0")
    namespace = {"x": x.detach().double(), "cos": torch.cos, "sin": torch.sin}
    sent = shown(node["grad_inputs"][0])
    assert node["formulas"][0] == "grad(sin(x)) * cos(x)"
    assert torch.allclose(evaluated(node["formulas"][0], node, namespace), sent)
    assert not torch.allclose(evaluated("grad(sin(x)) * sin(x)", node, namespace), sent)


@pytest.mark.parametrize("word", ["copied to every element", "reshaped to"])
def test_words_are_not_taken_for_an_expression(word):
    node = {"label": "s", "grad_outputs": [{"values": [1.0]}], "terms": {}}
    assert evaluated(f"grad_s {word} x's shape", node, {}) is None


@pytest.mark.parametrize("make, name", [(lambda x: x.mean(), "MeanBackward0"),
                                        (lambda x: x.mean(0), "MeanBackward1")])
def test_a_mean_says_its_share_without_a_garbled_derivative(make, name):
    """A reduction's gradient in words is no factor: not `d s/d x = 1 / (3 to every element)` (see-backward)."""
    from gradrepl.views.trace_story import sends_lines
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    node = next(n for n in preview(make(x), "root", {id(x): "x"})["nodes"] if n["name"] == name)
    said = " ".join(sends_lines(node))
    assert "x receives grad" in said and "1 / (" not in said and "d " not in said.split("x receives")[0], said
