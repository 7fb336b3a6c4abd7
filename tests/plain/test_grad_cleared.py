"""A .grad cell says what changed in the step (issue 22, a blind beginner): a step that set `x.grad = None`
before its backward wrote the gradient afresh, so it added nothing to what .grad held before the step; and a
non-leaf's retained .grad that a second backward replaced is a change of its row, with what that pass added."""

import subprocess

from gradrepl.views.steps import step_text
from tests.support.paths import GRADREPL


def row_of(text: str, name: str) -> str:
    """Row ``name`` of a step's table ("" when the step shows no such row)."""
    return next((line for line in text.splitlines() if line.lstrip("* ").startswith(name + " ")), "")


async def test_a_grad_cleared_then_written_in_one_step_shows_no_addition(session):
    await session.execute("x = torch.tensor([1.0, 2.0], requires_grad=True)")
    await session.execute("s = (x + 1).sum()\ns.backward(retain_graph=True)")
    result = await session.execute("x.grad = None\ns.backward(retain_graph=True)\ns.backward()")
    text = step_text(result, before=session.grads_before)
    assert "(+" not in text, text  # [2, 2] came from None, not [1, 1] plus [1, 1]
    assert "[2, 2]" in text, text


# Run as `gradrepl run` does (a script's steps): the old .grad freed, the new one's Python object can take its
# address, storage and version, so no key of those sees the change; the values its pass left do.
def test_a_retained_grad_replaced_by_a_second_backward_is_a_change(tmp_path):
    script = tmp_path / "retained.py"
    script.write_text("import torch\nx = torch.tensor(2.0, requires_grad=True)\nh = x * 3\nh.retain_grad()\n"
                      "z = h ** 2\nz.backward(retain_graph=True)\nz.backward(retain_graph=True)\nz.backward()\n")
    proc = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    steps = proc.stdout.split("── step ")
    second, third = steps[7], steps[8]
    assert "MulBackward0  24 (+12 at In [7])" in row_of(second, "h"), second
    assert "MulBackward0  36 (+12 at In [8])" in row_of(third, "h"), third
