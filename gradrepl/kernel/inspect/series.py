"""A sequence of numbers as data for a plot (`%plot losses`): a list of floats the learner kept, or
the elements of a tensor, squeezed to at most MAX_POINTS bucket means.

Names are looked up, never evaluated (the caller resolves them). Non-finite values become None
(JSON has no NaN). Under torch.no_grad(): reading never grows the learner's graph.
"""

from __future__ import annotations

import math

import torch

MAX_POINTS = 512          # protocol/reply_schema.py MAX_SERIES: points sent, each a bucket's mean
MAX_ITEMS = 1_000_000     # elements of a list read at most (a longer one: its first ones, said so)


def _not(code: str, **names) -> dict:
    """Why a value is no sequence of numbers, as a code and names (views/remarks.REQUEST_ERRORS)."""
    return {"code": code, "names": names}


def series_of(value) -> dict:
    """{"length", "values", "every"} (every: how many elements each point averages), or {"code", "names"}
    saying why `value` is no sequence of numbers."""
    try:
        with torch.no_grad():
            numbers = _numbers(value)
    except Exception as exc:  # a learner's sequence may raise anything while read
        return _not("series_unreadable", error=type(exc).__name__)
    if isinstance(numbers, dict):
        return numbers
    length = len(numbers)
    every = max(1, math.ceil(length / MAX_POINTS))
    points = []
    for start in range(0, length, every):
        part = [v for v in numbers[start:start + every] if v is not None and math.isfinite(v)]
        points.append(sum(part) / len(part) if part else None)
    return {"length": length, "values": points, "every": every}


def _numbers(value) -> list[float | None] | dict:
    if isinstance(value, torch.Tensor):
        return _tensor_numbers(value)
    if isinstance(value, (list, tuple)):
        if not value:
            return _not("series_empty")
        out = []
        for item in value[:MAX_ITEMS]:
            number = _one(item)
            if isinstance(number, dict):
                return number
            out.append(number)
        return out
    return _not("not_a_series", type=type(value).__name__)


def _one(item) -> float | None | dict:
    """One element of a list: a number, or a one-element tensor (loss kept without .item())."""
    if isinstance(item, bool):
        return float(item)
    if isinstance(item, (int, float)):
        return float(item)
    if isinstance(item, torch.Tensor) and item.layout == torch.strided and item.numel() == 1 \
            and not item.is_complex() and item.device.type != "meta":
        return float(item.detach().reshape(()).item())
    return _not("series_item", type=type(item).__name__)


def _tensor_numbers(tensor: torch.Tensor) -> list[float | None] | dict:
    if tensor.layout != torch.strided or tensor.device.type == "meta" or tensor.is_complex() \
            or tensor.is_nested:
        return _not("series_tensor_kind")
    if tensor.numel() == 0:
        return _not("series_empty_tensor")
    if tensor.numel() > MAX_ITEMS:
        return _not("series_too_many", count=tensor.numel(), limit=MAX_ITEMS)
    return [float(v) for v in tensor.detach().reshape(-1).to("cpu", torch.float64).tolist()]
