"""One quiz question on screen: the prompt, where the answer goes, its hints, then the verdict.

The view only renders and collects: an answer leaves as `QuestionView.Submitted`
in the form `QuizRun.answer` takes, a hint request as `QuestionView.HintAsked`;
the app grades and calls `show_result`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Label, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from gradrepl.history import History
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.markdown_text import code_span, escape_markdown, fenced
from gradrepl.tui.messages import CompletionRequested, InputSubmitted
from gradrepl.tutor.grading import STATE_LABELS
from gradrepl.tutor.lesson import Question
from gradrepl.tutor.quiz import QuizResult, QuizSummary, due_in_words

# Typed as a whole answer, these ask for a hint (as in the plain flow).
HINT_WORDS = ("?", "hint")
KIND_WORDS = {
    "choice": "choose one", "predict": "predict the value", "predict_state": "predict the state",
    "task": "write the code", "derive": "derive", "numeric": "a number",
}
PLACEHOLDERS = {
    "predict": "7, tensor([1., 2.]), None, (2, 3), raises RuntimeError",
    "numeric": "a number",
    "derive": "a formula, e.g. 2*x + 3",
    "task": "code · Enter answers when complete · Ctrl+J new line",
}
FIELD_PLACEHOLDERS = {
    "requires_grad": "True / False", "is_leaf": "True / False", "retains_grad": "True / False",
    "grad_fn": "None or e.g. MulBackward0", "grad": "None or a value",
    "dtype": "e.g. torch.float32", "shape": "e.g. (2, 3)",
}


def key_markdown(result: QuizResult) -> str:
    """The right answer as Markdown: an option in bold words, a value or a solution as code."""
    if result.question.type == "choice":
        return f"**{escape_markdown(result.expected)}**"
    if result.question.type == "task":  # a solution on one line: its statements joined by "; "
        return code_span("; ".join(line.strip() for line in result.expected.splitlines() if line.strip()))
    return code_span(result.expected)


def verdict_text(result: QuizResult) -> Text:
    """The one-line verdict: ✓ right, ✓ right after a hint, or ✗ wrong."""
    if not result.correct:
        return Text("✗ wrong", style="bold red")
    return Text(f"✓ {result.word}", style="bold yellow" if result.hinted else "bold green")


def result_markdown(result: QuizResult, now: datetime) -> str:
    """What the learner reads after answering: the feedback, the key when wrong, the next review."""
    parts = [result.feedback.strip()] if result.feedback.strip() else []
    if not result.correct:
        if result.question.type == "task":
            parts.append("A solution:\n\n" + fenced(result.expected))
        else:
            parts.append(f"The answer: {key_markdown(result)}")
    elif result.hinted:
        parts.append("Right after a hint: it comes back a little sooner.")
    parts.append(f"Next review {due_in_words(result.due, now)}.")
    return "\n\n".join(parts)


def summary_markdown(summary: QuizSummary, total: int) -> str:
    """The end of a quiz: score, what to review, when the next reviews are due."""
    hinted = f" ({summary.hinted} after a hint)" if summary.hinted else ""
    lines = [f"## Score: {summary.score} right{hinted}", ""]
    if summary.asked < total:
        lines += [f"Stopped after {summary.asked} of {total}; your answers so far are saved.", ""]
    if summary.to_review:
        lines += ["**To review**", ""]
        for result in summary.to_review:
            prompt = result.question.prompt.splitlines()[0]
            answer = key_markdown(result)
            lines.append(f"- {prompt} → {answer}  \n  *{result.question.uid} · {result.word}*")
        lines.append("")
    elif summary.asked:
        lines += ["Nothing to review: every answer was right without a hint.", ""]
    if summary.next_due is not None:
        lines.append(f"Next review due {due_in_words(summary.next_due, summary.now)}.")
    return "\n".join(lines)


class AnswerInput(Input):
    """An Input whose Enter shows in the footer as Answer."""

    BINDINGS = [Binding("enter", "submit", "Answer")]


class AnswerOptions(OptionList):
    """The options of a choice question; Enter on one (or its number) answers with it."""

    BINDINGS = [Binding("enter", "select", "Answer")]

    def on_key(self, event: events.Key) -> None:
        if event.character and event.character.isdigit() and 1 <= int(event.character) <= self.option_count:
            event.stop()
            self.highlighted = int(event.character) - 1
            self.action_select()


class QuestionView(Vertical):
    """A quiz question as the learner sees it; `order` is the shown order of choice options."""

    @dataclass
    class Submitted(Message):
        """The learner gave an answer (option index, {field: text} or text)."""

        answer: Any

    class HintAsked(Message):
        """The learner typed ? (or hint) as the answer."""

    def __init__(self, question: Question, order: list[int], lesson_title: str = "", **kwargs: Any) -> None:
        super().__init__(classes="quiz-question", **kwargs)
        self.question = question
        self.order = order
        self.lesson_title = lesson_title
        self.hints: list[str] = []
        self.frozen = False

    def compose(self) -> ComposeResult:
        question = self.question
        kind = Text(f"? {KIND_WORDS[question.type]}", style="bold")
        if self.lesson_title:
            kind.append(f"  ·  {self.lesson_title}", style="dim")
        yield Static(kind, id="quiz-kind")
        yield Markdown(question.prompt, id="quiz-prompt")
        code = question.quiz_code
        if code:
            yield Markdown(fenced(code), id="quiz-code")
        if question.type == "choice":
            # Content, not markup: option text such as `x[0]` must read as written.
            yield AnswerOptions(*(Option(Content(f"{n}) {question.options[i].text}"), id=f"option-{i}")
                                  for n, i in enumerate(self.order, 1)), id="quiz-options")
        elif question.type == "predict_state":
            yield Static(Text(f"Each field of {question.ask}:", style="dim"))
            for name in question.fields:
                with Horizontal(classes="quiz-field"):
                    yield Label(STATE_LABELS[name], classes="quiz-field-label")
                    yield AnswerInput(placeholder=FIELD_PLACEHOLDERS[name], id=f"field-{name}", classes="quiz-answer")
        elif question.type == "task":
            code_input = CodeInput(History(None), id="quiz-task", classes="quiz-answer")
            code_input.placeholder = PLACEHOLDERS["task"]
            yield code_input
            yield Static(Text("Graded on the state your code leaves, not on its text.", style="dim italic"))
        else:
            yield AnswerInput(placeholder=PLACEHOLDERS[question.type], id="quiz-input", classes="quiz-answer")
            if question.type == "numeric" and question.tolerance is not None:
                yield Static(Text(f"within ±{question.tolerance:g}", style="dim"))
        yield Static(id="quiz-hints")
        yield Static(id="quiz-verdict")
        yield Markdown(id="quiz-feedback")

    def focus_answer(self) -> None:
        """Put the cursor where the answer goes."""
        targets = list(self.query(".quiz-answer")) or list(self.query(OptionList))
        if targets:
            targets[0].focus()

    # -- what the learner does ---------------------------------------------------
    @on(OptionList.OptionSelected, "#quiz-options")
    def _option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if not self.frozen and event.option.id:
            self.post_message(self.Submitted(int(event.option.id.removeprefix("option-"))))

    @on(Input.Submitted, ".quiz-answer")
    def _input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.frozen:
            return
        if event.value.strip().lower() in HINT_WORDS:
            event.input.clear()
            self.post_message(self.HintAsked())
            return
        inputs = list(self.query(".quiz-answer").results(Input))
        index = inputs.index(event.input)
        if index + 1 < len(inputs):
            inputs[index + 1].focus()  # predict_state: Enter moves to the next field
        else:
            self.submit()

    @on(InputSubmitted)
    def _code_submitted(self, event: InputSubmitted) -> None:
        event.stop()
        if self.frozen:
            return
        if event.source.strip().lower() in HINT_WORDS:
            self.post_message(self.HintAsked())
        elif event.source.strip():
            # CodeInput empties itself on Enter; the code stays on screen beside its verdict.
            self.query_one(CodeInput).text = event.source
            self.post_message(self.Submitted(event.source))

    @on(CompletionRequested)
    def _no_completion(self, event: CompletionRequested) -> None:
        # The grading kernel holds another question's namespace: completing from it would mislead.
        event.stop()

    def submit(self) -> None:
        """Send the answer as given so far (the app's Enter binding when no input has focus)."""
        if self.frozen:
            return
        answer = self.answer()
        if answer is None:
            self.say(Text("Pick an option, or type an answer first (? asks for a hint).", style="yellow"))
            empty = [field for field in self.query(".quiz-answer").results(Input) if not field.value.strip()]
            if empty:
                empty[0].focus()
            else:
                self.focus_answer()
            return
        self.post_message(self.Submitted(answer))

    def answer(self) -> Any:
        """What the learner gave, in the form QuizRun.answer takes; None if nothing yet."""
        question = self.question
        if question.type == "choice":
            options = self.query_one(OptionList)
            highlighted = options.highlighted
            return None if highlighted is None else self.order[highlighted]
        if question.type == "predict_state":
            fields = {name: self.query_one(f"#field-{name}", Input).value.strip() for name in question.fields}
            return fields if all(fields.values()) else None
        if question.type == "task":
            return self.query_one(CodeInput).text.strip() or None
        return self.query_one("#quiz-input", Input).value.strip() or None

    # -- what the app says -------------------------------------------------------
    def add_hint(self, hint: str | None) -> None:
        """Show the next hint, or say there are no more."""
        if hint is not None:
            self.hints.append(hint)
        text = Text()
        for n, shown in enumerate(self.hints, 1):
            text.append(f"hint {n}: ", style="bold cyan").append(shown + "\n", style="cyan")
        if hint is None:
            text.append("No more hints for this one." if self.hints else "This question has no hints.", style="dim")
        text.rstrip()
        hints = self.query_one("#quiz-hints", Static)
        hints.update(text)
        hints.display = bool(text)
        self.focus_answer()

    def say(self, text: Text) -> None:
        """A line under the answer: a nudge, "grading…", or a failure in words."""
        verdict = self.query_one("#quiz-verdict", Static)
        verdict.update(text)
        verdict.display = bool(text)

    def freeze(self, frozen: bool = True) -> None:
        """Freeze the answer widgets while grading (and for good once graded)."""
        self.frozen = frozen
        for widget in self.query(".quiz-answer"):
            widget.disabled = frozen
        if not frozen:
            self.focus_answer()

    def show_result(self, result: QuizResult, now: datetime) -> None:
        """The verdict, the feedback (the misconception a wrong choice shows), the key, the next review."""
        self.freeze()
        if self.question.type == "choice":
            self._mark_options(result)
        self.add_class("-right" if result.correct else "-wrong")
        self.say(verdict_text(result))
        self.query_one("#quiz-feedback", Markdown).update(result_markdown(result, now))

    def _mark_options(self, result: QuizResult) -> None:
        """✓ on the right option, ✗ on the one picked when it was wrong."""
        options = self.query_one(OptionList)
        for shown, index in enumerate(self.order):
            text = f"{shown + 1}) {self.question.options[index].text}"
            if self.question.options[index].text == result.expected:
                options.replace_option_prompt_at_index(shown, Content.assemble(("✓ ", "bold green"), text))
            elif self.question.options[index].text == result.answer and not result.correct:
                options.replace_option_prompt_at_index(shown, Content.assemble(("✗ ", "bold red"), text))
