"""The panel in a real terminal at the sizes learners work in: the four facts read off the screen."""

from __future__ import annotations

import re

import pytest

from tests.support.tmux import E2E, panel_row, tutor

pytestmark = E2E


def facts(screen: str, name: str) -> list[str]:
    """requires_grad, is_leaf, grad_fn and .grad as the panel line for `name` shows them."""
    cells = panel_row(screen, name).strip("│ ").split()
    cells = cells[1:] if cells[0] == "●" else cells
    assert cells[0] == name, cells
    return cells[1:5]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_four_facts_on_a_real_screen(tmp_path, size):
    term = tutor(tmp_path, *size)
    try:
        term.wait_for(lambda s: "console" in s and "tensors" in s, "the first frame", timeout=20)
        term.wait_for(lambda s: "idle" in s, "the kernel", timeout=60)
        for source in ("w = torch.tensor([1.0, 2.0], requires_grad=True)", "loss = (w * w).sum()",
                       "loss.backward()"):
            term.type(source)
            term.send("Enter")
        screen = term.wait_for(lambda s: panel_row(s, "loss") is not None
                               and re.search(r"\[2, 4\]", panel_row(s, "w") or "") is not None,
                               "w's grad to read [2, 4]")
        assert re.search(r"name\s+req\s+leaf\s+grad_fn\s+\.grad", screen)
        assert facts(screen, "w") == ["yes", "yes", "—", "[2,"]
        # backward freed what loss's graph saved: its grad_fn cell says so (SumBackward0 is in its details)
        assert facts(screen, "loss") == ["yes", "no", "graph", "freed"] and "None" in panel_row(screen, "loss")
    finally:
        term.close()
