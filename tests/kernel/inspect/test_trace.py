"""Backward node by node (%trace) on real kernels, compared with torch.autograd.grad."""

import ast

import pytest

from tests.support.paths import ROOT
from gradrepl.commands.run import split_steps

TWO_LAYERS = (
    "torch.manual_seed(0)\n"
    "model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))\n"
    "inputs = torch.randn(5, 3)\n"
    "loss = model(inputs).pow(2).mean()"
)
PARAMETERS = ["model[0].weight", "model[0].bias", "model[2].weight", "model[2].bias"]


async def autograd_grads(session, root: str, leaves: list[str]) -> dict[str, list]:
    """What torch.autograd.grad says, computed in the kernel without touching .grad or the graph."""
    expr = f"repr([g.tolist() for g in torch.autograd.grad({root}, [{', '.join(leaves)}], retain_graph=True)])"
    value = await session.inspect(expr)
    return {leaf: flat(grad) for leaf, grad in zip(leaves, ast.literal_eval(value["value"]))}


def flat(values) -> list:
    return [x for v in values for x in flat(v)] if isinstance(values, list) else [values]


def leaf_grads(trace: dict) -> dict[str, list]:
    """The gradient each AccumulateGrad received, flattened, by leaf name."""
    return {node["leaf"]: flat(node["grad_outputs"][0]["values"]) for node in trace["nodes"] if "leaf" in node}


def assert_engine_order(trace: dict) -> None:
    """Every node once, numbered 1..n, and each runs after every node that passes it a gradient."""
    nodes = trace["nodes"]
    ids = [node["id"] for node in nodes]
    assert len(ids) == len(set(ids))
    assert [node["order"] for node in nodes] == list(range(1, len(nodes) + 1))
    order = {node["id"]: node["order"] for node in nodes}
    for node in nodes:
        for child in node["next"]:
            assert order[child] > node["order"], (node["name"], child)


async def test_preview_of_first_gradient_changes_no_grad_and_keeps_the_graph(session):
    for line in ("x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x"):
        await session.execute(line)
    result = await session.execute("%trace y")
    assert result.error is None, result.error
    trace = result.trace["traces"][0]
    assert [node["name"] for node in trace["nodes"]][0] == "AddBackward0"
    assert sorted(node["name"] for node in trace["nodes"]) == ["AccumulateGrad", "AddBackward0", "MulBackward0",
                                                                "PowBackward0"]
    assert_engine_order(trace)
    assert leaf_grads(trace) == {"x": pytest.approx([7.0])}
    assert "x.grad would get += 4 (from x ** 2) + 3 (from x * 3) = 7" in result.display  # x met twice
    assert result.tensors == []  # nothing changed
    assert (await session.inspect("x.grad"))["kind"] == "none"
    again = await session.execute("%trace y")  # the graph was not freed
    assert again.error is None and leaf_grads(again.trace["traces"][0]) == {"x": pytest.approx([7.0])}


async def test_two_layer_network_trace_matches_autograd_grad(session):
    await session.execute(TWO_LAYERS)
    expected = await autograd_grads(session, "loss", PARAMETERS)
    result = await session.execute("%trace loss")
    trace = result.trace["traces"][0]
    assert_engine_order(trace)
    graph = (await session.graph("loss")).data["graph"]
    assert len(trace["nodes"]) == len(graph["nodes"])  # every node of the graph, AccumulateGrad included
    got = leaf_grads(trace)
    assert set(got) == set(PARAMETERS)
    for name in PARAMETERS:
        assert got[name] == pytest.approx(expected[name], rel=1e-5, abs=1e-7)
    addmm = [node for node in trace["nodes"] if node["name"] == "AddmmBackward0"]
    assert len(addmm) == 2 and all(len(node["grad_inputs"]) == 3 for node in addmm)
    assert addmm[1]["grad_inputs"][1] is None  # no gradient flows to the input batch
    for name in PARAMETERS:
        assert session.tensors[name]["grad"] is None


async def test_trace_statement_runs_the_learners_backward(session):
    await session.execute(TWO_LAYERS)
    expected = await autograd_grads(session, "loss", PARAMETERS)
    result = await session.execute("%trace loss.backward()")
    assert result.error is None, result.error
    trace = result.trace["traces"][0]
    assert trace["root"] == "loss"
    assert_engine_order(trace)
    rows = {row["name"]: row for row in result.tensors}
    for name in PARAMETERS:
        assert leaf_grads(trace)[name] == pytest.approx(expected[name], rel=1e-5, abs=1e-7)
        assert flat(rows[name]["grad"]["values"]) == pytest.approx(expected[name], rel=1e-5, abs=1e-7)
    assert rows["loss"]["saved_bytes"] == 0  # backward freed the graph, as it normally does
    assert "backward from loss" in result.display


