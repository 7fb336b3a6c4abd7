"""Why a tensor's .grad is None now, from what the session saw happen to it (its timeline) and its
graph: the cause and the learner's names for views/why.py to word (details, %help's neighbours)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gradrepl.views import why as why_words

if TYPE_CHECKING:
    from gradrepl.session.session import Session

RESULTS_ASKED = 4  # scalar results whose graphs are read to find one computed from the tensor


def graph_leaves(graph: dict | None) -> list[str]:
    """The named leaves of a graph reply's nodes, in the order drawn."""
    nodes = ((graph or {}).get("graph") or {}).get("nodes") or []
    return [node["leaf"] for node in nodes if node.get("leaf")]


async def why_grad_is_none(session: Session, name: str, graph: dict | None = None) -> str | None:
    """The why-line for `name`'s None .grad (None when it has one, or is not a live tensor)."""
    row = session.tensors.get(name)
    if row is None or row.get("grad") is not None:
        return None
    story = session.timeline.grad_story(name)
    cause = why_words.grad_none_cause(row, story)
    leaf = result = None
    if cause == why_words.NOT_LEAF:
        if graph is None:
            reply = await session.graph(name)
            graph = reply.data if reply.ok else None
        leaf = next(iter(graph_leaves(graph)), None)
    elif cause == why_words.NO_BACKWARD_YET:
        result = await _result_computed_from(session, name)
    return why_words.why_grad_is_none(row, name, story, leaf=leaf, result=result)


async def _result_computed_from(session: Session, name: str) -> str | None:
    """A scalar with a graph that has `name` among its leaves: the learner's own loss, newest first."""
    scalars = [row["name"] for row in session.tensors.values()
               if row.get("grad_fn") and row.get("shape") == [] and row["name"] != name]
    for candidate in reversed(scalars[-RESULTS_ASKED:]):
        reply = await session.graph(candidate)
        if reply.ok and name in graph_leaves(reply.data):
            return candidate
    return None
