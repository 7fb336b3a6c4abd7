"""Kernel side: live tensors as rows, their autograd graphs, and mistakes explained.

These modules run inside the kernel process (they import torch); the worker
calls them after every step.
"""

from gradrepl.inspector.diagnose import AccumulationWatch, explain, explain_warning
from gradrepl.inspector.graph import graph_of, render_text
from gradrepl.inspector.snapshot import Inspector
from gradrepl.inspector.summary import summarize

__all__ = [
    "AccumulationWatch",
    "Inspector",
    "explain",
    "explain_warning",
    "graph_of",
    "render_text",
    "summarize",
]
