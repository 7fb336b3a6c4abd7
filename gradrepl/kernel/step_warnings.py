"""Learner code's warnings as a step's notes, shown as Python's filters decide.

No filter of our own: Python's (by default once per place, per its module's __warningregistry__) and
those the learner sets (warnings.simplefilter in a step stays set, as in a script) pick what is shown;
only what would be printed is taken, through warnings.showwarning, the hook Python calls for it.
A loop that warns 2,000 times is one note, and a warning already shown by an earlier step is not
shown again, as `python FILE` shows it once for the whole script.
"""

from __future__ import annotations

import contextlib
import warnings

_caught: list | None = None  # the running step's warnings; None between steps
_printed = warnings.showwarning  # outside a step (the panel's reads): to stderr, as before
_installed = False


def _show(message, category, filename, lineno, file=None, line=None) -> None:
    if _caught is None or file is not None:  # an explicit file is the caller's own choice
        _printed(message, category, filename, lineno, file, line)
        return
    _caught.append(warnings.WarningMessage(message, category, filename, lineno, file, line))


@contextlib.contextmanager
def during_step():
    """The warnings Python shows while the step runs, as WarningMessages."""
    global _caught, _installed
    if not _installed:  # once: a hook the learner puts there later is theirs, as in a script
        warnings.showwarning, _installed = _show, True
    _caught = caught = []
    try:
        yield caught
    finally:
        _caught = None
