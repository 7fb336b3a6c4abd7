"""The panel's promises on a real kernel: every name of a tensor, never a stale value, no tensor kind breaks it."""

from __future__ import annotations


def rows_of(result) -> dict[str, dict]:
    return {row["name"]: row for row in result.tensors}


async def setup(session, code: str) -> None:
    result = await session.execute(code)
    assert result.error is None, result.error


# -- writes that bump no version counter -----------------------------------------------------------

async def test_data_minus_equals_training_step_shows_the_new_weight(session):
    await setup(session, "w = torch.tensor([1.0, 2.0], requires_grad=True)\n(w * w).sum().backward()")
    result = await session.execute("w.data -= 0.5 * w.grad")
    assert rows_of(result)["w"]["value"]["values"] == [0.0, 0.0]
    assert session.tensors["w"]["value"]["values"] == [0.0, 0.0]


async def test_item_write_through_data_and_data_assignment(session):
    await setup(session, "w = torch.zeros(3, requires_grad=True)")
    result = await session.execute("w.data[0] = 7.0")
    assert rows_of(result)["w"]["value"]["values"] == [7.0, 0.0, 0.0]
    result = await session.execute("w.data = torch.ones(2)")
    assert rows_of(result)["w"]["value"]["values"] == [1.0, 1.0]
    assert session.tensors["w"]["shape"] == [2]


async def test_a_write_through_a_views_data_shows_on_its_base(session):
    await setup(session, "w = torch.zeros(3)\nv = w[:2]")
    result = await session.execute("v.data[0] = 7.0")
    assert rows_of(result)["w"]["value"]["values"] == [7.0, 0.0, 0.0]
    result = await session.execute("w[1:].data[1] = 5.0")  # a view with no name of its own
    assert rows_of(result)["w"]["value"]["values"] == [7.0, 0.0, 5.0]


async def test_a_step_with_more_writes_than_the_hooks_follow_still_shows_the_last_one(session):
    """A training loop writes .grad thousands of times; the hooks step aside after MARK_BUDGET of them,
    so the write after that (behind the version counter) is found by reading every row once."""
    await setup(session, "w = torch.zeros(3, requires_grad=True)\nother = torch.zeros(2)")
    result = await session.execute("for _ in range(3000):\n    w.grad = None\nother.data[1] = 5.0\nw.data[0] = 7.0")
    assert result.error is None, result.error
    assert rows_of(result)["w"]["value"]["values"] == [7.0, 0.0, 0.0]
    assert rows_of(result)["other"]["value"]["values"] == [0.0, 5.0]
    # The next step is followed write by write again: an unchanged row stays quiet, a written one is lit.
    result = await session.execute("w.data[1] = 8.0")
    assert set(rows_of(result)) == {"w"} and rows_of(result)["w"]["value"]["values"] == [7.0, 8.0, 0.0]


async def test_grad_data_zero_shows_a_zero_grad(session):
    await setup(session, "w = torch.tensor([1.0, 2.0], requires_grad=True)\n(3 * w).sum().backward()")
    assert session.tensors["w"]["grad"]["values"] == [3.0, 3.0]
    result = await session.execute("w.grad.data.zero_()")
    assert rows_of(result)["w"]["grad"]["values"] == [0.0, 0.0]


async def test_parameter_data_write_inside_a_model(session):
    await setup(session, "model = nn.Linear(2, 1)")
    result = await session.execute("model.bias.data.fill_(5.0)")
    assert rows_of(result)["model.bias"]["value"]["values"] == [5.0]


async def test_lone_retain_grad_is_shown(session):
    await setup(session, "x = torch.tensor(2.0, requires_grad=True)\ny = x * 3")
    assert session.tensors["y"]["retains_grad"] is False
    result = await session.execute("y.retain_grad()")
    assert rows_of(result)["y"]["retains_grad"] is True


async def test_grad_assigned_by_hand_to_a_plain_tensor(session):
    await setup(session, "t = torch.zeros(2)")
    result = await session.execute("t.grad = torch.ones(2)")
    assert rows_of(result)["t"]["grad"]["values"] == [1.0, 1.0]
    result = await session.execute("del t.grad")
    assert rows_of(result)["t"]["grad"] is None


async def test_unchanged_rows_stay_quiet_after_a_data_read(session):
    await setup(session, "a = torch.ones(2)\nb = torch.zeros(2)")
    result = await session.execute("a.data.sum()")  # a read: a's row is re-read, b's is not
    assert set(rows_of(result)) <= {"a"}


# -- every name -----------------------------------------------------------------------------------

