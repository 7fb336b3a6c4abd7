"""`gradrepl trace FILE NAME [--json]`: the JSON lines of the issue, compared with torch.autograd.grad."""

import json
import subprocess
import sys

import pytest

from tests.support.paths import GRADREPL

SCRIPT = """import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
inputs = torch.randn(5, 3)
loss = model(inputs).pow(2).mean()
"""
EXPECTED = SCRIPT + """
names = ["model[0].weight", "model[0].bias", "model[2].weight", "model[2].bias"]
grads = torch.autograd.grad(loss, [eval(n) for n in names])
import json
print(json.dumps({n: g.flatten().tolist() for n, g in zip(names, grads)}))
"""


def trace(*args):
    return subprocess.run([*GRADREPL, "trace", *map(str, args)], capture_output=True, text=True, timeout=120)


def test_json_lines_match_the_issue_and_autograd(tmp_path):
    script = tmp_path / "net.py"
    script.write_text(SCRIPT)
    proc = trace(script, "loss", "--json")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0] == {"type": "trace", "root": "loss"}
    nodes, summary = lines[1:-1], lines[-1]
    assert summary == {"type": "summary", "nodes": len(nodes)} and len(nodes) == 11
    assert [node["order"] for node in nodes] == list(range(1, 12))
    for node in nodes:
        assert node["type"] == "node"
        required = {"type", "order", "id", "name", "next", "grad_outputs", "grad_inputs", "made_by", "formulas"}
        told = {"leaf"} if node["name"] == "AccumulateGrad" else {"label", "inputs", "in_table", "derivatives", "terms"}
        assert required <= set(node) <= required | told | {"contributions", "derivatives", "terms"}
    expected = json.loads(subprocess.run([sys.executable, "-c", EXPECTED], capture_output=True, text=True,
                                         check=True).stdout)
    got = {node["leaf"]: node["grad_outputs"][0] for node in nodes if "leaf" in node}
    assert set(got) == set(expected)
    for name, grad in got.items():
        flat = grad["values"] if isinstance(grad["values"][0], float) else sum(grad["values"], [])
        assert flat == pytest.approx(expected[name], rel=1e-5, abs=1e-7)
    ids = {node["id"] for node in nodes}
    assert all(child in ids for node in nodes for child in node["next"])


def test_plain_listing_and_clear_errors(tmp_path):
    script = tmp_path / "net.py"
    script.write_text(SCRIPT + "per_row = model(inputs)\n")
    plain = trace(script, "loss")
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert lines[0] == "backward from loss: 11 node(s), in the order the engine ran them"
    assert lines[1] == "  (a preview: no .grad is changed, the graph is kept)"
    assert lines[2].split()[:2] == ["1", "MeanBackward0"]
    assert any("model[0].weight.grad would get +=" in line for line in lines)
    non_scalar = trace(script, "per_row")
    assert non_scalar.returncode == 2 and ".sum()" in non_scalar.stderr
    assert "%" not in non_scalar.stderr, non_scalar.stderr  # command-line words, not the REPL's %trace
    missing = trace(script, "nope")
    assert missing.returncode == 2 and "no tensor named 'nope'; it has: model[0].weight" in missing.stderr
    broken = tmp_path / "broken.py"
    broken.write_text("import torch\nraise ValueError('boom')\n")
    failed = trace(broken, "loss")
    assert failed.returncode == 1 and "broken.py:2: ValueError: boom" in failed.stderr
