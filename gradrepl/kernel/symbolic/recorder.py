"""The shadows of one kernel's tensors: made and looked up per torch call, kept by weak
reference, with the backward calls logged for %check (shadow.py says why)."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    import sympy

from gradrepl.kernel.symbolic.formula import Backward, Formula, LeafSymbol, Shadow, leaf_origins
from gradrepl.kernel.symbolic.limits import MAX_CONSTANT, MAX_COST, MAX_DEPTH, MAX_ELEMENTS, TOO_LARGE, TOO_LONG, problem
from gradrepl.kernel.symbolic.rules import Untraced, _constants, as_formula, compute, display_name, shape_of


class _WeakTable:
    """id(tensor) -> value, forgetting entries when the tensor dies (ids are recycled)."""

    def __init__(self):
        self._items: dict[int, tuple[weakref.ref, object]] = {}

    def get(self, tensor):
        item = self._items.get(id(tensor))
        if item is not None and item[0]() is tensor:
            return item[1]
        return None

    def set(self, tensor, value) -> None:
        key = id(tensor)
        items = self._items

        def forget(_ref, key=key):
            current = items.get(key)
            if current is not None and current[0] is _ref:
                del items[key]

        items[key] = (weakref.ref(tensor, forget), value)

    def __len__(self) -> int:
        return len(self._items)


class ShadowRecorder:
    """The shadows of live tensors, the symbols of leaves, and the log of backward calls."""

    def __init__(self):
        self.shadows = _WeakTable()                    # tensor -> Shadow
        self.leaves = _WeakTable()                     # leaf tensor -> (version, symbols array)
        self.symbols: dict[sympy.Symbol, LeafSymbol] = {}  # filled as formulas become sympy
        self._prune_at = 1024                           # len(symbols) that triggers forgetting dead leaves
        self.grad_history = _WeakTable()               # leaf -> [Backward, ...] since .grad was last empty
        self.backwards = _WeakTable()                  # root -> its last Backward
        self.cuts = 0                                  # steps whose tracing stopped at MAX_CALLS

    def cut(self) -> None:
        """A step ran past MAX_CALLS: nothing it does from here on is traced or logged."""
        self.cuts += 1

    # -- what a tensor is, as a formula -------------------------------------------
    def shadow_of(self, tensor: torch.Tensor) -> Shadow:
        """The formula of a tensor as autograd sees it now (leaf symbols, constants, or a recorded op)."""
        stored = self.shadows.get(tensor)
        if stored is not None:
            if stored.version != tensor._version:
                return Shadow(None, problem("changed_untraced", shape=shape_of(tensor)))
            return stored
        if not tensor.requires_grad:
            if tensor.numel() > MAX_CONSTANT:
                return Shadow(None, problem("constant_too_large", elements=tensor.numel()))
            return Shadow(_constants(tensor))
        if tensor.grad_fn is None:
            if tensor.numel() > MAX_ELEMENTS:
                return Shadow(None, problem("leaf_too_large", elements=tensor.numel(), limit=MAX_ELEMENTS))
            return Shadow(self.leaf_symbols(tensor))
        if tensor.numel() > MAX_ELEMENTS:
            return Shadow(None, problem("intermediate_too_large", elements=tensor.numel(), limit=MAX_ELEMENTS))
        if self.cuts:  # steps record every small output they make, so this one came after a cut
            return Shadow(None, TOO_LONG)
        return Shadow(None, problem("made_untraced", shape=shape_of(tensor),
                                   by=type(tensor.grad_fn).__name__))

    def leaf_symbols(self, leaf: torch.Tensor) -> np.ndarray:
        """One real symbol per element; a new set once the leaf's values change (w -= lr * w.grad)."""
        known = self.leaves.get(leaf)
        if known is not None and known[0] == leaf._version:
            return known[1]
        values = leaf.detach().to(torch.float64).reshape(-1).tolist()
        ref = weakref.ref(leaf)
        symbols = []
        for flat, value in enumerate(values):
            index = tuple(int(i) for i in np.unravel_index(flat, tuple(leaf.shape))) if leaf.dim() else ()
            symbols.append(Formula("leaf", (LeafSymbol(ref, index, value),)))
        array = np.empty(len(symbols), dtype=object)
        array[:] = symbols
        array = array.reshape(tuple(leaf.shape))
        self.leaves.set(leaf, (leaf._version, array))
        return array

    def symbol_of(self, origin: LeafSymbol) -> sympy.Symbol:
        """The real sympy symbol standing for one leaf element (real=True keeps derivatives simple)."""
        import sympy

        if origin.symbol is None:
            if len(self.symbols) > self._prune_at:
                self.forget_dead_symbols()
                self._prune_at = max(1024, 2 * len(self.symbols))
            origin.symbol = sympy.Dummy("leaf", real=True)
            self.symbols[origin.symbol] = origin
        return origin.symbol

    def forget_dead_symbols(self) -> None:
        """Drop the symbols of leaves that no longer exist (a training loop makes new ones every step)."""
        self.symbols = {s: o for s, o in self.symbols.items() if o.leaf() is not None}

    # -- recording ops --------------------------------------------------------------
    def record(self, func, name: str, args: tuple, kwargs: dict, out, before: Shadow | None) -> None:
        """Give op outputs that require grad a formula, or the reason they have none."""
        if name == "__setitem__":
            out = args[0]
        if isinstance(out, (tuple, list)):
            produced = [o for o in out if isinstance(o, torch.Tensor)]
        else:
            produced = [out] if isinstance(out, torch.Tensor) else []
        traced = [o.requires_grad and o.grad_fn is not None and o.numel() <= MAX_ELEMENTS for o in produced]
        if not any(traced):
            return
        outputs = [o for o, keep in zip(produced, traced) if keep]
        if not torch.is_grad_enabled():
            # An in-place change under no_grad: the graph still describes the old value.
            for o in outputs:
                self.shadows.set(o, Shadow(None, problem("changed_under_no_grad", shape=shape_of(o)), version=o._version))
            return
        try:
            shapes = compute(self, func, name, args, kwargs, before, produced)
        except Untraced as exc:
            shapes = [Shadow(None, exc.problem) for _ in produced]
        except Exception as exc:  # a formula we could not build must never break learner code
            shapes = [Shadow(None, problem("could_not_trace", op=display_name(func, name), error=type(exc).__name__))
                      for _ in produced]
        for o, shadow, keep in zip(produced, shapes, traced):
            if not keep:
                continue
            if shadow.formula is not None and tuple(shadow.formula.shape) != tuple(o.shape):
                shadow = Shadow(None, problem("shapes_untraced", op=display_name(func, name)))
            if shadow.cost > MAX_COST or shadow.depth > MAX_DEPTH:
                shadow = Shadow(None, TOO_LARGE)
            shadow.version = o._version
            self.shadows.set(o, shadow)

    def before_backward(self, root: torch.Tensor, gradient) -> Backward:
        """Log a backward call on every leaf it will reach; a leaf whose .grad is empty starts a new log."""
        shadow = self.shadow_of(root) if root.numel() <= MAX_ELEMENTS else Shadow(None, problem("not_traced", shape=shape_of(root)))
        formula = None
        if shadow.formula is not None:
            terms = shadow.formula if gradient is None else shadow.formula * as_formula(self, gradient, root.shape)
            formula = Formula("sum", tuple(np.asarray(terms, dtype=object).reshape(-1).tolist()))
        entry = Backward(weakref.ref(root), root._version, formula, shadow.problem, self.cuts)
        self.backwards.set(root, entry)
        if formula is not None:
            leaves = {}
            for origin in leaf_origins(formula):
                leaf = origin.leaf()
                if leaf is not None:
                    leaves[id(leaf)] = leaf
            for leaf in leaves.values():
                history = self.grad_history.get(leaf)
                fresh = leaf.grad is None or not bool(leaf.grad.detach().any())
                if fresh or history is None or history[-1].cuts != self.cuts:
                    history = [] if fresh else [Backward(weakref.ref(leaf), -1, None, "an untraced earlier backward")]
                    self.grad_history.set(leaf, history)
                history.append(entry)
        return entry
