"""The inspector's rows: names, order, deltas, identity and summaries, with real torch."""

import json
import subprocess
import sys
import warnings

import pytest
import torch
from torch import nn

from gradrepl.kernel.inspect import Inspector, summarize
from gradrepl.views.remarks import remark_words


def run(namespace, code):
    exec(code, namespace)


@pytest.fixture(autouse=True)
def unhurried(monkeypatch):
    """The panel's time budget is for a learner's namespace; a loaded machine must not make these tests'
    1,000-tensor steps stop early (the budget's own test sets it itself)."""
    from gradrepl.kernel.inspect import snapshot

    monkeypatch.setattr(snapshot, "TIME_BUDGET", 60.0)


@pytest.fixture
def ns():
    return {"torch": torch, "nn": nn, "F": torch.nn.functional}


def stepped_after(namespace, code) -> Inspector:
    """An inspector that took its first step after `code` ran: its next step reports what changes then."""
    run(namespace, code)
    inspector = Inspector()
    inspector.step(namespace)
    return inspector


def names(rows):
    return [row["name"] for row in rows]


def test_rows_are_named_by_expressions_the_learner_can_type(ns):
    run(ns, "x = torch.tensor(2.0, requires_grad=True)\n"
            "xs = [torch.zeros(1), torch.ones(1), torch.full((1,), 2.0)]\n"
            "d = {'k': torch.ones(2), 'n': 3}\n"
            "model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())\n"
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.fc = nn.Linear(1, 1)\n"
            "        self.layers = nn.ModuleList([nn.Linear(1, 1), nn.Linear(1, 1)])\n"
            "net = Net()\n")
    rows, removed = Inspector().step(ns)
    assert names(rows) == [
        "x", "xs[0]", "xs[1]", "xs[2]", "d['k']", "model[0].weight", "model[0].bias",
        "net.fc.weight", "net.fc.bias", "net.layers[0].weight", "net.layers[0].bias",
        "net.layers[1].weight", "net.layers[1].bias",
    ]
    assert removed == []
    for row in rows:  # every name evaluates back to the tensor it describes
        assert eval(row["name"], ns).shape == torch.Size(row["shape"])


def test_row_fields(ns):
    run(ns, "x = torch.tensor(2.0, requires_grad=True)\ny = x ** 2")
    rows = {row["name"]: row for row in Inspector().step(ns)[0]}
    assert set(rows["x"]) == {"name", "aliases", "shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn",
                              "retains_grad", "version", "changed", "grad", "value", "saved_bytes"}
    assert rows["x"]["dtype"] == "torch.float32" and rows["x"]["device"] == "cpu"
    assert rows["x"]["is_leaf"] and rows["x"]["grad_fn"] is None and rows["x"]["grad"] is None
    assert rows["y"]["grad_fn"] == "PowBackward0" and not rows["y"]["is_leaf"]
    assert rows["y"]["value"] == {"shape": [], "values": 4.0, "norm": 4.0}
    json.dumps(list(rows.values()))


def test_second_step_without_change_returns_nothing(ns):
    run(ns, "xs = [torch.ones(2) for _ in range(100)]\nw = torch.ones(2, requires_grad=True)")
    inspector = Inspector()
    assert len(inspector.step(ns)[0]) == 101
    assert inspector.step(ns) == ([], [])


def test_in_place_change_of_any_element_is_detected(ns):
    inspector = stepped_after(ns, "xs = [torch.zeros(2) for _ in range(1000)]")
    for index in (0, 517, 999):
        run(ns, f"xs[{index}].add_(1)")
        rows, removed = inspector.step(ns)
        assert names(rows) == [f"xs[{index}]"] and rows[0]["changed"]
        assert rows[0]["value"]["values"] == [1.0, 1.0] and rows[0]["version"] == 1


def test_replacing_an_element_with_an_equal_tensor_is_a_change(ns):
    inspector = stepped_after(ns, "xs = [torch.zeros(2) for _ in range(50)]")
    run(ns, "xs[7] = torch.zeros(2, requires_grad=True)")
    rows, _ = inspector.step(ns)
    assert names(rows) == ["xs[7]"] and rows[0]["requires_grad"]


