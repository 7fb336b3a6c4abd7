"""The learner's language, as the terminal's locale says it, and picking a lesson's words in it."""

from __future__ import annotations

import os

DEFAULT = "en"  # what the course and every frontend are written in
_UNSET = ("", "C", "POSIX")


def learner_language(environ=None) -> str:
    """The primary tag of the first language the locale names (LANGUAGE, LC_ALL, LC_MESSAGES, LANG, as
    gettext reads them): `hi_IN.UTF-8` -> `hi`; none set (or C/POSIX) -> English."""
    environ = os.environ if environ is None else environ
    for key in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        first = environ.get(key, "").split(":")[0].split(".")[0]
        if first not in _UNSET:
            return primary(first)
    return DEFAULT


def primary(tag: str) -> str:
    """`hi-IN`, `hi_IN`, `HI` -> `hi`: the part two speakers of the language share."""
    return tag.replace("_", "-").split("-")[0].lower()


def in_language(texts: dict[str, str], language: str, fallbacks: tuple[str, ...]) -> str:
    """The text for `language`, else for the first fallback that has one, else the first given."""
    by_primary = {primary(tag): text for tag, text in texts.items()}
    for wanted in (language, *fallbacks):
        if primary(wanted) in by_primary:
            return by_primary[primary(wanted)]
    return next(iter(texts.values()))
