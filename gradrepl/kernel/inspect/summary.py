"""Cheap, JSON-safe summaries of tensors of any size.

A small tensor (at most ``SMALL`` elements) is shown in full; a big one by its
min, max, mean and norm. Everything runs under ``torch.no_grad()`` (a reduction
under grad mode would grow the learner's graph) and never copies a big tensor:
floating point tensors are reduced where they lie (a transposed or permuted
one through a contiguous view of the same memory, since order does not matter
to min/max), while integer, bool and irregularly strided tensors are reduced
one bounded piece at a time.

Non-finite floats become the strings ``"nan"``, ``"inf"`` and ``"-inf"``
(JSON has no NaN); complex numbers become strings such as ``"(1+2j)"``.
Tensors whose data cannot be read cheaply (meta, sparse, nested and other
non-strided layouts) are summarised by their shape only. An expanded view
(``torch.zeros(1).expand(10**9)``) is reduced over the elements it really
holds, never over its repeats, and a view whose elements overlap in memory too
much to read in a blink (``as_strided`` tricks) gets its shape only.
"""

from __future__ import annotations

import math

import torch

SMALL = 64          # tensors with at most this many elements show every value
PIECE = 1 << 18     # elements converted at a time for piecewise stats (2 MiB as float64)
MAX_OVERLAP = 4     # a view reading each stored element more than this often (after repeats) is not reduced


def summarize(t: torch.Tensor) -> dict:
    """Shape plus values (small) or min/max/mean/norm (big); never a full copy.

    A tensor whose values cannot be read (meta, sparse, quantized, a dtype
    without the needed reductions, a subclass that refuses) gets its shape only.
    """
    shape = dims(t)
    if shape is None or t.is_nested or t.is_meta or t.layout != torch.strided or t.is_quantized:
        return {"shape": shape}
    try:
        return _summarize_values(t, shape)
    except (RuntimeError, TypeError, ValueError):
        return {"shape": shape}


def dims(t: torch.Tensor) -> list | None:
    """The shape as JSON: ints, a ragged dimension as "*" (or torch's own name, e.g. "j1"); None if unknown."""
    try:
        return [d if type(d) is int else str(d) for d in t.shape]
    except RuntimeError:  # a nested tensor of the strided layout has no single shape
        pass
    try:
        sizes = t._nested_tensor_size().tolist()
    except (AttributeError, RuntimeError):
        return None
    if not sizes:
        return [0]
    return [len(sizes)] + [column[0] if len(set(column)) == 1 else "*" for column in zip(*sizes)]


def _summarize_values(t: torch.Tensor, shape: list[int]) -> dict:
    with torch.no_grad():
        t = t.detach()
        if t.numel() <= SMALL:
            return {"shape": shape, "values": json_safe(t.tolist()), "norm": _norm(t)}
        t, repeats = _without_repeats(t)
        if t.numel() > MAX_OVERLAP * max(PIECE, t.untyped_storage().nbytes() // t.element_size()):
            return {"shape": shape}
        scale = math.sqrt(repeats)  # each element counts `repeats` times in the norm
        if t.is_complex():
            return {"shape": shape, "mean": json_safe(t.mean().item()), "norm": _scaled(_norm(t), scale)}
        t = _memory_order(t)
        if t.is_floating_point() and t.is_contiguous():
            return {
                "shape": shape,
                "min": json_safe(t.min().item()),
                "max": json_safe(t.max().item()),
                "mean": json_safe(t.mean().item()),
                "norm": _scaled(_norm(t), scale),
            }
        stats = _piecewise_stats(t)
        return {"shape": shape, **stats, "norm": _scaled(stats["norm"], scale)}


def _without_repeats(t: torch.Tensor) -> tuple[torch.Tensor, int]:
    """A view without the dimensions an expand() repeats (stride 0), and how often each element repeats.

    min, max and mean are the same over that view; the norm grows by the square root of the repeats.
    """
    strides = t.stride()
    if 0 not in strides:
        return t, 1
    repeats = 1
    index = []
    for size, stride in zip(t.shape, strides):
        if stride == 0 and size > 1:
            repeats *= size
            index.append(slice(0, 1))
        else:
            index.append(slice(None))
    return t[tuple(index)], repeats


def _scaled(norm, scale: float):
    return norm * scale if isinstance(norm, float) and scale != 1 else norm


def json_safe(value):
    """A tolist() result with non-finite floats and complex numbers as strings."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, complex):
        return str(value)
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value


def _norm(t: torch.Tensor):
    """Euclidean norm of a small tensor."""
    if t.is_floating_point() or t.is_complex():
        return json_safe(torch.linalg.vector_norm(t).item())
    return _piecewise_stats(t)["norm"]


def _piecewise_stats(t: torch.Tensor) -> dict:
    """min/max/mean/norm of an integer, bool or irregularly strided tensor with bounded extra memory.

    Converting the whole tensor (or reducing a strided one, which torch does
    on a contiguous copy) would double memory; one piece at a time, the extra
    memory is at most PIECE float64 elements.
    """
    if t.numel() == 0:
        return {"norm": 0.0}
    low = high = None
    total = squares = 0.0
    for piece in _pieces(t):
        piece_low, piece_high = torch.aminmax(piece.to(torch.uint8) if piece.dtype == torch.bool else piece)
        low = piece_low.item() if low is None else min(low, piece_low.item())
        high = piece_high.item() if high is None else max(high, piece_high.item())
        as_float = piece.to(torch.float64)  # a bounded copy
        total += as_float.sum().item()
        squares += torch.linalg.vector_norm(as_float).item() ** 2
    exact = bool if t.dtype == torch.bool else (float if t.is_floating_point() else int)
    return {
        "min": json_safe(exact(low)),
        "max": json_safe(exact(high)),
        "mean": json_safe(total / t.numel()),
        "norm": json_safe(math.sqrt(squares)),
    }


def _memory_order(t: torch.Tensor) -> torch.Tensor:
    """The same elements as a contiguous view when ``t`` is a permutation of one (e.g. x.t()), else ``t``."""
    if t.is_contiguous() or t.dim() < 2:
        return t
    view = t.permute(sorted(range(t.dim()), key=t.stride, reverse=True))
    return view if view.is_contiguous() else t


def _pieces(t: torch.Tensor):
    """Views of ``t`` holding at most PIECE elements each (no copies)."""
    if t.numel() <= PIECE or t.dim() == 0:
        yield t
        return
    per_row = t.numel() // t.shape[0]
    if per_row > PIECE:
        for row in t.unbind(0):
            yield from _pieces(row)
        return
    yield from t.split(max(1, PIECE // per_row), dim=0)
