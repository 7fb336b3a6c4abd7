"""One lesson question in the pane: prompt, the inputs its type needs, hint/skip/answer, feedback.

It only renders and collects: answers leave as a `QuestionCard.Action` message,
grades come back through `show_grade`; the lesson engine decides everything.
Lesson words (prompt, hints, the verdict's feedback) are Markdown, rendered as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.widgets import Button, Input, Label, Markdown, RadioButton, RadioSet, Static

from gradrepl.tui.markdown_text import fenced
from gradrepl.tutor.asking import (
    FIELD_LABELS,
    FIELD_PLACEHOLDERS,
    PLACEHOLDERS,
    TYPE_WORDS,
    Typed,
    command,
    field_label,
    read_fields,
    read_typed,
)
from gradrepl.tutor.grading import Grade
from gradrepl.tutor.lesson import Question

class OptionButton(RadioButton):
    """An option whose words wrap over as many lines as they need (a RadioButton keeps one line, cut with "…")."""

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return max(1, self.render().get_height(self.styles, width))


class QuestionCard(Vertical):
    """A question as the learner sees it; `order` is the shuffled option order."""

    # The verdict's mark sits beside its words, which wrap under themselves; the
    # Markdown widget's own bottom margin is the only gap under hints and verdict.
    DEFAULT_CSS = """
    QuestionCard .question-verdict { height: auto; }
    QuestionCard #verdict-mark { width: 2; }
    QuestionCard #verdict-words { width: 1fr; }
    QuestionCard #verdict-words > MarkdownParagraph:last-child, QuestionCard #hints > MarkdownParagraph:last-child {
        margin: 0;
    }
    QuestionCard RadioSet > RadioButton { height: auto; text-wrap: wrap; text-overflow: fold; }
    """

    @dataclass
    class Action(Message):
        """The learner pressed Answer/Check (with `answer`), Hint or Skip."""

        card: QuestionCard
        kind: str  # "answer" | "check" | "hint" | "skip"
        answer: Any = None

    def __init__(self, question: Question, order: list[int], *, skippable: bool, done: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(classes="question", **kwargs)
        self.question = question
        self.order = order
        self.skippable = skippable
        self.done = done
        self._feedback = Text()
        self._verdict = ""  # the shown verdict, mark and Markdown source; "" when none is shown

    def compose(self) -> ComposeResult:
        question = self.question
        yield Static(Text(f"? {TYPE_WORDS[question.type]}", style="bold"), classes="question-kind")
        yield Markdown(question.prompt, classes="question-prompt")
        if question.code:
            yield Markdown(fenced(question.code), classes="question-code")
        if question.type == "choice":
            # Content, not markup: option text such as `x[0]` must read as written.
            yield RadioSet(*(OptionButton(Content(question.options[i].text), id=f"option-{i}") for i in self.order),
                           classes="question-options")
        elif question.type == "predict_state":
            for name in question.fields:
                with Horizontal(classes="state-field"):
                    yield Label(field_label(question, name), classes="state-label")
                    yield Input(placeholder=FIELD_PLACEHOLDERS[name], id=f"field-{name}", classes="answer-input",
                                compact=True)
        elif question.type == "task" and question.starter:
            yield Markdown(fenced(question.starter), classes="question-code")
            yield Static(Text("This code is in the console's input: fix it there and run it, then press Check. "
                              "You are graded on the state it leaves; a Check that fails puts the namespace "
                              "back to where the exercise started.", style="italic"), classes="task-help")
        elif question.type == "task":
            yield Static(Text("Type code in the console until the check holds, then press Check. "
                              "You are graded on the state, not on the text; a Check that fails puts "
                              "the namespace back to where the task started.", style="italic"),
                         classes="task-help")
        else:
            yield Input(placeholder=PLACEHOLDERS[question.type], id="answer", classes="answer-input")
            if question.type == "numeric" and question.tolerance is not None:
                yield Static(Text(f"within ±{question.tolerance:g}", style="dim"))
        with Horizontal(classes="question-buttons"):
            yield Button("Check" if question.type == "task" else "Answer", id="answer-button", variant="primary",
                         compact=True)
            yield Button("Hint", id="hint-button", compact=True, disabled=not question.hints)
            if self.skippable:
                yield Button("Skip", id="skip-button", compact=True)
        yield Markdown(id="hints", classes="question-hints")
        with Horizontal(id="verdict", classes="question-verdict"):
            yield Static(id="verdict-mark")
            yield Markdown(id="verdict-words")
        yield Static(id="feedback", classes="question-feedback")

    def on_mount(self) -> None:
        self.query_one("#verdict").display = False
        if self.done:
            self.finish(Text("✓ done earlier", style="green"))

    # -- what the learner does ------------------------------------------------
    @on(Button.Pressed, "#answer-button")
    def _answer_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self._send_answer()

    @on(Input.Submitted, ".answer-input")
    def _input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if command(event.value) == "hint":
            event.input.clear()
            self.post_message(self.Action(self, "hint"))
            return
        inputs = list(self.query(".answer-input").results(Input))
        index = inputs.index(event.input)
        if index + 1 < len(inputs):
            inputs[index + 1].focus()  # predict_state: Enter moves to the next field
        else:
            self._send_answer()

    @on(RadioSet.Changed)
    def _option_chosen(self, event: RadioSet.Changed) -> None:
        event.stop()
        self._send_answer()  # Enter (or a click) on an option selects it and answers with it

    @on(Button.Pressed, "#hint-button")
    def _hint_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Action(self, "hint"))

    @on(Button.Pressed, "#skip-button")
    def _skip_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Action(self, "skip"))

    def _send_answer(self) -> None:
        if self.done:
            return
        typed = self.answer()
        if typed.kind != "answer":
            self.show_feedback(Text(typed.words, style="yellow"))
            return
        self.post_message(self.Action(self, "check" if self.question.type == "task" else "answer", typed.value))

    def answer(self) -> Typed:
        """What the learner gave, read by tutor/asking.py's rules (a blank is asked again)."""
        question = self.question
        if question.type == "choice":
            pressed = self.query_one(RadioSet).pressed_button
            if pressed is None or not pressed.id:
                return Typed("again", words="Pick an option first.")
            return Typed("answer", int(pressed.id.removeprefix("option-")))
        if question.type == "predict_state":
            return read_fields(question, {name: self.query_one(f"#field-{name}", Input).value
                                          for name in question.fields})
        if question.type == "task":
            return Typed("answer", "")  # graded on the console's namespace, not on text
        return read_typed(question, self.query_one("#answer", Input).value, self.order)

    def focus_answer(self) -> None:
        """Put the cursor where the answer goes."""
        targets = list(self.query(".answer-input")) or list(self.query(RadioSet))
        if targets:
            targets[0].focus()

    # -- what the engine says ---------------------------------------------------
    def show_hints(self, hints: list[str]) -> None:
        shown = self.query_one("#hints", Markdown)
        shown.update("\n\n".join(f"**hint {n}:** {hint}" for n, hint in enumerate(hints, 1)))
        shown.display = bool(hints)
        self.query_one("#hint-button", Button).disabled = len(hints) >= len(self.question.hints)

    def show_grade(self, grade: Grade) -> None:
        """Right or wrong: a mark and the engine's words (Markdown); for predict_state a mark per field."""
        mark = "✓" if grade.correct else "✗"
        self.query_one("#verdict-mark", Static).update(
            Text(mark, style="bold green" if grade.correct else "bold red"))
        laid_out = self.query_one("#verdict-words", Markdown).update(grade.feedback)
        self.query_one("#verdict").display = True
        self.call_later(self._verdict_in_view, laid_out)
        self._verdict = f"{mark} {grade.feedback}"
        text = Text()
        if grade.fields:
            text.append("  ".join(f"{'✓' if ok else '✗'} {FIELD_LABELS[name]}" for name, ok in grade.fields.items()),
                        style="dim")
        self._set_feedback(text)

    async def _verdict_in_view(self, laid_out: AwaitComplete) -> None:
        """The learner may be typing in the console: bring the verdict into the lesson's view."""
        await laid_out
        self.call_after_refresh(self.query_one("#verdict").scroll_visible, animate=False)

    @property
    def feedback_text(self) -> str:
        """The feedback in plain text: the verdict (its words as written) and the lines under it."""
        return "\n".join(part for part in (self._verdict, self._feedback.plain) if part)

    def show_feedback(self, text: Text) -> None:
        """A line of the pane's own (waiting, a refusal): it replaces the verdict."""
        self.query_one("#verdict").display = False
        self._verdict = ""
        self._set_feedback(text)

    def _set_feedback(self, text: Text) -> None:
        self._feedback = text
        shown = self.query_one("#feedback", Static)
        shown.update(text)
        shown.display = bool(text.plain) or not self._verdict  # under a verdict, an empty line is no news

    def show_waiting(self, words: str) -> None:
        self.show_feedback(Text(f"… {words}", style="dim italic"))

    def finish(self, summary: Text) -> None:
        """The question is answered or skipped: freeze it and say what the answer was."""
        self.done = True
        self.add_class("-done")
        for widget in self.query(".answer-input, RadioSet, Button"):
            widget.disabled = True
        text = Text()
        if self._feedback.plain.strip() and not self._feedback.plain.startswith("…"):
            text.append_text(self._feedback).append("\n")
        text.append_text(summary)
        self._set_feedback(text)  # the verdict, if one is shown, stays above the answer


def answer_summary(question: Question, expected: str, skipped: bool) -> Text:
    """The line shown under a finished question."""
    text = Text()
    if skipped:
        text.append("skipped · ", style="yellow")
    if question.type == "task":
        text.append("solution:\n", style="bold")
        text.append(expected.rstrip(), style="green")
    else:
        text.append("answer: ", style="bold").append(expected, style="green")
    return text

