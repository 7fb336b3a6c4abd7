"""The base of GradReplApp's parts (kernel_workers.py, step_replies.py, panel_views.py, leaving_app.py)."""

from __future__ import annotations

from textual.css.query import NoMatches
from textual.message_pump import MessagePump


class AppPart(MessagePump):
    """One job of GradReplApp, mixed in before App; its state is set in GradReplApp.__init__.

    A MessagePump, not a plain class: Textual's metaclass files a class's @on handlers under that
    class alone, and dispatch looks for them class by class along the app's MRO, so the @on handlers
    of a plain mixin would never run (its on_* methods would). No two parts define the same on_*:
    Textual calls every class's handler of a message, not only the first found.
    """


def found(node, selector):
    """The one widget `selector` names under `node`, or None (query_one, which raises NoMatches): a step's
    and the footer's look-ups ask it, not a query() of the screen, which walks every widget (~0.1 ms each)."""
    try:
        return node.query_one(selector)
    except NoMatches:
        return None
