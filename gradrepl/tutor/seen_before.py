"""What a learner has read when a question is asked, piece by piece, each named by where it was.

The lesson's title and every heading above the question stay in view whatever
came between (play prints the title first; a heading titles what is under it).
Back to the previous question: that question's prompt, the feedback of its wrong answers (a
learner who answered it wrong read it), its revealed answer and
explanation and what its code printed when the answer was shown; then every prose step and
every cell's output as play prints it (stdout, a magic's text, the result, the
error, the notes shown with it); then the question's own prompt, the answer box's placeholder and the line
play prints under it. Cell
*source* is left out: code the learner must think through is no give-away.
Nothing here runs code; lint hands in the outputs of its run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from gradrepl.protocol.messages import StepResult
from gradrepl.tutor.asking import FIELD_PLACEHOLDERS, PLACEHOLDERS, how_to_answer
from gradrepl.tutor.lesson import Lesson
from gradrepl.views.steps import step_text


@dataclass(frozen=True)
class Seen:
    """One piece of text the learner has seen; ``where`` names it for lint's message."""

    where: str
    text: str
    code: bool = False  # printed by the kernel or a placeholder: every word counts, not only code spans
    titles: bool = False  # the heading of the question's own section (the title, in the first section)


def printed(result: StepResult | None) -> str:
    """A step's output as play prints it (commands/play.py TextView._result, the views' step_text without
    the tensor table): stdout, stderr, the result, a magic's text, the error with its why-line, and the
    notes (warnings) shown with the step."""
    if result is None:
        return ""
    return step_text(result, tables=False)


def headings(lesson: Lesson, before: int) -> list[Seen]:
    """The Markdown headings of the prose steps before step ``before`` (outside fences), with their lines."""
    found = []
    for step in lesson.steps[:before]:
        if step.kind != "prose":
            continue
        fenced = False
        for offset, line in enumerate(step.text.splitlines()):
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            elif not fenced and re.match(r"#{1,6}\s", line):
                found.append(Seen(f"the heading at line {step.line + offset}", line.lstrip("#").strip()))
    return found


def seen_before(lesson: Lesson, index: int, outputs: dict[int, StepResult], keys: dict) -> list[Seen]:
    """Everything seen before the question at step ``index`` is answered (see the module doc).

    ``outputs`` maps a cell's step index to its result; ``keys`` maps a question's uid to
    its Key (whose ``steps`` are what its code printed when the answer was revealed).
    """
    question = lesson.steps[index].question
    start = index
    while start > 0 and lesson.steps[start - 1].kind != "question":
        start -= 1
    above = headings(lesson, start)
    section = headings(lesson, index)  # the question's own section is titled by the last of these
    seen: list[Seen] = [Seen("the lesson's title", lesson.title, titles=len(section) <= 1), *above]
    if section:
        seen = [piece for piece in seen if piece != section[-1]] + [replace(section[-1], titles=True)]
    if start > 0:
        previous = lesson.steps[start - 1].question
        seen.append(Seen(f"the prompt of question {previous.id!r}", previous.prompt))
        if previous.explanation:
            seen.append(Seen(f"the explanation revealed after question {previous.id!r}", previous.explanation))
        # A learner who answered it wrong first read the feedback of that wrong answer.
        for wrong in [*(option.feedback for option in previous.options), *(m.feedback for m in previous.misconceptions)]:
            if wrong:
                seen.append(Seen(f"the feedback of a wrong answer to question {previous.id!r}", wrong))
        key = keys.get(previous.uid)
        # A task's revealed answer is its solution's source, left out as a cell's source is.
        if key and key.text and previous.type != "task":
            seen.append(Seen(f"the answer revealed after question {previous.id!r}", key.text,
                             code=previous.type != "choice"))
        shown = "\n".join(printed(step) for step in (key.steps if key else []))
        if shown.strip():
            seen.append(Seen(f"the output revealed after question {previous.id!r}", shown, code=True))
    for step_index in range(start, index):
        step = lesson.steps[step_index]
        if step.kind == "prose":
            seen.append(Seen(f"the prose at line {step.line}", step.text))
        elif step.kind == "code":
            output = printed(outputs.get(step_index))
            if output:
                seen.append(Seen(f"the output of the cell at line {step.line}", output, code=True))
    if question is not None:
        seen.append(Seen("the prompt", question.prompt))
        placeholders = ([FIELD_PLACEHOLDERS[name] for name in question.fields] if question.type == "predict_state"
                        else [PLACEHOLDERS.get(question.type, "")])
        seen.extend(Seen("the answer box's placeholder", text, code=True) for text in placeholders if text)
        seen.append(Seen("the answer line play prints", how_to_answer(question), code=True))
    return seen
