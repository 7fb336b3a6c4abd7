"""The task-state reader as imported, and a look at whether learner code rebound any of it (op ``task_state``).

A blind attacker walked frames (a generator's ``gi_frame.f_back``) up to the kernel's requests module and
replaced ``task_state`` in its globals, so the next check read a forged state. The op therefore calls the
``read`` captured here, in a closure made when the zygote imports this module (before any learner code),
never a module global looked up at call time; and before each read it compares, by identity, every
function, class and module the reader's modules hold with what they held at import (and each Python
function's code object, which is assignable): a difference is reported, and the frontend refuses the
attempt and rebuilds the kernel.

What this bounds, not proves: the kernel is the learner's process. Code that can walk frames can also
mutate an object in place (a captured dict's entries, a class's methods) or replace the op itself; the
frontend's static rules (tutor/code_rules.reaches_in) refuse the doors it knows (frames, dunders, sys, gc),
and the verdict is computed in the frontend from plain data whose token the kernel drew at random.
"""

from __future__ import annotations

import types
from collections.abc import Callable

from gradrepl.kernel.inspect import backward_log, captured, reads, task_state, torch_globals, transforms, walk

_MODULES = (task_state, captured, reads, backward_log, torch_globals, transforms, walk)
_FUNCTION = types.FunctionType


def _held(module: types.ModuleType) -> dict[str, object]:
    """The names of ``module`` that the reader calls or reaches through (functions, classes, modules, builtins);
    its counters and per-task state change as it works, so they are not held."""
    held = {}
    for name, value in vars(module).items():
        if name.startswith("__"):  # __builtins__, __loader__: the interpreter's, not the reader's
            continue
        if callable(value) or isinstance(value, types.ModuleType):
            held[name] = value
        elif isinstance(value, dict) and module is captured:  # GET, TENSOR_TYPES: tables of captured getters
            held[name] = (value, dict(value))
    return held


def sealed(holder: types.ModuleType, name: str) -> Callable[[], tuple[Callable, list[str]]]:
    """A function giving (the reader as imported, what was rebound since): ``holder.name`` is the module whose
    ``read`` an op calls, checked too."""
    reader, module = task_state.read, task_state
    held = [(m, _held(m)) for m in _MODULES]
    codes = [(f, f.__code__) for _m, names in held for f in names.values() if type(f) is _FUNCTION]

    def look() -> tuple[Callable, list[str]]:
        changed = [] if vars(holder).get(name) is module and module.read is reader else [f"{holder.__name__}.{name}"]
        for m, names in held:
            now = vars(m)
            for key, value in names.items():
                if type(value) is tuple:
                    table, items = value
                    same = now.get(key) is table and len(table) == len(items) and all(
                        table.get(k) is v for k, v in items.items())
                else:
                    same = now.get(key) is value
                if not same:
                    changed.append(f"{m.__name__}.{key}")
        changed += [f"{f.__module__}.{f.__qualname__}" for f, code in codes if f.__code__ is not code]
        return reader, changed

    return look
