"""Kernel side: live tensors as rows, their autograd graphs, and mistakes explained.

These modules run inside the kernel process (they import torch); the worker
calls them after every step.
"""

from gradrepl.kernel.inspect.diagnose import AccumulationWatch, explain, explain_warning
from gradrepl.kernel.inspect.graph import graph_of
from gradrepl.kernel.inspect.snapshot import Inspector
from gradrepl.kernel.inspect.summary import summarize

__all__ = [
    "AccumulationWatch",
    "Inspector",
    "explain",
    "explain_warning",
    "graph_of",
    "summarize",
]