@pytest.mark.parametrize("frees", [
    "torch.autograd.grad(y, x)",                      # no .grad written: only the freed graph changes y's row
    "def f():\n    y.backward()\nf()",               # backward inside a function of the learner's
    "torch.autograd.backward([y])",
])
def test_a_graph_freed_by_any_backward_pass_is_seen_however_it_was_started(ns, frees):
    inspector = Inspector()
    run(ns, "x = torch.tensor(2.0, requires_grad=True)\nz = x * 1.0\ny = x ** 2")
    inspector.step(ns)
    run(ns, "u = torch.ones(2)")
    assert names(inspector.step(ns)[0]) == ["u"]  # a step without backward: the graphs are as they were
    run(ns, frees)
    rows, _ = inspector.step(ns)
    freed = {row["name"]: row["saved_bytes"] for row in rows}
    assert freed.get("y") == 0, rows
    assert "z" not in freed  # its own graph was not walked


def test_backward_marks_the_leaf_grad_changed_and_del_removes(ns):
    inspector = Inspector()
    run(ns, "x = torch.tensor(2.0, requires_grad=True)\ny = x ** 2 + 3 * x")
    inspector.step(ns)
    run(ns, "y.backward()")
    rows, _ = inspector.step(ns)
    assert names(rows) == ["x", "y"]  # y itself did not change, but backward freed what its graph saved
    assert rows[0]["grad"] == {"shape": [], "values": 7.0, "norm": 7.0}
    assert rows[1]["saved_bytes"] == 0
    run(ns, "x.grad.zero_()")
    assert inspector.step(ns)[0][0]["grad"]["values"] == 0.0
    run(ns, "del x")
    assert inspector.step(ns) == ([], ["x"])


def test_requires_grad_flip_and_grad_reset_are_detected(ns):
    inspector = stepped_after(ns, "xs = [torch.ones(2) for _ in range(200)]")
    run(ns, "xs[3].requires_grad_()")
    assert names(inspector.step(ns)[0]) == ["xs[3]"]
    run(ns, "xs[3].sum().backward()")
    rows, _ = inspector.step(ns)
    assert rows[0]["grad"]["values"] == [1.0, 1.0]
    run(ns, "xs[3].grad = None")
    assert inspector.step(ns)[0][0]["grad"] is None


def test_order_is_first_appearance_and_stable(ns):
    inspector = Inspector()
    run(ns, "b = torch.ones(1)\na = torch.ones(1)")
    inspector.step(ns)
    run(ns, "c = torch.ones(1)\nb = torch.zeros(1)")  # b rebound: same place in the table
    rows, _ = inspector.step(ns)
    assert names(rows) == ["b", "c"]
    assert names(inspector.table()) == ["b", "a", "c"]
    assert [row["changed"] for row in inspector.table()] == [True, False, True]
    for _ in range(3):
        inspector.step(ns)
        assert names(inspector.table()) == ["b", "a", "c"]


def test_a_tensor_reachable_twice_keeps_its_first_name(ns):
    inspector = Inspector()
    run(ns, "model = nn.Linear(1, 1)\nw = model.weight")
    rows, _ = inspector.step(ns)
    assert names(rows) == ["model.weight", "model.bias"]
    run(ns, "t = torch.ones(1)\nalias = t")
    assert names(inspector.step(ns)[0]) == ["t"]
    run(ns, "del t")  # now only `alias` reaches it
    rows, removed = inspector.step(ns)
    assert names(rows) == ["alias"] and removed == ["t"]


def test_recycled_id_is_not_mistaken_for_the_old_tensor(ns):
    inspector = Inspector()
    run(ns, "xs = [torch.zeros(3) for _ in range(40)]")
    inspector.step(ns)
    # free one element and put a fresh tensor with the same contents in its slot
    run(ns, "xs[5] = None\nxs[5] = torch.zeros(3)")
    assert names(inspector.step(ns)[0]) == ["xs[5]"]


def test_inference_tensors_have_rows_without_a_version(ns):
    run(ns, "with torch.inference_mode():\n    frozen = [torch.ones(2) for _ in range(3)]\nx = torch.ones(1)")
    inspector = Inspector()
    rows, _ = inspector.step(ns)
    assert [row["version"] for row in rows] == [-1, -1, -1, 0]
    assert inspector.step(ns) == ([], [])


def test_resolve_and_names_by_id(ns):
    inspector = stepped_after(ns, "d = {'k': torch.ones(2)}")
    assert inspector.resolve("d['k']") is ns["d"]["k"]
    assert inspector.resolve("__import__('os')") is None
    assert inspector.names_by_id() == {id(ns["d"]["k"]): "d['k']"}
    inspector.reset()
    assert inspector.table() == [] and len(inspector.step(ns)[0]) == 1


