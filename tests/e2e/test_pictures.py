"""The pictures in a real terminal at the sizes learners work in: %plot's columns and %graph's boxes read off
the screen, inside the console's borders (never re-wrapped)."""

from __future__ import annotations

import pytest

from tests.support.tmux import E2E, tutor

pytestmark = E2E

STEP = "loss = (w ** 2).sum(); w.grad = None; loss.backward(); w.data.mul_(0.5)"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_plot_and_graph_on_a_real_screen(tmp_path, size):
    term = tutor(tmp_path, *size)
    try:
        term.wait_for(lambda s: "idle" in s, "the kernel", timeout=60)
        term.type("w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)")
        term.send("Enter")
        for _ in range(4):
            term.type(STEP)
            term.send("Enter")
        term.wait_for(lambda s: "In [6]" in s, "four training steps")
        term.type("%plot loss")
        term.send("Enter")
        screen = term.wait_for(lambda s: "(step)" in s, "the plot")
        axis = [line.split("││")[0] for line in screen.splitlines() if "┤" in line]  # the console's side
        assert len(axis) == 6 and "loss by step (steps 2 to 5" in screen, screen
        assert all(line.startswith("│") and line.split("┤")[1].rstrip(" │▁▂▃▄▅▆▇█") == ""
                   for line in axis), screen  # columns only, inside the console's border
        term.type("%graph loss")
        term.send("Enter")
        screen = term.wait_for(lambda s: "│ AccumulateGrad │" in s, "the boxes")
        assert "│ leaf w         │" in screen and "▼" in screen, screen
    finally:
        term.close()
