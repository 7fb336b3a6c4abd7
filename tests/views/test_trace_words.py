"""A trace's leaf words are true to what ran: `%trace NAME` is a preview (autograd.grad on the side, no
.grad written), so its leaves say what *would* be added; `%trace STATEMENT` ran the learner's own
backward, so there `x.grad +=` is what happened."""

from __future__ import annotations

from gradrepl.views.trace import trace_text
from gradrepl.views.trace_story import arriving_text, echo_tag

# x used twice: y = x ** 2 + 3 * x at x = 2, as the kernel sends it (two gradients meet at x's AccumulateGrad)
NODES = [
    {"order": 1, "id": "n0", "name": "AddBackward0", "next": ["n1", "n2"], "label": "y",
     "grad_outputs": [{"shape": [], "values": 1.0}], "grad_inputs": [{"shape": [], "values": 1.0}] * 2,
     "made_by": None, "formulas": None},
    {"order": 2, "id": "n1", "name": "PowBackward0", "next": ["n3"], "label": "x ** 2",
     "grad_outputs": [{"shape": [], "values": 1.0}], "grad_inputs": [{"shape": [], "values": 4.0}],
     "made_by": None, "formulas": None},
    {"order": 3, "id": "n2", "name": "MulBackward0", "next": ["n3"], "label": "x * 3",
     "grad_outputs": [{"shape": [], "values": 1.0}], "grad_inputs": [{"shape": [], "values": 3.0}, None],
     "made_by": None, "formulas": None},
    {"order": 4, "id": "n3", "name": "AccumulateGrad", "next": [], "leaf": "x",
     "grad_outputs": [{"shape": [], "values": 7.0}], "grad_inputs": [], "made_by": None, "formulas": None,
     "contributions": [{"from": "n1", "values": {"shape": [], "values": 4.0}},
                       {"from": "n2", "values": {"shape": [], "values": 3.0}}]},
]


def trace(preview: bool) -> dict:
    return {"root": "y", "nodes": NODES, "capped": False, "note": None, "preview": preview}


def test_a_preview_says_what_would_be_added_and_that_no_grad_changed():
    text = trace_text(trace(preview=True))
    lines = text.splitlines()
    assert lines[:2] == ["backward from y: 4 node(s), in the order the engine ran them",
                         "  (a preview: no .grad is changed, the graph is kept)"]
    assert "       x.grad would get += 4 (from x ** 2) + 3 (from x * 3) = 7" in lines
    assert "x.grad +=" not in text
    single = {**NODES[3], "contributions": []}
    assert arriving_text(single, {}, preview=True) == "x.grad would get += 7"
    assert echo_tag(NODES[3], preview=True) == "made x (node 4 would fill x.grad)"


def test_a_statement_trace_says_the_grad_was_added_to():
    text = trace_text(trace(preview=False))
    lines = text.splitlines()
    assert lines[0] == "backward from y: 4 node(s), in the order the engine ran them"
    assert "       x.grad += 4 (from x ** 2) + 3 (from x * 3) = 7" in lines
    assert "would" not in text and "preview" not in text
    assert echo_tag(NODES[3]) == "made x (node 4 fills x.grad)"
