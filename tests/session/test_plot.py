"""%plot NAME on a real kernel: a number's history from the timeline (a training loss, step by step), the
numbers a list holds (asked of the kernel by name, op `series`), and why nothing can be drawn."""

from __future__ import annotations

from gradrepl.session.timeline import Timeline


def row(name, values, shape=()):
    return {"name": name, "shape": list(shape), "value": {"shape": list(shape), "values": values}, "grad": None}


def test_a_numbers_history_is_each_step_that_changed_it_and_begins_again_when_it_is_removed():
    timeline = Timeline(max_rows=3)
    timeline.record(1, "loss = ...", [row("loss", 2.0), row("w", [1.0, 2.0], (2,))], [])
    timeline.record(2, "w += 1", [row("w", [2.0, 3.0], (2,))], [])
    timeline.record(3, "loss = ...", [row("loss", [[1.5]], (1, 1))], [])  # a 1×1 tensor holds one number
    timeline.record(4, "loss = ...", [row("loss", 0.5)], [])
    assert timeline.scalar_history("loss") == [(1, 2.0), (3, 1.5), (4, 0.5)]  # step 1 is folded, still known
    assert timeline.scalar_history("w") == []  # two numbers: no history line
    timeline.record(5, "del loss", [], ["loss"])
    timeline.record(6, "loss = ...", [row("loss", 9.0)], [])
    assert timeline.scalar_history("loss") == [(6, 9.0)]


async def test_plot_draws_the_loss_across_training_steps_and_a_list_of_losses(session):
    session.width = 58
    try:
        await session.execute("torch.manual_seed(0); model = nn.Linear(3, 1); x = torch.randn(8, 3); "
                              "y = torch.randn(8, 1); opt = torch.optim.SGD(model.parameters(), lr=0.1); losses = []")
        first = session.step + 1
        for _ in range(5):
            await session.execute("loss = F.mse_loss(model(x), y); opt.zero_grad(); loss.backward(); opt.step(); "
                                  "losses.append(loss.item())")
        before = session.step
        history = await session.execute("%plot loss")
        assert session.step == before  # it only looks: no step number
        values = [value for _, value in session.timeline.scalar_history("loss")]
        assert len(values) == 5 and values == sorted(values, reverse=True)  # the loss went down
        lines = history.display.splitlines()
        assert lines[0].startswith(f"loss by step (steps {first} to {first + 4}, last ")
        assert all(len(line) <= 58 for line in lines), lines
        bars = [line.split("┤", 1)[1] for line in lines if "┤" in line]
        assert bars[0].startswith("█") and len(bars[0].rstrip()) < len(bars[-1].rstrip())  # tallest first
        await session.execute("for _ in range(700):\n    losses.append(1.0)\n")
        listed = await session.execute("%plot losses")
        assert listed.error is None, listed.error
        assert listed.display.splitlines()[0].startswith("losses: 705 numbers, each column the mean of 2 (first")
        refused = await session.execute("%plot opt")
        assert refused.error.type == "PlotError" and refused.error.message.startswith("opt is a SGD, not a list")
        missing = await session.execute("%plot nosuch")
        assert missing.error.message.startswith("no variable named 'nosuch'")
        weights = await session.execute("%plot model.weight")  # a tensor's elements, by index
        assert weights.display.startswith("model.weight: 3 numbers")
    finally:
        session.width = None
