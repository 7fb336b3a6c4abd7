"""What a progress export must look like before anything of it is imported.

Every field is checked for presence, type and range, so a damaged or hostile file
is refused as a whole with the problems named, and the store is never touched.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

MAX_PROBLEMS = 5        # named in the error; the rest are counted
MAX_INT = (1 << 63) - 1  # what SQLite's INTEGER holds
MAX_TEXT = 1 << 20      # characters of one answer or id


def problems(data: Any) -> list[str]:
    """Every way ``data`` is not a well-formed export (the caller checked format and schema)."""
    found: list[str] = []
    for section, check in (("reviews", _review), ("cards", _card), ("lessons", _lesson)):
        items = data.get(section, [])
        if not isinstance(items, list):
            found.append(f"{section} must be a list, not {type(items).__name__}")
            continue
        for index, item in enumerate(items):
            where = f"{section}[{index}]"
            if not isinstance(item, dict):
                found.append(f"{where} must be an object, not {type(item).__name__}")
                continue
            found += [f"{where}: {problem}" for problem in check(item)]
    return found


def describe(found: list[str]) -> str:
    shown = "; ".join(found[:MAX_PROBLEMS])
    more = f" (and {len(found) - MAX_PROBLEMS} more problems)" if len(found) > MAX_PROBLEMS else ""
    return shown + more


def _review(item: dict) -> list[str]:
    return _fields(item, {
        "review_id": _text, "question_id": _text, "lesson_id": _text, "reviewed_at": _moment,
        "rating": _between(1, 4), "correct": _flag, "hinted": _flag, "answer": _any_text,
        "duration_ms": _optional(_between(0, MAX_INT)),
    })


def _card(item: dict) -> list[str]:
    found = _fields(item, {"question_id": _text, "lesson_id": _text, "card": _object})
    if isinstance(item.get("card"), dict):
        found += [f"card.{problem}" for problem in _fields(item["card"], {
            "card_id": _between(0, MAX_INT), "state": _between(1, 3), "step": _optional(_between(0, 1000)),
            "stability": _optional(_number), "difficulty": _optional(_number), "due": _moment,
            "last_review": _optional(_moment),
        })]
    return found


def _lesson(item: dict) -> list[str]:
    found = _fields(item, {"lesson_id": _text, "version": _version, "current_step": _between(0, 100_000),
                           "finished": _steps, "hints": _hints, "updated_at": _moment})
    return found


def _fields(item: dict, checks: dict[str, Callable[[Any], str | None]]) -> list[str]:
    found = []
    for key, check in checks.items():
        if key not in item:
            if not getattr(check, "missing_ok", False):
                found.append(f"{key} is missing")
            continue
        problem = check(item[key])
        if problem:
            found.append(f"{key} {problem}")
    return found


def _text(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "must be a non-empty string"
    return "is too long" if len(value) > MAX_TEXT else None


def _any_text(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string"
    return "is too long" if len(value) > MAX_TEXT else None


def _version(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or len(str(value)) > 100:
        return "must be a short string or a whole number"
    return None


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _number(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1e300 < value < 1e300:
        return "must be a finite number"
    return None


def _object(value: Any) -> str | None:
    return None if isinstance(value, dict) else "must be an object"


def _moment(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > 64:
        return "must be an ISO date and time"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return f"is not an ISO date and time: {value[:40]!r}"
    return None if moment.tzinfo is not None else "needs a time zone"


def _between(low: int, high: int) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"must be a whole number from {low} to {high}"
        return None
    return check


def _optional(check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    def optional(value: Any) -> str | None:
        return None if value is None else check(value)
    optional.missing_ok = True
    return optional


def _steps(value: Any) -> str | None:
    if not isinstance(value, list) or not all(_between(0, 100_000)(step) is None for step in value):
        return "must be a list of step numbers"
    return None


def _hints(value: Any) -> str | None:
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and k.isdigit() and len(k) < 7 and _between(0, 1000)(v) is None
            for k, v in value.items()):
        return "must map step numbers to hint counts"
    return None