def test_non_leaf_rows_do_not_trigger_the_grad_warning(ns, recwarn):
    inspector = stepped_after(ns, "x = torch.ones(2, requires_grad=True)\nys = [x * i for i in range(10)]")
    inspector.step(ns)
    assert not [w for w in recwarn if "not a leaf" in str(w.message)]


def test_small_summary_shows_values_and_json_safe_non_finite():
    summary = summarize(torch.tensor([1.0, float("nan"), float("inf"), -float("inf")]))
    assert summary["values"] == [1.0, "nan", "inf", "-inf"] and summary["norm"] == "nan"
    assert summarize(torch.tensor([[1, 2], [3, 4]]))["values"] == [[1, 2], [3, 4]]
    assert summarize(torch.tensor([True, False]))["norm"] == 1.0
    assert summarize(torch.tensor([1 + 2j]))["values"] == ["(1+2j)"]
    assert summarize(torch.zeros(0, 3)) == {"shape": [0, 3], "values": [], "norm": 0.0}
    assert summarize(torch.empty(3, device="meta")) == {"shape": [3]}
    assert summarize(torch.eye(3).to_sparse()) == {"shape": [3, 3]}


def test_big_summary_shows_statistics_without_values():
    summary = summarize(torch.arange(100, dtype=torch.float32))
    assert summary == {"shape": [100], "min": 0.0, "max": 99.0, "mean": 49.5,
                       "norm": pytest.approx(float(torch.arange(100.0).norm()))}
    ints = summarize(torch.arange(3_000_000).reshape(1000, 3000))  # several pieces
    assert ints["min"] == 0 and ints["max"] == 2_999_999 and ints["mean"] == pytest.approx(1_499_999.5)
    strided = summarize(torch.arange(200.0).reshape(10, 20).t()[::2])  # columns 0, 2, ... 18
    assert strided == {"shape": [10, 10], "min": 0.0, "max": 198.0, "mean": 99.0,
                       "norm": pytest.approx(float(torch.arange(200.0).reshape(10, 20)[:, ::2].norm()))}
    flags = summarize(torch.arange(300) % 3 == 0)
    assert flags["min"] is False and flags["max"] is True and flags["mean"] == pytest.approx(1 / 3)


def test_summary_does_not_grow_the_graph():
    x = torch.ones(100, requires_grad=True)
    summarize(x)
    assert x.grad_fn is None and x._version == 0


MEMORY_PROBE = """
import resource, sys, torch
torch.set_num_threads(1)  # as in the kernel; an oversubscribed OpenMP pool only adds waiting
from gradrepl.kernel.inspect.summary import summarize
t = {make}
t += 1  # touch every page
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
summary = summarize(t)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) / 1024, t.numel() * t.element_size() / 2**20)
"""


@pytest.mark.parametrize("make", ["torch.zeros(30_000_000)", "torch.zeros(30_000_000, dtype=torch.int64)",
                                  "torch.zeros(6000, 5000).t()", "torch.zeros(12000, 5000)[::2]"])
def test_big_summary_does_not_copy_the_tensor(make):
    out = subprocess.run([sys.executable, "-c", MEMORY_PROBE.format(make=make)],
                         capture_output=True, text=True, check=True).stdout.split()
    grown_mib, tensor_mib = map(float, out)
    assert grown_mib < tensor_mib / 4, f"peak RSS grew {grown_mib:.0f} MiB for a {tensor_mib:.0f} MiB tensor"


ONE_NAME_BOUND_ANEW = [
    "t05 = t06",                       # an alias made by rebinding: one tensor, two names
    "t06 = t06 + 1",                   # the alias's first name bound anew: t05 owns the old tensor now
    "t07 = t07 * 2\nt08.grad = torch.ones(2)", "t09 = t09.detach()", "t11 = t12 = torch.zeros(2)",
    "t13 = (t13 * 3).sum() * torch.ones(2)\nt13.retain_grad()\nt13.sum().backward()",
    "t14 = t14.detach().requires_grad_()\nt14.sum().backward()",
    "t15 = t16\nt16 = t15", "t17 = t18\nt18 = t19\nt19 = t17",
]


