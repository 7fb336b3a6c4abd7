"""What a Session's requests give back: one typed shape for every reply that can fail."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

Data = TypeVar("Data")


@dataclass
class RequestResult(Generic[Data]):
    """The kernel's answer (``data``), or why there is none, in words.

    graph: data has "text" and "graph"; check / check_expr: the check's fields
    ("text", "agree", leaves...); equivalent: data has "equivalent".
    """

    data: Data = field(default_factory=dict)  # a shape of protocol/shapes.py (GraphReply, TraceReply, Check ...)
    error: str | None = None
    column: int | None = None  # where an expression could not be read (1-based)
    lost: bool = False         # no kernel answered: it died, and a fresh one was started
    reason: str | None = None  # lost: why the kernel died, without the REPL's words for its restart (error)
    exhausted: str | None = None  # "memory" or "time": the kernel ran out of it answering (input too large)
    code: str | None = None       # the kernel's code for `error`, where it sent one (views/remarks.py words it)

    @property
    def ok(self) -> bool:
        return self.error is None


def request_result_from(raw: dict[str, Any], inner: str | None = None) -> RequestResult:
    """A raw reply as a RequestResult; ``inner`` names the field holding the payload (e.g. "check")."""
    if "lost" in raw:
        return RequestResult(error=str(raw["lost"]), lost=True, reason=raw.get("reason"))
    data = raw.get(inner) or {} if inner else raw
    error = data.get("error") or (raw.get("error") if inner else None)
    exhausted, code = raw.get("exhausted"), raw.get("error_code")
    if isinstance(error, dict):
        return RequestResult(data, str(error.get("message", error)), error.get("column"), exhausted=exhausted, code=code)
    return RequestResult(data, str(error) if error else None, exhausted=exhausted, code=code)