async def test_the_batch_has_the_learners_name_in_the_preview_and_in_the_real_backward(session):
    # The batch is held only as AddmmBackward0's saved mat1, and a real backward frees it as the node runs.
    await session.execute(TWO_LAYERS)
    preview = await session.execute("%trace loss")
    real = await session.execute("%trace loss.backward()")
    for result in (preview, real):
        assert "inputs receives no gradient (it does not require grad)" in result.display, result.display
        assert "receives inputs.T @ grad" in result.display and "const" not in result.display, result.display


async def test_a_preview_says_it_is_one_and_a_statement_trace_does_not(session):
    """%trace NAME wrote no .grad, so its reply and words say preview; %trace STATEMENT's backward did write."""
    for line in ("x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x"):
        await session.execute(line)
    preview = await session.execute("%trace y")
    assert preview.trace["traces"][0]["preview"] is True
    assert preview.display.splitlines()[1] == "  (a preview: no .grad is changed, the graph is kept)"
    assert "x.grad would get += 4 (from x ** 2) + 3 (from x * 3) = 7" in preview.display
    assert "x.grad +=" not in preview.display
    assert session.tensors["x"]["grad"] is None  # what the words say: nothing was written
    real = await session.execute("%trace y.backward()")
    assert real.trace["traces"][0]["preview"] is False
    assert real.display.startswith("backward from y: 4 node(s)")
    assert "x.grad += 4 (from x ** 2) + 3 (from x * 3) = 7" in real.display
    assert "would" not in real.display and "preview" not in real.display
    assert session.tensors["x"]["grad"]["values"] == pytest.approx(7.0)


async def test_seed_examples_traced_at_their_backward_calls(session):
    """Each seed script runs with its backward statements under %trace; each trace agrees with autograd."""
    for example in ("first_gradient.py", "accumulate.py"):
        await session.restart()
        source = (ROOT / "examples" / example).read_text()
        traced = 0
        for _, step in split_steps(source, example):
            if step.endswith(".backward()"):
                root = step.removesuffix(".backward()")
                expected = await autograd_grads(session, root, ["x"])
                result = await session.execute(f"%trace {step}")
                trace = result.trace["traces"][0]
                assert_engine_order(trace)
                assert leaf_grads(trace) == {"x": pytest.approx(expected["x"])}
                traced += 1
            else:
                await session.execute(step)
        assert traced == (1 if example == "first_gradient.py" else 2)
    assert session.tensors["x"]["grad"]["values"] == 0.0  # accumulate.py ends with x.grad.zero_()


async def test_linear_regression_seed_loop_traces_the_first_passes_only(session):
    source = (ROOT / "examples" / "linear_regression.py").read_text()
    steps = [step for _, step in split_steps(source, "linear_regression.py")]
    loop = next(i for i, step in enumerate(steps) if step.startswith("for epoch"))
    for step in steps[:loop]:
        await session.execute(step)
    result = await session.execute(f"%trace {steps[loop]}")
    assert result.error is None, result.error
    assert len(result.trace["traces"]) == 3
    assert "97 more backward call(s) ran untraced" in result.trace["note"]
    first = result.trace["traces"][0]
    assert first["root"] == "loss" and set(leaf_grads(first)) == {"w", "b"}
    assert_engine_order(first)


async def test_non_scalar_leaf_and_unknown_names_are_explained(session):
    await session.execute("w = torch.ones(3, requires_grad=True)\nv = w * 2")
    non_scalar = await session.execute("%trace v")
    assert non_scalar.error.type == "TraceError"
    assert ".sum()" in non_scalar.error.message and "gradient" in non_scalar.error.message
    leaf = await session.execute("%trace w")
    assert "is a leaf" in leaf.error.message
    missing = await session.execute("%trace nothing_here")
    assert "no live tensor named 'nothing_here'" in missing.error.message
    usage = await session.execute("%trace")
    assert usage.error.type == "UsageError"
    with_gradient = await session.execute("%trace v.backward(torch.ones_like(v))")
    assert leaf_grads(with_gradient.trace["traces"][0]) == {"w": [2.0, 2.0, 2.0]}


async def test_freed_graph_and_huge_graph(session):
    await session.execute("a = torch.tensor(1.0, requires_grad=True)\nb = a * 3\nb.backward()")
    freed = await session.execute("%trace b")
    assert "freed" in freed.error.message and "retain_graph=True" in freed.error.message
    await session.execute("h = a\nfor _ in range(700):\n    h = h * 1.0\n")
    capped = (await session.execute("%trace h")).trace["traces"][0]
    assert capped["capped"] is True and len(capped["nodes"]) == 500
    assert "more than 500 nodes" in capped["note"]


async def test_preview_leaves_retained_grads_alone(session):
    await session.execute("x = torch.tensor(2.0, requires_grad=True)\na = x * 2\na.retain_grad()\ny = a * 3")
    await session.execute("%trace y")
    assert (await session.inspect("a.grad"))["kind"] == "none"
    await session.execute("(a * 5).backward()")
    await session.execute("%trace y")
    assert (await session.inspect("a.grad.item()"))["value"] == 5.0
