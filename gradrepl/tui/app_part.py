"""The base of GradReplApp's parts (kernel_workers.py, step_replies.py, panel_views.py, leaving_app.py)."""

from __future__ import annotations

from textual.message_pump import MessagePump


class AppPart(MessagePump):
    """One job of GradReplApp, mixed in before App; its state is set in GradReplApp.__init__.

    A MessagePump, not a plain class: Textual's metaclass files a class's @on handlers under that
    class alone, and dispatch looks for them class by class along the app's MRO, so the @on handlers
    of a plain mixin would never run (its on_* methods would). No two parts define the same on_*:
    Textual calls every class's handler of a message, not only the first found.
    """
