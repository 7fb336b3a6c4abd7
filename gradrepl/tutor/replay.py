"""Rebuilding a namespace by running lesson code again, in order (never by pickling tensors)."""

from __future__ import annotations

from collections.abc import Callable

from gradrepl.kernel.protocol import StepResult
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


async def prepare(question: Question, session, on_step: OnStep | None = None, prelude: str = "") -> list[str]:
    """A fresh kernel holding the namespace the question is asked in (lesson so far + its setup).

    ``on_step`` sees the restart (as a result naming the tensors that went) and each replayed step;
    ``prelude`` is hidden code run first (a key kernel's seed: a task's start must be the same start
    its reference had, random weights included).
    """
    removed = await session.restart()
    if on_step is not None:
        on_step(StepResult(step=session.step, source="", removed=removed))
    sources = [Source(prelude, 1)] if prelude else []
    sources += list(question.context)
    if question.setup:
        sources.append(Source(question.setup, question.line))
    return await run_sources(session, sources, question.path, on_step)