@pytest.mark.parametrize("statement", ONE_NAME_BOUND_ANEW)
def test_names_bound_anew_leave_the_table_a_fresh_inspector_reads(ns, statement):
    # Names of a group bound to other objects are patched into the group, not rebuilt: the table must
    # still be the one an inspector that never saw the step before reads (which of a tensor's names
    # owns its row may differ: a tensor keeps the name it had).
    inspector = stepped_after(ns, "\n".join(f"t{i:02d} = torch.ones(2, requires_grad={i % 3 != 0}) * 1.0"
                                            if i % 2 else f"t{i:02d} = torch.ones(2, requires_grad=True)"
                                            for i in range(20)))
    run(ns, statement)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        rows, removed = inspector.step(ns)
    assert not said, [str(w.message)[:80] for w in said]  # the learner's output gets no warning of the inspector's
    fresh = Inspector()
    fresh.step(ns)
    def by_names(table):
        return {frozenset([row["name"], *row["aliases"]]):
                {key: value for key, value in row.items() if key not in ("changed", "name", "aliases")}
                for row in table}

    assert by_names(inspector.table()) == by_names(fresh.table())
    assert set(names(rows)) | set(removed), statement


def test_growing_and_shrinking_a_list_reports_only_the_ends(ns):
    inspector = stepped_after(ns, "losses = [torch.tensor(float(i)) for i in range(300)]")
    run(ns, "losses.append(torch.tensor(-1.0))")
    rows, removed = inspector.step(ns)
    assert names(rows) == ["losses[300]"] and removed == []
    run(ns, "losses.append(torch.tensor(-2.0))\nlosses[0].add_(1)")
    assert names(inspector.step(ns)[0]) == ["losses[0]", "losses[301]"]
    run(ns, "losses.pop()\nlosses.pop()")
    assert inspector.step(ns) == ([], ["losses[300]", "losses[301]"])


def test_one_name_of_many_replaced_reports_it_and_what_else_changed_in_place(ns):
    # `t3 = t3 + 1` among fifty names: the other positions still hold their objects, so only what
    # changed in them counts (an in-place op, a new .grad, a flag), beside the replaced one.
    inspector = stepped_after(ns, "ts = None\n" + "\n".join(
        f"t{i:02d} = torch.ones(2, requires_grad={i % 2 == 0})" for i in range(50)))
    run(ns, "t03 = t03 + 1")
    assert names(inspector.step(ns)[0]) == ["t03"]
    run(ns, "t20 = t20 * 2\nt07.add_(1)\nt10.sum().backward()\nt31.requires_grad_()")
    rows, removed = inspector.step(ns)
    assert sorted(names(rows)) == ["t07", "t10", "t20", "t31"] and removed == []
    assert {row["name"]: row["grad"] is not None for row in rows}["t10"]
    run(ns, "del t40\nt41 = t41.detach()")
    rows, removed = inspector.step(ns)
    assert names(rows) == ["t41"] and removed == ["t40"]
    assert inspector.step(ns) == ([], [])


def test_mixed_containers_and_nesting(ns):
    run(ns, "pair = (torch.ones(1), [torch.zeros(2), 'label', {'w': torch.ones(3)}], 7)\n"
            "mods = [nn.Linear(1, 1)]\nblocks = nn.ModuleDict({'enc': nn.Linear(1, 1)})")
    rows, _ = Inspector().step(ns)
    assert names(rows) == ["pair[0]", "pair[1][0]", "pair[1][2]['w']", "mods[0].weight", "mods[0].bias",
                           "blocks['enc'].weight", "blocks['enc'].bias"]
    for row in rows:
        assert eval(row["name"], ns).shape == torch.Size(row["shape"])


def test_functions_modules_classes_and_private_names_are_skipped(ns):
    run(ns, "import math\n_hidden = torch.ones(1)\ndef f():\n    return torch.ones(1)\nclass C:\n    t = torch.ones(1)\n")
    assert Inspector().step(ns) == ([], [])


def test_rows_past_the_time_budget_are_owed_to_the_next_step(ns, monkeypatch):
    from gradrepl.kernel.inspect import snapshot

    run(ns, "xs = [torch.ones(2) for _ in range(200)]")
    inspector = Inspector()
    monkeypatch.setattr(snapshot, "TIME_BUDGET", 0.0)
    rows, _ = inspector.step(ns)
    assert 0 < len(rows) < 200
    assert inspector.stopped == {"code": "panel_stopped_rows", "names": {"rows": len(rows), "seconds": 0.0}}
    assert remark_words(inspector.stopped).startswith(f"panel stopped after {len(rows)} rows: reading tensors took over")
    monkeypatch.setattr(snapshot, "TIME_BUDGET", 10.0)
    rest, _ = inspector.step(ns)
    assert names(rows) + names(rest) == [f"xs[{i}]" for i in range(200)]
    assert inspector.stopped is None and inspector.step(ns) == ([], [])
