"""Why is .grad None? The three answers a learner needs, from a tensor row alone."""

from __future__ import annotations

from typing import Any


def why_grad_is_none(row: dict[str, Any]) -> str | None:
    """Plain words saying why `row`'s .grad is None, or None when it has a .grad."""
    if row.get("grad") is not None:
        return None
    name = row.get("name", "this tensor")
    if not row.get("requires_grad"):
        return (
            f"{name}.requires_grad is False, so autograd does not track it and backward() "
            f"never writes its .grad. Create it with requires_grad=True or call "
            f"{name}.requires_grad_()."
        )
    if not row.get("is_leaf") and not row.get("retains_grad"):
        made_by = row.get("grad_fn") or "an operation"
        return (
            f"{name} is not a leaf: it was computed (by {made_by}) from other tensors. "
            f"Autograd keeps .grad only for leaves; call {name}.retain_grad() before "
            f"backward() to keep this one."
        )
    return (
        f"backward() has not yet run through {name}: call .backward() on a result "
        f"computed from {name}, and its .grad fills in."
    )
