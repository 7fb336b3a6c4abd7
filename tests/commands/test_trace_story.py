"""`gradrepl trace FILE NAME --json`'s story fields (issue 25): made_by, formulas and contributions,
each compared with plain torch: the statements run one at a time, torch's own hooks on every node."""

import ast
import json
import subprocess

import pytest
import torch

from tests.support.paths import GRADREPL

SCRIPT = """import torch
from torch import nn
torch.manual_seed(0)
x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([0.5, -1.0], requires_grad=True)
a = x * w
total = a.sin().sum()
for i in range(2):
    h = a * (i + 1)
    total = total + h.exp().sum()
net = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
out = net(a.unsqueeze(0))
loss = total + out.sum() + (w ** 2).sum()
"""


def traced(tmp_path) -> list[dict]:
    script = tmp_path / "story.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([*GRADREPL, "trace", str(script), "loss", "--json"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    nodes = [json.loads(line) for line in proc.stdout.splitlines()][1:-1]
    return sorted(nodes, key=lambda node: int(node["id"][1:]))  # n0, n1 ...: the walk's order from the root


class Reference:
    """The script in plain torch, one statement at a time (a loop's body statement by statement, each
    iteration), each new node marked with the statement that was running when it appeared."""

    def __init__(self):
        self.namespace: dict = {}
        self.made: dict = {}   # node -> (step, line, source, tensor name or None); holding it keeps it one object
        tree = ast.parse(SCRIPT)
        for step, statement in enumerate(tree.body, 1):  # `run` and `trace` make each a step
            if isinstance(statement, ast.For):
                for value in eval(compile(ast.Expression(statement.iter), "<ref>", "eval"), self.namespace):
                    self.namespace[statement.target.id] = value
                    for inner in statement.body:
                        self.run(inner, step)
            else:
                self.run(statement, step)

    def run(self, statement: ast.stmt, step: int) -> None:
        exec(compile(ast.Module([statement], []), "<ref>", "exec"), self.namespace)
        source = ast.get_source_segment(SCRIPT, statement)
        named = {}
        if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            value = self.namespace[statement.targets[0].id]
            if isinstance(value, torch.Tensor) and value.grad_fn is not None:
                named[value.grad_fn] = statement.targets[0].id
        for value in list(self.namespace.values()):
            if isinstance(value, torch.Tensor) and value.grad_fn is not None:
                self.mark(value.grad_fn, (step, statement.lineno, source), named)

    def mark(self, root, where, named) -> None:
        pending = [root]
        while pending:
            node = pending.pop()
            if node in self.made or type(node).__name__ == "AccumulateGrad":
                continue
            self.made[node] = (*where, named.get(node))
            pending.extend(child for child, _ in node.next_functions if child is not None)

    def walk(self) -> list:
        """The nodes from loss, breadth first, each once: the order of the trace's ids."""
        nodes, seen, index = [self.namespace["loss"].grad_fn], set(), 0
        seen.add(nodes[0])
        while index < len(nodes):
            for child, _ in nodes[index].next_functions:
                if child is not None and child not in seen:
                    seen.add(child)
                    nodes.append(child)
            index += 1
        return nodes


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    return traced(tmp_path_factory.mktemp("story")), Reference()


def test_made_by_names_the_statement_that_really_made_each_node(both):
    nodes, reference = both
    walked = reference.walk()
    assert [node["name"] for node in nodes] == [type(node).__name__ for node in walked]
    for node, real in zip(nodes, walked):
        if node["name"] == "AccumulateGrad":
            assert node["made_by"] is None
            continue
        step, line, source, tensor = reference.made[real]
        made = node["made_by"]
        assert (made["step"], made["line"], made["source"]) == (step, line, source), node["name"]
        assert made["tensor"] == tensor, (node["name"], source)
    inner = {node["made_by"]["source"] for node in nodes if node["made_by"] and node["made_by"]["line"] in (9, 10)}
    assert inner == {"h = a * (i + 1)", "total = total + h.exp().sum()"}  # the loop's own lines, not `for`


def test_nodes_made_inside_a_module_name_it(both):
    nodes, _ = both
    modules = {node["made_by"].get("module") for node in nodes if node["name"] == "AddmmBackward0"}
    assert modules == {"net[0]", "net[2]"}
    tanh = next(node for node in nodes if node["name"] == "TanhBackward0")
    assert tanh["made_by"]["source"] == "out = net(a.unsqueeze(0))" and "module" not in tanh["made_by"]


def test_formulas_name_the_learners_tensors(both):
    nodes, _ = both
    mul = next(node for node in nodes if node["made_by"] and node["made_by"]["source"] == "a = x * w")
    assert mul["formulas"] == ["grad_a * w", "grad_a * x"]
    assert mul["derivatives"] == ["w", "x"]
    assert mul["terms"]["w"]["values"] == [0.5, -1.0]
    pow_node = next(node for node in nodes if node["name"] == "PowBackward0")
    assert pow_node["formulas"] == ["grad(w ** 2) * 2 * w"]
    assert all(node["formulas"] == [] for node in nodes if node["name"] == "AccumulateGrad")


def flat(values):
    return [x for v in values for x in flat(v)] if isinstance(values, list) else [values]


def test_contributions_are_what_torchs_hooks_see_and_add_up(both):
    nodes, reference = both
    walked = reference.walk()
    sent, arrived = {}, {}
    for node in walked:
        if type(node).__name__ == "AccumulateGrad":
            node.variable.register_hook(lambda grad, node=node: arrived.__setitem__(node, grad))
        else:
            node.register_hook(lambda inputs, outputs, node=node: sent.__setitem__(node, inputs))
            node.register_prehook(lambda outputs, node=node: arrived.__setitem__(node, outputs[0]))
    reference.namespace["loss"].backward()
    by_id = {node["id"]: real for node, real in zip(nodes, walked)}
    met = [node for node in nodes if "contributions" in node]
    # every node torch feeds from more than one edge says so, one contribution per edge, and no other does
    edges = {}
    for parent in walked:
        for child, _ in parent.next_functions:
            if child is not None:
                edges[child] = edges.get(child, 0) + 1
    assert {node["id"]: len(node["contributions"]) for node in met} == {
        node["id"]: edges[by_id[node["id"]]] for node in nodes if edges.get(by_id[node["id"]], 0) > 1}
    assert {by_id[node["id"]].__class__.__name__ for node in met} >= {"AccumulateGrad", "MulBackward0"}
    a_node = next(node for node in nodes if node["made_by"] and node["made_by"]["tensor"] == "a")
    assert len(a_node["contributions"]) == 4  # a.sin(), a * 1, a * 2, a.unsqueeze(0)
    for node in met:
        real = by_id[node["id"]]
        total = torch.zeros_like(arrived[real])
        for contribution in node["contributions"]:
            parent = by_id[contribution["from"]]  # what torch's hook saw that parent send to this node
            hooked = [sent[parent][k] for k, (child, _) in enumerate(parent.next_functions) if child is real]
            values = flat(contribution["values"]["values"])
            assert any(flat(h.tolist()) == pytest.approx(values, rel=1e-6) for h in hooked), contribution
            total += torch.tensor(contribution["values"]["values"]).reshape(total.shape)
        assert flat(total.tolist()) == pytest.approx(flat(arrived[real].tolist()), rel=1e-5, abs=1e-6)
        assert flat(node["grad_outputs"][0]["values"]) == pytest.approx(flat(arrived[real].tolist()), rel=1e-6)
