"""Running statistics that batch norm writes behind their version counter.

torch's batch-norm kernel updates ``running_mean`` and ``running_var`` in place without bumping
their ``_version``, so the inspector's cheap checks never saw training change them: the panel kept
showing 0 and 1. Every batch norm module (BatchNorm1d/2d/3d, their lazy and learner subclasses) and
a learner's own ``F.batch_norm(x, mean, var, training=True)`` go through
``torch.nn.functional.batch_norm``; wrapped once, it marks the statistics it is given in training
(writes.MARKED: their rows are read again after the step). An id in a set, no budget needed: a
loop of 10,000 forwards marks them once and costs a set insertion per call.
(InstanceNorm's statistics bump their counter, as optimizer state and spectral norm's vectors do.)
"""

from __future__ import annotations

import functools

import torch.nn.functional as F

from gradrepl.kernel.inspect import writes

_installed = False


def install() -> None:
    """Wrap F.batch_norm (once per process; later calls do nothing)."""
    global _installed
    if _installed:
        return
    _installed = True
    native = F.batch_norm

    @functools.wraps(native)
    def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                   eps=1e-5):
        if training:
            for stats in (running_mean, running_var):
                if stats is not None:
                    writes.MARKED.add(id(stats))
        return native(input, running_mean, running_var, weight, bias, training, momentum, eps)

    F.batch_norm = batch_norm
