"""Who answers a headless lesson run (`LessonRun.play`): a person at a terminal, or the keys themselves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from gradrepl.tutor import grading
from gradrepl.tutor.grading import Key
from gradrepl.tutor.lesson import Question


@dataclass(frozen=True)
class Response:
    """What an answerer says: an answer, or a request for a hint, the solution, or to stop."""

    kind: str  # "answer" | "hint" | "skip" | "quit"
    value: Any = None


@dataclass
class Turn:
    """A question as put to an answerer; ``key`` is for automatic answerers only (None for a person: in
    a shared kernel, computing it runs the question's code, which would put the answer on the panel)."""

    question: Question
    order: list[int]
    key: Key | None
    attempt: int
    hints_shown: int


class Answerer(Protocol):
    async def respond(self, turn: Turn) -> Response: ...


class KeyAnswerer:
    """Answers every question with its computed key: `play --auto` and lint."""

    async def respond(self, turn: Turn) -> Response:
        return Response("answer", grading.key_answer(turn.question, turn.key))
