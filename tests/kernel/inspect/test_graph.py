"""The graph view of a tensor: ops, leaves, saved tensors, freed state, sharing and truncation."""

import torch

from gradrepl.kernel.inspect import Inspector, graph_of
from gradrepl.kernel.inspect.graph import MAX_NODES
from gradrepl.views.graph import graph_text


def first_gradient():
    namespace = {"torch": torch}
    exec("x = torch.tensor(2.0, requires_grad=True)\ny = x ** 2 + 3 * x", namespace)
    inspector = Inspector()
    inspector.step(namespace)
    return namespace, inspector


def test_graph_of_x_squared_plus_3x_names_ops_and_the_leaf():
    namespace, inspector = first_gradient()
    graph = graph_of(namespace["y"], inspector.names_by_id())
    ops = [node["grad_fn"] for node in graph["nodes"]]
    assert graph["root"] == "y" and graph["kind"] == "graph"
    assert ops[0] == "AddBackward0"
    assert sorted(ops[1:3]) == ["MulBackward0", "PowBackward0"]
    accumulate = [node for node in graph["nodes"] if node["grad_fn"] == "AccumulateGrad"]
    assert len(accumulate) == 1 and accumulate[0]["leaf"] == "x"  # reached twice, listed once
    assert [accumulate[0]["id"] for _ in range(2)] == [to for _, to in graph["edges"] if to == accumulate[0]["id"]]
    pow_node = next(node for node in graph["nodes"] if node["grad_fn"] == "PowBackward0")
    saved = {entry["name"]: entry for entry in pow_node["saved"]}
    assert saved["self"] == {"name": "self", "shape": [], "freed": False, "tensor": "x"}
    assert saved["exponent"]["value"] == "2"
    assert graph["freed"] is False and graph["truncated"] is False


def test_graph_text_draws_a_tree_and_shared_nodes_once():
    namespace, inspector = first_gradient()
    text = graph_text(graph_of(namespace["y"], inspector.names_by_id()))
    lines = text.splitlines()
    assert lines[0] == "y"
    assert "AddBackward0" in lines[1]
    for op in ("PowBackward0", "MulBackward0"):
        assert op in text
    assert text.count("AccumulateGrad  → scalar  leaf x") == 1  # the TUI's graph tree words a node the same way
    assert "↺ AccumulateGrad (shown above)" in text
    assert "saved self  scalar  is x" in text and "saved exponent = 2" in text
    assert "freed" not in text


def test_after_backward_saved_tensors_show_as_freed():
    namespace, inspector = first_gradient()
    namespace["y"].backward()
    graph = graph_of(namespace["y"], inspector.names_by_id())
    pow_node = next(node for node in graph["nodes"] if node["grad_fn"] == "PowBackward0")
    assert {entry["name"]: entry["freed"] for entry in pow_node["saved"]} == {"exponent": False, "self": True}
    assert graph["freed"] is True
    text = graph_text(graph)
    assert "saved self  freed by backward" in text and "retain_graph=True" in text


def test_retain_graph_keeps_saved_tensors():
    namespace, inspector = first_gradient()
    namespace["y"].backward(retain_graph=True)
    assert graph_of(namespace["y"], inspector.names_by_id())["freed"] is False


def test_leaf_and_constant_are_described_in_words():
    namespace, inspector = first_gradient()
    leaf = graph_of(namespace["x"], inspector.names_by_id())
    assert leaf["kind"] == "leaf" and leaf["nodes"] == []
    assert "x is a leaf" in graph_text(leaf) and "x.grad" in graph_text(leaf)
    constant = graph_of(torch.ones(2), {})
    assert constant["kind"] == "constant"
    assert "does not require grad" in graph_text(constant)


def test_output_shapes_and_unnamed_leaves():
    w = torch.ones(3, 2, requires_grad=True)
    out = (torch.ones(4, 3) @ w).relu()
    graph = graph_of(out, {})
    assert graph["root"] == "<unnamed tensor>"
    assert graph["nodes"][0]["grad_fn"] == "ReluBackward0" and graph["nodes"][0]["shapes"] == [[4, 2]]
    leaves = [node["leaf"] for node in graph["nodes"] if node["grad_fn"] == "AccumulateGrad"]
    assert leaves == ["<unnamed leaf>"]


def test_a_long_chain_is_truncated():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(MAX_NODES + 50):
        y = y * 1.0
    graph = graph_of(y, {id(x): "x"})
    assert graph["truncated"] is True and len(graph["nodes"]) == MAX_NODES
    ids = {node["id"] for node in graph["nodes"]}
    assert all(a in ids and b in ids for a, b in graph["edges"])
    assert "cut off" in graph_text(graph)
