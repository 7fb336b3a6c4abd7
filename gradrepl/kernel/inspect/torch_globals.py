"""torch's process-wide switches, read and put back around a task's attempt (task_state.py calls this).

An attempt may flip a switch that outlives it: ``torch.set_default_dtype(torch.float64)`` makes every
later ``torch.tensor([1., 2.])`` a float64, ``torch.manual_seed(0)`` changes every later random draw,
``set_grad_enabled(False)`` stops recording, anomaly mode slows every backward. A task's start keeps
what they were; each later read reports them (so the frontend can refuse an attempt whose result rests
on one) and then puts them back, whether the attempt is accepted or not. No task's solution draws random
numbers, so the generator's state at the start is also the one the solution leaves.

The functions are torch._C's own, captured at import (in the zygote, before any learner code), so a
learner who rebinds ``torch.set_default_dtype`` changes nothing here.
"""

from __future__ import annotations

import torch

_C = torch._C
_GET_DTYPE, _SET_DTYPE = _C.get_default_dtype, _C._set_default_dtype
_GRAD_ON, _SET_GRAD = _C.is_grad_enabled, _C._set_grad_enabled
_ANOMALY, _ANOMALY_NAN, _SET_ANOMALY = _C.is_anomaly_enabled, _C.is_anomaly_check_nan_enabled, _C.set_anomaly_enabled
_DETERMINISTIC, _DETERMINISTIC_WARN = _C._get_deterministic_algorithms, _C._get_deterministic_algorithms_warn_only
_SET_DETERMINISTIC = _C._set_deterministic_algorithms
_GENERATOR = _C.default_generator
_GET_RNG, _SET_RNG = type(_GENERATOR).get_state, type(_GENERATOR).set_state
_str = str


class Switches:
    """What the switches were when it was made; ``put_back`` sets them so again."""

    def __init__(self) -> None:
        self.dtype = _GET_DTYPE()
        self.grad = bool(_GRAD_ON())
        self.anomaly = (bool(_ANOMALY()), bool(_ANOMALY_NAN()))
        self.deterministic = (bool(_DETERMINISTIC()), bool(_DETERMINISTIC_WARN()))
        self.rng = _GET_RNG(_GENERATOR)

    def put_back(self) -> None:
        _SET_DTYPE(self.dtype)
        _SET_GRAD(self.grad)
        _SET_ANOMALY(*self.anomaly)
        _SET_DETERMINISTIC(self.deterministic[0], warn_only=self.deterministic[1])
        _SET_RNG(_GENERATOR, self.rng)


def described() -> dict:
    """The switches a task's verdict may rest on, as data: the default dtype, anomaly mode."""
    return {"default_dtype": _str(_GET_DTYPE()), "anomaly": bool(_ANOMALY())}
