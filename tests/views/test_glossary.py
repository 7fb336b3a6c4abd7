"""Every term a beginner meets in the views has a one-line gloss: `%help TERM`, the trace's legend,
the details' facts; a scalar gradient reads as one, never as a bare number beside shapes (issue 23 §2)."""

from __future__ import annotations

import pytest

from gradrepl.views.trace import trace_text

TERMS = ["grad_outputs", "grad_inputs", "saved", "version", "graph holds", "None", "leaf", "grad_fn",
         "retain_grad", "requires_grad", "norm", "scalar", "sparkline", "heat strip"]


@pytest.mark.parametrize("term", TERMS)
async def test_help_term_glosses_it_in_one_line(session, term):
    result = await session.execute(f"%help {term}")
    assert result.error is None, result.error
    assert len(result.display.splitlines()) == 1, result.display
    assert result.display.startswith(f"{term}: "), result.display


async def test_help_unknown_term_lists_the_terms(session):
    result = await session.execute("%help frobnicate")
    assert "grad_outputs" in result.display and "%help" in result.display


async def test_trace_listing_reads_scalar_gradients_as_scalars_and_explains_its_words(session):
    await session.execute("w = torch.ones(8, 1, requires_grad=True)")
    await session.execute("loss = (w * 2).sum()")
    text = (await session.execute("%trace loss")).display
    assert "grad_loss = 1\n" in text, text  # a scalar gradient reads as its value
    assert "w receives grad(w * 2) * 2 = 8×1 norm" in text, text  # a bigger one as its shape and norm
    assert "grad_outputs" in text and "grad_inputs" in text, text  # the legend says what the words are


def test_none_in_a_trace_is_explained_where_it_appears():
    trace = {"root": "loss", "nodes": [
        {"name": "MulBackward0", "order": 1, "grad_outputs": [{"shape": [], "values": 1.0}],
         "grad_inputs": [{"shape": [2], "norm": 2.0}, None]}]}
    text = trace_text(trace)
    assert "input 2 receives no gradient (it does not require grad)" in text, text


def test_details_gloss_version_and_graph_holds():
    from gradrepl.tui.tensors.details import terms_text
    from gradrepl.views.glossary import GLOSSES
    row = {"name": "w", "value": {"shape": [], "values": 1.0}, "grad": None, "version": 2, "saved_bytes": 12,
           "grad_fn": "MulBackward0"}
    text = terms_text(row).plain
    assert GLOSSES["version"] in text and GLOSSES["graph holds"] in text, text


async def test_a_checkpointed_graphs_0_B_says_what_it_leaves_out(session):
    # A non-reentrant checkpoint saves nothing in its nodes but keeps its input alive until backward.
    await session.execute("from torch.utils.checkpoint import checkpoint\nlin = nn.Linear(4, 4)\n"
                          "inp = torch.randn(8, 4)\nchecked = checkpoint(lin, inp, use_reentrant=False).sum()")
    await session.execute("full = lin(inp).sum()")
    table = (await session.execute("%at -1")).display
    row = next(line for line in table.splitlines() if line.split()[:1] == ["checked"])
    assert " 0 B " in row, table
    assert "a checkpoint keeps its input outside them" in " ".join(table.split()), table
    gloss = (await session.execute("%help graph holds")).display
    assert "weights and inputs included" in gloss and "checkpoint" in gloss, gloss
    # Only a graph that shows 0 B gets the footnote.
    await session.execute("del checked")
    assert "checkpoint" not in (await session.execute("%at -1")).display