async def test_aliases_name_every_way_to_a_tensor(session):
    await setup(session, "model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))")
    result = await session.execute("layer = model[0]\nfor p in model[2].parameters():\n    p.requires_grad_(False)\n")
    rows = rows_of(result)
    assert rows["model[0].weight"]["aliases"] == ["layer.weight"]
    assert rows["model[2].bias"]["aliases"] == ["p"]
    assert session.tensors["model[0].bias"]["aliases"] == ["layer.bias"]
    assert "layer.weight" not in session.tensors and "p" not in session.tensors

    result = await session.execute("a = torch.ones(1)\nb = a")
    assert rows_of(result)["a"]["aliases"] == ["b"]
    result = await session.execute("del b")
    assert rows_of(result)["a"]["aliases"] == []
    assert session.tensors["a"]["aliases"] == []


async def test_a_name_left_after_its_first_name_goes_gets_the_row(session):
    await setup(session, "t = torch.ones(1)\nfirst = [t]\nsecond = [t]\ndel t")
    assert session.tensors["first[0]"]["aliases"] == ["second[0]"]
    result = await session.execute("del first")
    assert result.removed == ["first[0]"]
    assert session.tensors["second[0]"]["aliases"] == []


# -- tensor kinds ---------------------------------------------------------------------------------

async def test_nested_tensor_has_a_row_and_later_tensors_still_appear(session):
    result = await session.execute("import warnings\nwarnings.simplefilter('ignore')\n"
                                   "nt = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])")
    assert rows_of(result)["nt"]["shape"] == [2, "*"]
    result = await session.execute("x2 = torch.ones(2)")
    assert "x2" in rows_of(result)
    result = await session.execute("jt = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], "
                                   "layout=torch.jagged)")
    assert rows_of(result)["jt"]["shape"][0] == 2


async def test_a_billion_element_expand_is_summarised_without_materialising(session):
    result = await session.execute("big = torch.zeros(1).expand(10**9)")
    assert result.error is None and result.kernel_event is None
    row = rows_of(result)["big"]
    assert row["shape"] == [10**9] and row["value"]["max"] == 0.0


async def test_a_tensor_that_cannot_be_read_says_why_and_keeps_the_others(session):
    await setup(session, "class Odd(torch.Tensor):\n"
                         "    @property\n"
                         "    def grad_fn(self):\n"
                         "        raise RuntimeError('no graph here')\n"
                         "odd = torch.ones(2).as_subclass(Odd)\nfine = torch.ones(1)")
    assert session.tensors["odd"]["inspect_error"].startswith("cannot be inspected: RuntimeError: no graph here")
    assert session.tensors["fine"]["value"]["values"] == [1.0]


async def test_a_subclass_that_refuses_every_op_keeps_the_others(session):
    result = await session.execute("class Hostile(torch.Tensor):\n"
                                   "    @classmethod\n"
                                   "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
                                   "        raise ValueError('no ops for you')\n"
                                   "h = torch.ones(2).as_subclass(Hostile)\nafter = torch.zeros(1)")
    assert result.error is None and result.kernel_event is None
    assert "no ops for you" in session.tensors["h"]["inspect_error"]
    assert session.tensors["after"]["value"]["values"] == [0.0]
    assert (await session.execute("later = torch.ones(1)")).tensors[0]["name"] == "later"


async def test_a_self_referential_list_with_a_large_fan_out_returns(session):
    result = await session.execute("t = torch.ones(1)\nw = [t]\nw.extend([w] * 80)")
    assert result.error is None and result.kernel_event is None
    assert session.tensors["t"]["aliases"] == ["w[0]"]


async def test_a_huge_walk_stops_within_its_budget_and_says_where(session):
    code = "a = [torch.ones(1)] * 60\nb = [a] * 60\nc = [b] * 60\nd = [c] * 60"  # 13 million names
    result = await session.execute(code)
    assert result.error is None and result.kernel_event is None
    note = next(note for note in result.notes if note.startswith("panel stopped after"))
    assert "looking through" in note


def test_run_json_rows_carry_aliases(tmp_path):
    import json
    import subprocess

    from tests.support.paths import GRADREPL

    script = tmp_path / "alias.py"
    script.write_text("model = nn.Sequential(nn.Linear(2, 2))\nlayer = model[0]\n")
    proc = subprocess.run([*GRADREPL, "run", "--json", str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    steps = [line for line in map(json.loads, proc.stdout.splitlines()) if line["type"] == "step"]
    rows = {row["name"]: row for row in steps[-1]["tensors"]}
    assert rows["model[0].weight"]["aliases"] == ["layer.weight"]
    assert rows["model[0].bias"]["aliases"] == ["layer.bias"]
