"""A dead kernel's crash stack (faulthandler's, on its stderr) as the learner should read it."""

from __future__ import annotations

import os

import gradrepl

GRADREPL_DIR = os.path.dirname(os.path.abspath(gradrepl.__file__)) + os.sep


def without_own_frames(stack: str) -> str:
    """The stack without gradrepl's frames (the worker's, the recorder's): the learner's and torch's stay."""
    own = f'File "{GRADREPL_DIR}'
    return "".join(line for line in stack.splitlines(True) if not line.lstrip().startswith(own))
