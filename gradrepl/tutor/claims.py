"""A lesson's claims (```python claim blocks), run by `gradrepl lint`: a sentence the prose says must hold.

A claim runs in the lesson's canonical namespace at its place, inside a function
of its own, so the names it makes go when it returns and the lesson's namespace
is what it would be without it. A claim that raises (a failed ``assert``) fails
the lesson with the claim's line and the error. play and learn never see claims.
"""

from __future__ import annotations

import textwrap

from gradrepl.tutor.lesson import Lesson, replay_sources
from gradrepl.tutor.replay import rebuild, run_sources

_WRAPPER = "def _gradrepl_claim():\n{body}\ntry:\n    _gradrepl_claim()\nfinally:\n    del _gradrepl_claim\n"


def wrapped(code: str) -> str:
    """The claim as the body of a function called once, then deleted."""
    return _WRAPPER.format(body=textwrap.indent(code.rstrip("\n") or "pass", "    "))


async def claim_problems(lesson: Lesson, session, prelude: str = "") -> list[str]:
    """Run every claim in one pass through the lesson; one problem per claim that raises."""
    if not lesson.claims:
        return []
    problems: list[str] = []
    done = 0  # replay_sources(lesson, done) has run: the front matter setup, before any step
    problems.extend(await rebuild(session, replay_sources(lesson, done), lesson.path, prelude))
    for claim in sorted(lesson.claims, key=lambda c: c.line):
        before = replay_sources(lesson, claim.before)
        already = len(replay_sources(lesson, done))
        problems.extend(await run_sources(session, before[already:], lesson.path))
        done = claim.before
        result = await session.execute(wrapped(claim.code))
        if result.error:
            problems.append(f"{lesson.path}:{claim.line}: the claim does not hold: {result.error.type}: "
                            f"{result.error.message}".rstrip(": "))
    return problems

