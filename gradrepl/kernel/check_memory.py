"""A check that runs out of memory, told apart: the memory limit too small for the checker itself, or the
expression too large under it (`gradrepl check` words each; both kernels answer check_expr through here).
Not in symbolic/: the notebook imports that, and runs no sandbox."""

from __future__ import annotations

import gc
from typing import Callable

from gradrepl.kernel import sandbox
from gradrepl.kernel.symbolic import checks

_LOADED: set[bool] = set()  # whether a check without (False) or at (True) a point has run in this kernel


def within_memory(work: Callable[[], dict], at_point: bool) -> dict:
    """`work`'s reply fields, or which part ran out of memory (views/remarks.REQUEST_ERRORS words the codes):
    the checker is loaded first by checking the smallest formula (sympy; torch's crosscheck too at a point),
    so a memory limit too small for the checker is never said to be an expression too large for it."""
    if _ran_out(lambda: _load(at_point)):
        return _out_of_memory("checker_memory")
    answer: dict = {}
    if _ran_out(lambda: answer.update(work())):
        return _out_of_memory("expression_memory")
    return answer


def _load(at_point: bool) -> None:
    if at_point not in _LOADED:
        checks.check_expression("x**2", {"x": 1.0}) if at_point else checks.derivatives("x**2")
        _LOADED.add(at_point)


def _ran_out(step: Callable[[], object]) -> bool:
    """Whether `step` ran out of memory (any other error raises on), told once what it held is freed."""
    try:
        step()
    except Exception as exc:
        if not sandbox.out_of_memory(exc):
            raise
    else:
        return False
    gc.collect()
    return True


def _out_of_memory(code: str) -> dict:
    return {"ok": False, "exhausted": "memory", "error": {"code": code, "names": {}}}
