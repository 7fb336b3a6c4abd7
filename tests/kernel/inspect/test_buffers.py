"""Batch norm's running statistics are written in place behind their version counter (issue 24): the
panel must show what training made of them, not the 0 and 1 they started with."""


def values(session, name):
    return session.tensors[name]["value"]["values"]


async def test_batchnorm1d_training_steps_show_their_running_statistics(session):
    await session.execute("torch.manual_seed(0)\nbn = nn.BatchNorm1d(3)\nx = torch.randn(64, 3) * 2 + 5")
    trained = await session.execute("for _ in range(20):\n    out = bn(x)")
    changed = {row["name"] for row in trained.tensors}
    assert {"bn.running_mean", "bn.running_var", "bn.num_batches_tracked"} <= changed, changed
    mean = values(session, "bn.running_mean")
    assert all(3 < m < 6 for m in mean), mean  # on its way to x's mean of 5, not the starting 0
    assert all(v > 2 for v in values(session, "bn.running_var"))
    bn_eval = await session.execute("bn.eval()\nout = bn(x)")
    assert "bn.running_mean" not in {row["name"] for row in bn_eval.tensors}  # eval writes nothing


async def test_batchnorm2d_in_a_model_and_functional_batch_norm(session):
    await session.execute("torch.manual_seed(0)\nmodel = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))\n"
                          "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nimages = torch.randn(4, 1, 6, 6) + 3")
    step = await session.execute("loss = model(images).pow(2).mean()\nopt.zero_grad()\nloss.backward()\nopt.step()")
    assert "model[1].running_mean" in {row["name"] for row in step.tensors}
    assert any(m != 0 for m in values(session, "model[1].running_mean"))
    await session.execute("stats = torch.zeros(3)\nspread = torch.ones(3)")
    functional = await session.execute("F.batch_norm(torch.randn(16, 3) + 10, stats, spread, training=True)")
    assert {"stats", "spread"} <= {row["name"] for row in functional.tensors}
    assert all(m > 0.5 for m in values(session, "stats"))
