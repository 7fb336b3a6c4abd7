"""Rules a lesson's questions must keep to be worth asking, checked by `gradrepl lint`.

Static: every question has at least two hints. With keys (after a run): the
prose or the output just above a question must not state its answer. Nothing
here runs code; the kernel's work (keys, cell outputs) is handed in.
"""

from __future__ import annotations

import math
import re

from gradrepl.tutor.answers import DEFAULT_TOLERANCE, Value, read_answer, show
from gradrepl.tutor.lesson import Lesson, Question

MIN_HINTS = 2
MIN_SOLUTION_LINE = 8  # shorter solution lines (`y = 1`) say too little to give a task away
MIN_OPTION_TEXT = 12   # an option's text shorter than this matches prose by chance


def hint_problems(lesson: Lesson) -> list[str]:
    """Questions with fewer than two hints: hints are progressive, so one is a give-away or nothing."""
    return [f"{q.path}:{q.line}: question {q.id!r}: {len(q.hints)} hint(s); give at least {MIN_HINTS}, "
            "each a step further, the last giving the idea but not the solution"
            for q in lesson.questions if len(q.hints) < MIN_HINTS]


def text_above(lesson: Lesson, index: int, outputs: dict[int, str]) -> str:
    """The nearest prose and the nearest cell's output above step ``index``, back to the previous question."""
    prose = output = None
    for step_index in range(index - 1, -1, -1):
        step = lesson.steps[step_index]
        if step.kind == "question":
            break
        if step.kind == "prose" and prose is None:
            prose = step.text
        if step.kind == "code" and output is None:
            output = outputs.get(step_index, "")
    return "\n".join(part for part in (prose, output) if part)


def giveaway_problems(lesson: Lesson, keys: dict, outputs: dict[int, str]) -> list[str]:
    """Questions whose answer is stated, literally, in the prose or output just above them.

    ``keys`` maps a question's uid to its computed Key; ``outputs`` maps a cell's
    step index to what it printed and returned.
    """
    problems = []
    for index, step in enumerate(lesson.steps):
        question = step.question
        if question is None or question.uid not in keys:
            continue
        above = text_above(lesson, index, outputs)
        key = keys[question.uid]
        said = next((s for s in answer_spellings(question, key) if states(above, s)), None) or \
            number_stated(above, key.value, question.tolerance)
        if said is not None:
            problems.append(f"{question.path}:{question.line}: question {question.id!r}: the text just above "
                            f"gives the answer away ({said!r}); explain after the question instead")
    return problems


def answer_spellings(question: Question, key) -> list[str]:
    """The literal texts that would give the answer away."""
    if question.type == "task":
        lines = [line.strip() for line in question.solution.splitlines() if len(line.strip()) >= MIN_SOLUTION_LINE]
        return ["\n".join(lines)] if lines else []
    if question.type == "choice" and not question.ask:
        right = question.options[key.correct_options[0]].text if key.correct_options else ""
        return [right] if len(right) >= MIN_OPTION_TEXT else []
    value = key.value
    if question.type == "choice" and key.correct_options:
        value = read_answer(question.options[key.correct_options[0]].answer or "")
    return _value_spellings(value, key.text)


def states(text: str, spelling: str) -> bool:
    """Does ``text`` contain ``spelling`` as a whole token (every line of it, for code)?"""
    if not text or not spelling:
        return False
    return all(_has_token(text, line) for line in spelling.splitlines())


def number_stated(text: str, value: Value | None, tolerance: float | None) -> str | None:
    """A number in ``text`` equal to a scalar key within the question's tolerance (``w = 3.029`` for 3.0291)."""
    if value is None or value.kind != "numbers" or len(value.numbers) != 1 or value.shape:
        return None
    for found in re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])", text):
        close = math.isclose(float(found), value.numbers[0], rel_tol=DEFAULT_TOLERANCE if tolerance is None else 0.0,
                             abs_tol=DEFAULT_TOLERANCE if tolerance is None else tolerance)
        if close:
            return found
    return None


def _value_spellings(value: Value | None, key_text: str) -> list[str]:
    if value is None or value.kind in ("none", "bool", "text"):
        return []  # True, False and None are in every paragraph
    if value.kind == "error":
        return [value.name] if value.name else []
    if value.kind == "name":
        return [value.name, value.name.removeprefix("torch.")]
    if not value.numbers:
        return []
    return [show(value), key_text]


def _has_token(text: str, needle: str) -> bool:
    pattern = r"(?<![\w.])" + re.escape(needle.strip()) + r"(?![\w]|\.\d)"
    return re.search(pattern, text) is not None
