"""Leaving a session, or losing its namespace, as IPython users expect (both frontends ask here).

`exit`, `exit()`, `quit` and `quit()` typed alone leave at once, as in IPython; the kernel
never sees them (it refuses sys.exit(), which would end a script, not the tutor).
Ctrl-D, Ctrl-Q, `%reset`, `%restart` and the TUI's kill ask first when the namespace
holds something, and the question names what would be lost: `names_to_lose` reads the
namespace's names through the kernel's `inspect` op (no op of its own).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gradrepl.terminal_text import visible

if TYPE_CHECKING:
    from gradrepl.session.session import Session

EXIT_LINES = frozenset({"exit", "exit()", "quit", "quit()"})
PRESET = ("torch", "nn", "F", "help", "Out")  # what a fresh namespace holds (kernel/requests.py fresh_namespace)
# Evaluated in the namespace: its own names, in the order they were made; "_"-names are the REPL's.
NAMES_EXPR = ("' '.join(name for name in globals() if isinstance(name, str) and name.isidentifier() "
              f"and not name.startswith('_') and name not in {PRESET!r})")
ASK_SECONDS = 5.0  # a namespace the learner broke (a `globals` of their own that hangs): ask without the names
SHOWN = 8  # names listed in a question; the rest are counted


@dataclass(frozen=True)
class Asked:
    """One question before losing the namespace: what is about to happen, its consequence, the yes button."""

    action: str
    loses: str
    yes: str


QUIT = Asked("Leave gradrepl?", "The kernel goes, and with it every name you defined", "Quit")
KILL = Asked("Kill the kernel and start a fresh one?", "Every name you defined is lost", "Kill kernel")
LOSES = {
    "%restart": Asked("Restart the kernel?", "Every name you defined is lost", "Restart"),
    "%reset": Asked("Empty the namespace?", "Every name you defined is deleted", "Reset"),
}
FORCE = "-f"  # `%reset -f`, as in IPython: no question


def is_exit(source: str) -> bool:
    """Whether the line means "leave" (IPython's exit/quit, with or without the call)."""
    return source.strip() in EXIT_LINES


def loses_namespace(source: str) -> str | None:
    """The magic ("%reset", "%restart") when `source` would empty the namespace and was not forced."""
    name, _, arg = source.strip().partition(" ")
    return name if name in LOSES and FORCE not in arg.split() else None


async def names_to_lose(session: "Session") -> list[str] | None:
    """The learner's names in the namespace, oldest first; None while a step runs (the kernel answers
    only after it), or when the namespace could not be read: then only the live tensors are known."""
    if session.state != "idle":
        return None
    # Shielded: a caller that gives up must still let the reply be read (the client breaks otherwise).
    request = asyncio.ensure_future(session.inspect(NAMES_EXPR))
    try:
        value = await asyncio.wait_for(asyncio.shield(request), ASK_SECONDS)
    except Exception:  # timed out, or no kernel could answer (a fresh one that failed to start)
        return None
    if value.get("kind") != "str":
        return None
    return [name for name in str(value.get("value", "")).split() if name.isidentifier()]


def listed(names: list[str]) -> str:
    """`model, opt, losses and 3 more`, made visible (a name came from the kernel)."""
    shown = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
    return visible(shown)


def question(asked: Asked, names: list[str] | None, tensors: list[str] = ()) -> str:
    """The question's text; `names` None (they could not be read now): the live `tensors` are named."""
    if names:
        lost = f"{asked.loses}: {listed(names)}."
    elif tensors:
        lost = f"{asked.loses}, among them {listed(list(tensors))}."
    else:
        lost = f"{asked.loses}."
    return f"{asked.action}\n{lost} Your input history is kept."


def restarted(how: str) -> str:
    """The one line said once a restart (`how`: "%restart", "F8") replaced the kernel, as IPython's
    "kernel restarted"."""
    return (f"Kernel restarted ({how}): a fresh kernel with torch, nn and F; every name you defined is gone. "
            "Steps count from In [1] again.")


def worth_asking(names: list[str] | None) -> bool:
    """Ask unless the namespace is known to hold nothing of the learner's."""
    return names is None or bool(names)
