"""What a graph keeps alive: the bytes of the tensors its nodes saved for backward.

Each autograd node keeps what its backward formula needs (``x`` for ``x ** 2``,
both factors for ``a * b``) as SavedTensor slots, ``_raw_saved_*`` on built-in
nodes and ``_raw_saved_tensors`` on ``autograd.Function`` nodes. A slot's
``.data`` is the tensor it holds, read without unpacking (unpacking would run
saved-tensor hooks, and a non-reentrant checkpoint would recompute its forward),
or None once backward freed it. A slot packed by a hook holds whatever the hook
returned: a tensor (``save_on_cpu``) counts, a checkpoint's placeholder does not.

Several slots often share one storage (``x`` saved by three ops, or a view of
it), so bytes are counted per distinct storage.
"""

from __future__ import annotations

import torch

MAX_NODES = 100_000  # a walk stops here; the figure then counts the nodes nearest the root

_slot_names_by_type: dict[type, tuple[str, ...]] = {}


def saved_bytes(t: torch.Tensor) -> int:
    """Bytes of the distinct storages saved by the nodes reachable from ``t.grad_fn`` (0 with none)."""
    grad_fn = t.grad_fn
    if grad_fn is None:
        return 0
    storages: dict[tuple, int] = {}
    for node in reachable(grad_fn):
        storages.update(_storages(node))
    return sum(storages.values())


def node_saved_bytes(node) -> int:
    """Bytes of the distinct storages one node holds."""
    return sum(_storages(node).values())


def reachable(grad_fn, limit: int = MAX_NODES) -> list:
    """The nodes reachable from ``grad_fn`` (itself first), each once, breadth first."""
    nodes = [grad_fn]
    seen = {grad_fn}
    index = 0
    while index < len(nodes) and len(nodes) < limit:
        for child, _ in nodes[index].next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                nodes.append(child)
        index += 1
    return nodes[:limit]


def _storages(node) -> dict[tuple, int]:
    """(device, data pointer) -> bytes for each storage this node's saved slots hold."""
    found: dict[tuple, int] = {}
    for name in _slot_names(type(node)):
        try:
            slots = getattr(node, name)
        except RuntimeError:  # a custom Function's slots after backward freed them
            continue
        for slot in slots if isinstance(slots, (list, tuple)) else (slots,):
            data = getattr(slot, "data", None)
            if isinstance(data, torch.Tensor) and data.layout == torch.strided and not data.is_meta:
                storage = data.untyped_storage()
                found[(str(storage.device), storage.data_ptr())] = storage.nbytes()
    return found


def _slot_names(kind: type) -> tuple[str, ...]:
    names = _slot_names_by_type.get(kind)
    if names is None:
        names = _slot_names_by_type[kind] = tuple(a for a in dir(kind) if a.startswith("_raw_saved_"))
    return names
