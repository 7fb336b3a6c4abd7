"""Cheap, JSON-safe summaries of tensors of any size.

A small tensor (at most ``SMALL`` elements) is shown in full; a big one by its
min, max, mean and norm. Everything runs under ``torch.no_grad()`` (a reduction
under grad mode would grow the learner's graph) and never copies a big tensor:
floating point tensors are reduced in place, integer and bool tensors are cast
to float64 one bounded piece at a time.

Non-finite floats become the strings ``"nan"``, ``"inf"`` and ``"-inf"``
(JSON has no NaN); complex numbers become strings such as ``"(1+2j)"``.
Tensors whose data cannot be read cheaply (meta, sparse and other non-strided
layouts) are summarised by their shape only.
"""

from __future__ import annotations

import math

import torch

SMALL = 64          # tensors with at most this many elements show every value
PIECE = 1 << 18     # elements converted at a time for piecewise stats (2 MiB as float64)


def summarize(t: torch.Tensor) -> dict:
    """Shape plus values (small) or min/max/mean/norm (big); never a full copy.

    A tensor whose values cannot be read (meta, sparse, quantized, a dtype
    without the needed reductions, a subclass that refuses) gets its shape only.
    """
    try:
        shape = list(t.shape)
    except RuntimeError:  # nested tensors have no single shape
        return {"shape": None}
    if t.is_meta or t.layout != torch.strided or t.is_quantized:
        return {"shape": shape}
    try:
        return _summarize_values(t, shape)
    except (RuntimeError, TypeError, ValueError):
        return {"shape": shape}


def _summarize_values(t: torch.Tensor, shape: list[int]) -> dict:
    with torch.no_grad():
        t = t.detach()
        if t.numel() <= SMALL:
            return {"shape": shape, "values": json_safe(t.tolist()), "norm": _norm(t)}
        if t.is_complex():
            return {"shape": shape, "mean": json_safe(t.mean().item()), "norm": _norm(t)}
        if t.is_floating_point() and t.is_contiguous():
            return {
                "shape": shape,
                "min": json_safe(t.min().item()),
                "max": json_safe(t.max().item()),
                "mean": json_safe(t.mean().item()),
                "norm": _norm(t),
            }
        return {"shape": shape, **_piecewise_stats(t)}


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
    """min/max/mean/norm of an integer, bool or non-contiguous tensor with bounded extra memory.

    Reductions over those would first make a converted or contiguous copy of
    the whole tensor; one piece at a time, the copy is at most PIECE elements.
    """
    if t.numel() == 0:
        return {"norm": 0.0}
    low = high = None
    total = squares = 0.0
    for piece in _pieces(t):
        piece = piece.to(torch.float64)  # at most PIECE elements: a bounded copy
        low = piece.min().item() if low is None else min(low, piece.min().item())
        high = piece.max().item() if high is None else max(high, piece.max().item())
        total += piece.sum().item()
        squares += piece.square().sum().item()
    exact = bool if t.dtype == torch.bool else (float if t.is_floating_point() else int)
    return {
        "min": json_safe(exact(low)),
        "max": json_safe(exact(high)),
        "mean": json_safe(total / t.numel()),
        "norm": json_safe(math.sqrt(squares)),
    }


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
