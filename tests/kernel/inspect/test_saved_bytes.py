"""saved_bytes on real kernels, compared with a walk of the nodes' `_saved_*` attributes."""

WALK = '''
def walk_saved(t):
    """Distinct storages of every tensor in a _saved_* attribute of the nodes behind t."""
    storages, pending, seen = {}, [t.grad_fn] if t.grad_fn is not None else [], set()
    while pending:
        node = pending.pop()
        if node in seen:
            continue
        seen.add(node)
        pending.extend(child for child, _ in node.next_functions if child is not None)
        names = [a for a in dir(node) if a.startswith("_saved_")] or (["saved_tensors"] if hasattr(node, "saved_tensors") else [])
        for attribute in names:
            try:
                value = getattr(node, attribute)
            except RuntimeError:
                continue
            for item in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(item, torch.Tensor):
                    storage = item.untyped_storage()
                    storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())
'''
NET = ("torch.manual_seed(0)\n"
       "model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 1))\n"
       "batch = torch.randn(256, 64)\n")


async def walked(session, name):
    return int((await session.inspect(f"walk_saved({name})"))["value"])


async def test_saved_bytes_match_a_walk_of_saved_attributes(session):
    await session.execute(WALK)
    await session.execute("x = torch.tensor(2.0, requires_grad=True)\ny = x ** 2 + 3 * x")
    await session.execute(NET + "loss = model(batch).pow(2).mean()")
    for name in ("y", "loss"):
        assert session.tensors[name]["saved_bytes"] == await walked(session, name) > 0
    assert session.tensors["x"]["saved_bytes"] == 0  # a leaf has no grad_fn
    assert session.tensors["batch"]["saved_bytes"] == 0
    # the activations dominate: 256 rows of 128 floats, several times over
    assert session.tensors["loss"]["saved_bytes"] > 3 * 256 * 128 * 4


async def test_backward_frees_the_graph_and_the_row_is_sent_again(session):
    await session.execute(WALK)
    await session.execute(NET + "loss = model(batch).pow(2).mean()\nhidden = model[0](batch).relu()")
    before = session.tensors["loss"]["saved_bytes"]
    result = await session.execute("loss.backward()")
    rows = {row["name"]: row for row in result.tensors}
    assert rows["loss"]["saved_bytes"] == 0 and rows["loss"]["changed"] is True and before > 0
    assert await walked(session, "loss") == 0
    assert "hidden" not in rows  # its own graph was not run
    assert session.tensors["hidden"]["saved_bytes"] == await walked(session, "hidden") > 0


async def test_no_grad_frozen_layer_and_checkpoint_hold_less(session):
    await session.execute(WALK)
    await session.execute(NET + "full = model(batch).pow(2).mean()")
    full = session.tensors["full"]["saved_bytes"]
    await session.execute("with torch.no_grad():\n    quiet = model(batch).pow(2).mean()\n")
    assert session.tensors["quiet"]["saved_bytes"] == 0 and session.tensors["quiet"]["grad_fn"] is None
    await session.execute("model[0].requires_grad_(False)\nfrozen = model(batch).pow(2).mean()")
    frozen = session.tensors["frozen"]["saved_bytes"]
    assert frozen == await walked(session, "frozen")
    assert 0 < frozen < full
    await session.execute("model[0].requires_grad_(True)\nfrom torch.utils.checkpoint import checkpoint\n"
                          "checked = checkpoint(model, batch, use_reentrant=False).pow(2).mean()")
    checked = session.tensors["checked"]["saved_bytes"]
    assert checked < full / 4, (checked, full)


async def test_graph_view_shows_each_nodes_saved_size(session):
    await session.execute("x = torch.ones(1000, requires_grad=True)\ny = (x * x).sum()")
    reply = await session.graph("y")
    mul = next(node for node in reply.data["graph"]["nodes"] if node["grad_fn"] == "MulBackward0")
    assert mul["saved_bytes"] == 4000  # x saved twice, one storage
    assert "text" not in reply.data  # data only: the frontend words it
    listing = await session.execute("%graph y")
    lines = listing.display.splitlines()  # boxes and arrows: the bytes beside MulBackward0's box
    box = next(index for index, line in enumerate(lines) if "│ MulBackward0 │" in line)
    assert any(line.endswith("  holds 3.9 KiB") for line in lines[box:box + 3]), listing.display
