"""Rebuilding a namespace by running lesson code again, in order (never by pickling tensors).

One rebuild for every caller: a lesson resumed, a question's key, a task's start after an
attempt, the quiz's keys. Each restarts the kernel, runs the key kernel's hidden prelude (lint
reseeds torch with it, so random weights match between the reference and the learner's start),
then the lesson's code.
"""

from __future__ import annotations

from collections.abc import Callable

from gradrepl.protocol.messages import StepResult
from gradrepl.tutor.lesson import Question, Source

OnStep = Callable[[StepResult], object]


async def run_sources(session, sources: list[Source], path: str = "",
                      on_step: OnStep | None = None) -> list[str]:
    """Execute lesson code in order; returns problems for code that should not have failed.

    ``on_step`` sees each step's result (a frontend's panel follows the replay with it).
    """
    problems = []
    for source in sources:
        result = await session.execute(source.code)
        if on_step is not None:
            on_step(result)
        if result.error and not source.may_fail:
            problems.append(f"{path}:{source.line}: {result.error.type}: {result.error.message}")
    return problems


async def rebuild(session, sources: list[Source], path: str, prelude: str = "",
                  on_step: OnStep | None = None) -> list[str]:
    """A fresh kernel holding what `sources` make; returns problems for code that should not have failed.

    ``prelude`` is hidden code run first; ``on_step`` sees the restart (as a result naming the
    tensors that went) and every replayed step.
    """
    removed = await session.restart()
    if on_step is not None and removed:
        on_step(StepResult(step=session.step, source="", removed=removed))
    if prelude:
        sources = [Source(prelude, 1), *sources]
    return await run_sources(session, sources, path, on_step)


def asked_after(question: Question) -> list[Source]:
    """The code a question is asked after: the lesson so far, then its own setup."""
    sources = list(question.context)
    if question.setup:
        sources.append(Source(question.setup, question.line))
    return sources


async def prepare(question: Question, session, on_step: OnStep | None = None, prelude: str = "") -> list[str]:
    """A fresh kernel holding the namespace the question is asked in (lesson so far + its setup)."""
    return await rebuild(session, asked_after(question), question.path, prelude, on_step)
