"""How a question is asked and how what the learner types becomes an answer: one set of rules.

The lesson pane, the quiz TUI, the plain quiz and `play` all use this module for
the six question types' words, the fields and placeholders, the words that ask
for a hint, and how typed text is read:

- a blank answer is not an answer: the learner is asked again (nothing is graded);
- a choice is typed as the number shown beside the option (options are shown in
  the order `Question.option_order` gives) or as the option's text;
- `?` or `hint` asks for a hint; `skip` and `quit` where a frontend offers them.

The values inside an answer (7 vs 7.0, True vs true) are compared by
tutor/answers.py when grading; this module only decides what was answered.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gradrepl.tutor.answers import decimals_of
from gradrepl.tutor.grading import STATE_LABELS
from gradrepl.tutor.lesson import Question

TYPES = ("choice", "predict", "predict_state", "numeric", "derive", "task")

TYPE_WORDS = {
    "choice": "choose one", "predict": "predict the value", "predict_state": "predict the state",
    "numeric": "a number", "derive": "derive", "task": "write the code",
}
# What an answer looks like, said before the learner answers.
ANSWER_WORDS = {
    "choice": "the option's number", "predict": "a value, None, or 'raises SomeError'", "numeric": "a number",
    "derive": "a formula", "predict_state": "each field in turn", "task": "code; it runs in the kernel",
}
PLACEHOLDERS = {
    # Forms, not example values: a placeholder is seen before every answer, and an example value
    # would be some question's key (lint's give-away check reads placeholders).
    "predict": "a number, a list, tensor(...), a shape (rows, cols), None, or raises SomeError",
    "numeric": "a number",
    "derive": "a formula in the variable, with * for products and ** for powers",
    "task": "code · Enter answers when complete · Ctrl+J new line",
}
FIELD_PLACEHOLDERS = {
    "requires_grad": "True / False", "is_leaf": "True / False", "retains_grad": "True / False",
    "grad_fn": "None or a name ending in Backward0", "grad": "None or a value",
    "dtype": "e.g. torch.float32", "shape": "e.g. (2, 3)",
}
FIELD_LABELS = STATE_LABELS

HINT_WORDS = ("?", "hint")
SKIP_WORDS = ("skip",)
QUIT_WORDS = ("quit",)
BLANK_WORDS = "Type an answer first (? asks for a hint)."


@dataclass(frozen=True)
class Typed:
    """What a line typed by the learner means."""

    kind: str         # "answer" | "hint" | "skip" | "quit" | "again"
    value: Any = None  # the answer, in the form grading takes (option index, {field: text}, text)
    words: str = ""    # "again": why the learner is asked again


def command(text: str, offered: tuple[str, ...] = ()) -> str | None:
    """"hint" for a hint word; "skip"/"quit" when the frontend offers them; else None."""
    word = text.strip().lower()
    if word in HINT_WORDS:
        return "hint"
    for name, words in (("skip", SKIP_WORDS), ("quit", QUIT_WORDS)):
        if name in offered and word in words:
            return name
    return None


def read_typed(question: Question, text: str, order: list[int], offered: tuple[str, ...] = ()) -> Typed:
    """One typed answer to a question of any type but predict_state (see read_fields)."""
    asked = command(text, offered)
    if asked:
        return Typed(asked)
    if not text.strip():
        return Typed("again", words=BLANK_WORDS)
    if question.type == "choice":
        return read_choice(question, text, order)
    if question.type == "task":
        return Typed("answer", text.strip("\n"))
    return Typed("answer", text.strip())


def read_choice(question: Question, text: str, order: list[int]) -> Typed:
    """The number shown beside an option (1-based, in the shown ``order``), or the option's text."""
    typed = text.strip().rstrip(".)")
    if typed.isdigit() and 1 <= int(typed) <= len(order):
        return Typed("answer", order[int(typed) - 1])
    wanted = _words(text)
    index = next((i for i, option in enumerate(question.options) if _words(option.text) == wanted), None)
    if index is not None:
        return Typed("answer", index)
    return Typed("again", words=f"Type a number from 1 to {len(order)}.")  # a typo is not a wrong answer


def read_fields(question: Question, values: dict[str, str]) -> Typed:
    """A predict_state answer from one text per field; every field must be given."""
    fields = {name: str(values.get(name, "")).strip() for name in question.fields}
    missing = [FIELD_LABELS[name] for name, value in fields.items() if not value]
    if missing:
        return Typed("again", words=f"Give every field an answer ({', '.join(missing)} left).")
    return Typed("answer", fields)


def answer_text(question: Question, answer: Any) -> str:
    """An answer as the review log keeps it: an option's text, fields as JSON, or the text typed."""
    if isinstance(answer, int) and not isinstance(answer, bool) and 0 <= answer < len(question.options):
        return question.options[answer].text
    if isinstance(answer, dict):
        return json.dumps(answer, sort_keys=True)
    return str(answer)


def field_label(question: Question, name: str) -> str:
    """The label of one predict_state field, e.g. `z.requires_grad`."""
    return f"{question.ask}.{name}" if question.ask else FIELD_LABELS[name]


def how_to_answer(question: Question, commands: str = "") -> str:
    """The line under a question in a plain terminal: what an answer looks like, and the words to type."""
    words = ANSWER_WORDS[question.type]
    if question.type == "derive":
        words = f"a formula in {question.variable or 'x'}"
    return f"(answer with {words}; {commands or 'type ? for a hint'})"


def precision_words(question: Question) -> str | None:
    """How close a numeric answer must be, as the learner is told: "to 1 decimal" where the answer is
    the key rounded (compare: rounded), else "within ±0.1"; None where nothing is said."""
    if question.type != "numeric" or question.tolerance is None:
        return None
    if "rounded" in question.compare:
        places = decimals_of(float(question.tolerance))
        return f"to {places} decimal{'s' if places != 1 else ''}"
    return f"within ±{question.tolerance:g}"


def _words(text: str) -> str:
    return " ".join(text.split()).lower()
