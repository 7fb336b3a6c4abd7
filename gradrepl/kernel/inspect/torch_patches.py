"""torch's functions and classes as they were imported, put back where a cell has patched them.

A kernel's task starts in a fresh process, so ``torch.Tensor.__mul__ = ...`` or ``torch.allclose = ...``
typed before it is gone. A notebook's namespace lives on in the learner's own process (its "restart"
only takes names out), so the patch would act in the task's start and attempt, unseen by the code
rules, which read only the attempt. ``Patches`` notes the attributes of the modules and classes a lesson
uses when it is made, and ``put_back`` sets each one a cell has changed back, and takes away what a
cell added to a class. What was patched before it was made cannot be told from torch's own.
"""

from __future__ import annotations

import torch

MODULES = (torch, torch.nn, torch.nn.functional, torch.nn.init, torch.autograd, torch.autograd.graph,
           torch.func, torch.optim, torch.linalg)
_MISSING = object()


def _classes() -> list[type]:
    """torch.Tensor, Parameter, and every module and optimizer class torch.nn and torch.optim name."""
    found = [torch.Tensor, torch.nn.Parameter, torch.autograd.Function]
    for module, base in ((torch.nn, torch.nn.Module), (torch.optim, torch.optim.Optimizer)):
        found += [value for value in vars(module).values() if isinstance(value, type) and issubclass(value, base)]
    return found


class Patches:
    """What torch's modules and classes held when it was made."""

    def __init__(self) -> None:
        # A module gains attributes as its submodules are imported: only its public ones are put back.
        self.modules = [(m, {k: v for k, v in vars(m).items() if not k.startswith("_")}) for m in MODULES]
        self.classes = [(c, dict(vars(c))) for c in _classes()]

    def put_back(self) -> list[str]:
        """Undo every change since; the names put back (``torch.Tensor.__mul__``), for the record."""
        undone = []
        for owner, held in [*self.modules, *self.classes]:
            now = vars(owner)
            for name, value in held.items():
                if now.get(name, _MISSING) is not value:
                    setattr(owner, name, value)
                    undone.append(f"{owner.__name__}.{name}")
        for owner, held in self.classes:
            for name in [name for name in vars(owner) if name not in held]:
                delattr(owner, name)
                undone.append(f"{owner.__name__}.{name}")
        return undone
