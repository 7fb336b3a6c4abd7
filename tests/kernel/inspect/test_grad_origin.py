"""A retained non-leaf's .grad a backward pass replaced is no write by hand, though the tensor's node was
looked up in an earlier step (grad_origin.py keeps it): whatever made it another node since (an in-place op
on it or on its base, retain_grad() called later), the step's grads_set names only what no pass reached."""

from __future__ import annotations

import pytest

START = "w = torch.ones(2, requires_grad=True)\nb = w * 1\nh = b[:1] if VIEW else b\n"
LATER = {
    "in place on it, a step later": ["h.mul_(2)", "(h * 5).sum().backward(retain_graph=True)"],
    "in place on it, in the step": ["h.mul_(2); (h * 5).sum().backward(retain_graph=True)"],
    "in place on its base": ["b.add_(1); (h * 5).sum().backward(retain_graph=True)"],
    "twice in place": ["h.mul_(2); h.add_(1)", "(h * 5).sum().backward(retain_graph=True)"],
    "set by hand after the pass": ["(h * 5).sum().backward(retain_graph=True); torch._C.TensorBase.grad.__set__(h, torch.ones_like(h))"],
}


@pytest.mark.parametrize("view", [False, True], ids=["tensor", "view"])
@pytest.mark.parametrize("later", list(LATER))
async def test_a_retained_grad_a_pass_replaced_is_not_set_by_hand(session, later, view):
    for code in [f"VIEW = {view}\n" + START + "h.retain_grad()", "(h * 3).sum().backward(retain_graph=True)", *LATER[later]]:
        result = await session.execute(code)
        assert result.error is None, (code, result.error)
    named = {"h"} if view else {"b"}  # h and b are one tensor, its row named b
    assert bool(named & set(result.grads_set)) == later.startswith("set by hand"), result.grads_set


async def test_retain_grad_called_after_a_pass_looked_up_the_node(session):
    for code in ["w = torch.ones(2, requires_grad=True)\nh = w * 1", "(h * 3).sum().backward(retain_graph=True)",
                 "h.retain_grad()", "(h * 5).sum().backward(retain_graph=True)"]:
        result = await session.execute(code)
        assert result.error is None, (code, result.error)
    assert result.grads_set == [], result.grads_set
    assert {row["name"]: row for row in result.tensors}["h"]["grad"]["values"] == [5.0, 5.0]


async def test_many_rows_of_which_one_is_reached(session):
    for code in ["w = torch.ones(2, requires_grad=True)\nhs = [w * 1 for _ in range(300)]\n"
                 "for h in hs:\n    h.retain_grad()", "sum(h.sum() for h in hs).backward(retain_graph=True)",
                 "hs[7].mul_(3)\nfor _ in range(3):\n    (hs[7] * 2).sum().backward(retain_graph=True)"]:
        result = await session.execute(code)
        assert result.error is None, (code, result.error)
    assert result.grads_set == [], result.grads_set


# A step's start watches only the rows that require grad as the table last read them (a step costs what it
# changed: the others cannot hold a .grad a pass writes); so a flip of requires_grad must reach the table,
# or the .grad a later pass adds would be told as set by hand.
FLIPS = {
    "requires_grad_()": "x.requires_grad_()",
    "requires_grad = True": "x.requires_grad = True",
    "inside a function": "def turn_on(t):\n    t.requires_grad_(True)\nturn_on(xs[0])",
}


@pytest.mark.parametrize("flip", list(FLIPS))
async def test_a_pass_after_requires_grad_was_turned_on_is_told_as_a_pass(session, flip):
    for code in ["x = torch.ones(2)\nxs = [x]\nothers = [torch.zeros(2) for _ in range(50)]", FLIPS[flip],
                 "(x * 3).sum().backward()"]:
        result = await session.execute(code)
        assert result.error is None, (code, result.error)
    assert result.grads_set == [], result.grads_set
    result = await session.execute("(x * 3).sum().backward(); torch._C.TensorBase.grad.__set__(x, torch.full((2,), 7.0))")
    assert result.error is None and set(result.grads_set) & {"x", "xs[0]"}, (result.error, result.grads_set)
