"""The one guard between the kernel's replies and the TUI's views.

A view that cannot render what it was given must say so in the console and
leave the app, the kernel and the learner's variables alone: an exception in
a Textual handler or action would end the app. Every view method that takes
kernel data (a step's result, a trace, a row, a graph, a past table) is marked
`@shows_reply("the trace view")`; the failure is logged with its traceback,
`on_failure` undoes what half a render would leave on screen (closes the
view), and a `ViewFailed` message puts it into words in the console.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from textual.message import Message

log = logging.getLogger("gradrepl.tui")

Method = TypeVar("Method", bound=Callable[..., Any])


@dataclass
class ViewFailed(Message):
    """A view could not render a reply; `reason` is the exception in a line."""

    view: str
    reason: str


def failure_words(view: str, reason: str) -> str:
    """What the console says: which view, why, and that nothing was lost."""
    return (f"{view[:1].upper()}{view[1:]} could not show this ({reason}; logged). "
            "Your variables and the kernel are untouched: carry on.")


def shows_reply(view: str, on_failure: str | None = None, default: Any = None) -> Callable[[Method], Method]:
    """Mark a (synchronous) method of a widget or the app that renders kernel data: it never raises
    into Textual, and returns `default` when it failed.

    `on_failure`: the name of a method of the same object to call then (close the half-drawn view).
    """

    def decorate(method: Method) -> Method:
        if inspect.iscoroutinefunction(method):
            raise TypeError(f"{method.__qualname__}: shows_reply guards synchronous renders only")

        @functools.wraps(method)
        def guarded(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                log.exception("%s failed to render", view)
                self.post_message(ViewFailed(view, f"{type(exc).__name__}: {exc}"))
                if on_failure is not None:
                    try:
                        getattr(self, on_failure)()
                    except Exception:
                        log.exception("%s could not be closed after failing", view)
                return default

        return guarded  # type: ignore[return-value]

    return decorate
