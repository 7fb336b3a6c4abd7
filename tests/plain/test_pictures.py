"""`gradrepl --plain` on a real pty at 80 columns: %plot's columns, %graph's boxes and %trace's bars and
heat strips, in text characters that read without colour and fit the terminal."""

from __future__ import annotations

import pytest
from tests.support.pty import screen_lines


@pytest.mark.timeout(300)
def test_plot_graph_and_trace_pictures_fit_80_columns(repl):
    repl.read_until(b"In [1]:")
    repl.type("w = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True); losses = []\r")
    repl.read_until(b"In [2]:")
    for step in range(2, 6):  # four training steps: the loss shrinks as w is halved each time
        repl.type("loss = (w ** 2).sum(); w.grad = None; loss.backward(); w.data.mul_(0.5)\r")
        repl.read_until(f"In [{step + 1}]:".encode())
    repl.type("%plot loss\r")
    plotted = [line.rstrip() for line in screen_lines(repl.read_until(b"(step)"))]
    axis = [line for line in plotted if "┤" in line]
    assert len(axis) == 6 and axis[0].split("┤")[1].startswith("█"), plotted
    assert all(len(line) <= 80 for line in plotted), plotted
    repl.type("%graph loss\r")
    drawn = [line.rstrip() for line in screen_lines(repl.read_until(b"freed the saved tensors"))]
    assert any("│ PowBackward0 │" in line for line in drawn) and any("▼" in line for line in drawn), drawn
    assert all(len(line) <= 80 for line in drawn), drawn
    repl.type("loss = (w ** 2).sum()\r")
    repl.read_until(b"In [7]:")
    repl.type("%trace loss\r")
    traced = [line.rstrip() for line in screen_lines(repl.read_until(b"grad \xe2\x96\x95"))]
    bars = [line for line in traced if line.startswith("   ") and "█" in line]
    assert any("AccumulateGrad → w" in line for line in bars), traced
    repl.type("quit\r")
    assert repl.process.wait(timeout=60) == 0
