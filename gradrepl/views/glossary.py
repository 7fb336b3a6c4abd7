"""One line for each word a beginner meets in the views (`%help TERM`, the trace's legend, details)."""

from __future__ import annotations

GLOSSES = {
    "grad_outputs": "the gradient arriving at a graph node from the result above it (the trace's 'in')",
    "grad_inputs": "the gradients a graph node passes on to its inputs below it (the trace's 'out')",
    "saved": "a tensor a graph node kept for backward (e.g. Mul keeps both factors); backward() frees it",
    "version": "how many times a tensor was changed in place (add_, +=, [0] = ...); backward checks it",
    "graph holds": "the bytes of the tensors a graph's nodes saved for backward (each storage once, weights and "
                   "inputs included though they exist anyway), freed once backward() has run; what a hook keeps "
                   "outside the nodes is not counted: a checkpoint shows 0 B yet keeps its input alive until backward",
    "None": "no gradient: in a trace, none flows to that input (it does not require grad); as .grad, none kept",
    "leaf": "a tensor you made yourself (no grad_fn); backward() writes .grad only for leaves",
    "grad_fn": "the graph node that made a computed tensor; backward() starts there (a leaf has none)",
    "retain_grad": "t.retain_grad() asks backward() to keep .grad for a computed (non-leaf) tensor t",
    "requires_grad": "whether autograd records what is computed from a tensor, so backward() can reach it",
    "norm": "a gradient's size: the square root of the sum of its squared elements",
    "scalar": "a tensor holding one number (shape []); backward() starts from one",
    "sparkline": "a number's history in one line, one character a step: the taller, the larger (%plot NAME draws it big)",
    "heat strip": "a tensor's values as shades, one character each: blank is 0, █ the largest size |v|",
    "graph freed": "backward() freed the tensors the graph saved; a second backward() needs retain_graph=True",
}


def gloss(term: str) -> str | None:
    """`term: its gloss`, or None for a word not glossed."""
    words = GLOSSES.get(term.strip())
    return f"{term.strip()}: {words}" if words else None


def terms_text() -> str:
    return "terms %help explains: " + ", ".join(GLOSSES)


# Under a table where a recorded graph shows 0 B: the figure counts the nodes' own saved tensors only.
ZERO_SAVED_NOTE = ("0 B: its nodes hold nothing now (backward freed them, or they never saved any); "
                   "a checkpoint keeps its input outside them, alive until backward, and that is not counted")

TRACE_LEGEND = ("grad_a = the gradient arriving at the node that made a (grad_outputs); receives = what it "
                "passes to each input (grad_inputs)")
