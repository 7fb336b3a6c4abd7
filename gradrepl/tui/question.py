"""One question on screen, in a lesson and in the quiz: prompt, where the answer goes, hint/skip, verdict.

It only renders and collects. What the learner does leaves as a
`QuestionCard.Action` message (answer, check, hint, skip); the lesson pane or
the quiz app decides, and calls back `show_hints`, `show_verdict`, `say` and
`finish`. Answers are read by tutor/asking.py's rules, the same ones `play` and
the plain quiz use. Lesson words (prompt, hints, feedback) are Markdown. Every
text it shows may quote the kernel (a key, a learner's value): its control
characters are shown, never sent (terminal_text.visible).

The two homes differ in one thing: a lesson's task is typed in the console
(`task_in_console`), the quiz's in the card's own code input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Input, Label, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from gradrepl.history import History
from gradrepl.terminal_text import first_control, visible
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.markdown_text import fenced
from gradrepl.tui.messages import CompletionRequested, InputSubmitted
from gradrepl.tutor.asking import (
    FIELD_LABELS,
    FIELD_PLACEHOLDERS,
    PLACEHOLDERS,
    precision_words,
    TYPE_WORDS,
    Typed,
    command,
    field_label,
    read_fields,
    read_typed,
)
from gradrepl.tutor.lesson import Question

TASK_IN_CONSOLE = ("Type code in the console until the check holds, then press Check. You are graded on the "
                   "state, not on the text; a Check that fails puts the namespace back to where the task started.")
STARTER_IN_CONSOLE = ("This code is in the console's input: fix it there and run it, then press Check. You are "
                      "graded on the state it leaves; a Check that fails puts the namespace back to where the "
                      "exercise started.")
TASK_INLINE = "Graded on the state your code leaves, not on its text."


class ChoiceList(OptionList):
    """A choice's options, numbered as shown; Enter, a click or an option's number answers with it."""

    BINDINGS = [Binding("enter", "select", "Answer")]

    def on_key(self, event: events.Key) -> None:
        if event.character and event.character.isdigit() and 1 <= int(event.character) <= self.option_count:
            event.stop()
            self.highlighted = int(event.character) - 1
            self.action_select()


class AnswerInput(Input):
    """An Input whose Enter shows in the footer as Answer."""

    BINDINGS = [Binding("enter", "submit", "Answer")]


class QuestionCard(Vertical):
    """A question as the learner sees it; `order` is the shown order of a choice's options."""

    # The verdict's mark sits beside its words, which wrap under themselves; the Markdown
    # widgets' own bottom margins are the only gaps under hints and verdict.
    DEFAULT_CSS = """
    QuestionCard { height: auto; border-left: thick $accent; padding: 0 1; }
    QuestionCard.-right, QuestionCard.-done { border-left: thick $success; }
    QuestionCard.-wrong { border-left: thick $error; }
    QuestionCard Markdown { margin: 0; padding: 0; background: transparent; }
    QuestionCard #question-prompt > *:last-child { margin-bottom: 0; }
    QuestionCard #question-code, QuestionCard ChoiceList, QuestionCard #task-code, QuestionCard .state-field,
    QuestionCard #answer { margin-top: 1; }
    QuestionCard #question-code MarkdownFence { margin: 0; }
    QuestionCard MarkdownFence > Label { padding: 0 1; }
    QuestionCard ChoiceList { height: auto; border: tall $panel; background: transparent; }
    QuestionCard ChoiceList:focus { border: tall $accent; }
    QuestionCard #task-code { height: auto; min-height: 3; max-height: 10; border: tall $panel; }
    QuestionCard #task-code:focus { border: tall $accent; }
    QuestionCard .state-field { height: auto; }
    QuestionCard .state-label { width: 22; padding: 1 1 0 0; }
    QuestionCard .state-field Input { width: 1fr; }
    QuestionCard .question-buttons { height: auto; margin-top: 1; }
    QuestionCard .question-buttons Button { margin-right: 1; }
    QuestionCard #hints, QuestionCard #verdict { display: none; height: auto; margin-top: 1; }
    QuestionCard #verdict-mark { width: 2; }
    QuestionCard #verdict-words { width: 1fr; }
    QuestionCard #verdict-words > MarkdownParagraph:last-child, QuestionCard #hints > MarkdownParagraph:last-child {
        margin: 0;
    }
    QuestionCard #note { height: auto; }
    /* Answered: the answer stays on screen beside its verdict; the buttons and the how-to step aside. */
    QuestionCard.-done .question-buttons, QuestionCard.-done .task-help { display: none; }
    /* Answered in an earlier visit: there is no answer of this visit to show. */
    QuestionCard.-earlier .state-field, QuestionCard.-earlier #answer, QuestionCard.-earlier ChoiceList {
        display: none;
    }
    """

    @dataclass
    class Action(Message):
        """The learner asked for something: "answer" (with `answer`), "check" (a console task), "hint", "skip"."""

        card: QuestionCard
        kind: str
        answer: Any = None

    def __init__(self, question: Question, order: list[int], *, code: str = "", title: str = "",
                 skippable: bool = False, task_in_console: bool = False, done: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(classes="question", **kwargs)
        self.question = question
        self.order = order
        self.code = code  # the code shown with the prompt (a lesson's own, or the quiz's with its context)
        self.title = title  # where the question comes from, beside its kind
        self.skippable = skippable
        self.task_in_console = task_in_console and question.type == "task"
        self.done = done
        self.frozen = done
        self.hints: list[str] = []
        self._note = Text()
        self._verdict = ""  # the shown verdict, mark and Markdown source; "" when none is shown

    # -- what it shows ------------------------------------------------------------
    def compose(self) -> ComposeResult:
        question = self.question
        kind = Text(f"? {TYPE_WORDS[question.type]}", style="bold")
        if self.title:
            kind.append(f"  ·  {self.title}", style="dim")
        yield Static(kind, id="question-kind")
        yield Markdown(visible(question.prompt), id="question-prompt")
        if self.code:
            yield Markdown(fenced(visible(self.code)), id="question-code")
        yield from self._answer_widgets()
        with Horizontal(classes="question-buttons"):
            yield Button("Check" if self.task_in_console else "Answer", id="answer-button", variant="primary",
                         compact=True)
            yield Button("Hint", id="hint-button", compact=True, disabled=not question.hints)
            if self.skippable:
                yield Button("Skip", id="skip-button", compact=True)
        yield Markdown(id="hints")
        with Horizontal(id="verdict"):
            yield Static(id="verdict-mark")
            yield Markdown(id="verdict-words")
        yield Static(id="note")

    def _answer_widgets(self) -> ComposeResult:
        question = self.question
        if question.type == "choice":
            # Content, not markup: option text such as `x[0]` must read as written.
            yield ChoiceList(*(Option(self._option_prompt(shown), id=f"option-{index}")
                               for shown, index in enumerate(self.order)), classes="answer-options")
        elif question.type == "predict_state":
            for name in question.fields:
                with Horizontal(classes="state-field"):
                    yield Label(field_label(question, name), classes="state-label")
                    yield AnswerInput(placeholder=FIELD_PLACEHOLDERS[name], id=f"field-{name}",
                                      classes="answer-input")
        elif self.task_in_console:
            if question.starter:
                yield Markdown(fenced(visible(question.starter)), id="question-code")
            yield Static(Text(STARTER_IN_CONSOLE if question.starter else TASK_IN_CONSOLE, style="italic"),
                         classes="task-help")
        elif question.type == "task":
            code_input = CodeInput(History(None), id="task-code", classes="answer-input")
            code_input.placeholder = PLACEHOLDERS["task"]
            yield code_input
            yield Static(Text(TASK_INLINE, style="dim italic"), classes="task-help")
        else:
            yield AnswerInput(placeholder=PLACEHOLDERS[question.type], id="answer", classes="answer-input")
            if precision_words(question):
                yield Static(Text(precision_words(question), style="dim"))

    def _option_prompt(self, shown: int, mark: tuple[str, str] | None = None) -> Content:
        text = f"{shown + 1}) {visible(self.question.options[self.order[shown]].text)}"
        return Content.assemble(mark, text) if mark else Content(text)

    def on_mount(self) -> None:
        if self.done:
            self.add_class("-done", "-earlier")
            self._freeze_widgets(True)
            self._set_note(Text("✓ done earlier", style="green"))

    def focus_answer(self) -> None:
        """Put the cursor where the answer goes."""
        targets = list(self.query(".answer-input")) or list(self.query(ChoiceList))
        if targets:
            targets[0].focus()

    # -- what the learner does ----------------------------------------------------
    @on(Button.Pressed, "#answer-button")
    def _answer_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.submit()

    @on(Button.Pressed, "#hint-button")
    def _hint_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Action(self, "hint"))

    @on(Button.Pressed, "#skip-button")
    def _skip_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Action(self, "skip"))

    @on(OptionList.OptionSelected, ".answer-options")
    def _option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.submit()  # Enter, a click or a number on an option picks it and answers with it

    @on(Input.Submitted, ".answer-input")
    def _input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.frozen:
            return
        if command(event.value) == "hint":
            event.input.clear()
            self.post_message(self.Action(self, "hint"))
            return
        inputs = list(self.query(".answer-input").results(Input))
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
        if command(event.source) == "hint":
            self.post_message(self.Action(self, "hint"))
            return
        # CodeInput empties itself on Enter; the code stays on screen beside its verdict.
        self.query_one(CodeInput).text = event.source
        self.submit()

    @on(CompletionRequested)
    def _no_completion(self, event: CompletionRequested) -> None:
        # Only the console completes: the card's code input belongs to no namespace the learner can see.
        event.stop()

    def submit(self) -> None:
        """Send the answer as given so far; a blank one is asked for again, nothing is graded."""
        if self.frozen:
            return
        typed = self.answer()
        if typed.kind != "answer":
            self.say(Text(typed.words, style="yellow"))
            empty = [field for field in self.query(".answer-input").results(Input) if not field.value.strip()]
            if empty:
                empty[0].focus()
            return
        self.post_message(self.Action(self, "check" if self.task_in_console else "answer", typed.value))

    def answer(self) -> Typed:
        """What the learner gave, read by tutor/asking.py's rules (a blank is asked again)."""
        question = self.question
        if question.type == "choice":
            highlighted = self.query_one(ChoiceList).highlighted
            if highlighted is None:
                return Typed("again", words="Pick an option first.")
            return Typed("answer", self.order[highlighted])
        if question.type == "predict_state":
            return read_fields(question, {name: self.query_one(f"#field-{name}", Input).value
                                          for name in question.fields})
        if self.task_in_console:
            return Typed("answer", "")  # graded on the console's namespace, not on text
        if question.type == "task":
            return read_typed(question, self.query_one(CodeInput).text, self.order)
        return read_typed(question, self.query_one("#answer", Input).value, self.order)

    # -- what the lesson or the quiz says -------------------------------------------
    def show_hints(self, hints: list[str]) -> None:
        """The hints shown so far (Markdown); Hint is disabled once none is left."""
        self.hints = list(hints)
        shown = self.query_one("#hints", Markdown)
        shown.update("\n\n".join(f"**hint {n}:** {visible(hint)}" for n, hint in enumerate(hints, 1)))
        shown.display = bool(hints)
        self.query_one("#hint-button", Button).disabled = self.frozen or not self.hints_left

    @property
    def hints_left(self) -> bool:
        return len(self.hints) < len(self.question.hints)

    def show_verdict(self, correct: bool, words: str, *, mark_style: str | None = None,
                     fields: dict[str, bool] | None = None) -> None:
        """Right or wrong: a mark beside the words (Markdown), and for predict_state a mark per field."""
        mark, words = "✓" if correct else "✗", visible(words)
        self.query_one("#verdict-mark", Static).update(
            Text(mark, style=mark_style or ("bold green" if correct else "bold red")))
        laid_out = self.query_one("#verdict-words", Markdown).update(words)
        self.query_one("#verdict").display = True
        self.set_class(correct, "-right")
        self.set_class(not correct, "-wrong")
        self.call_later(self._verdict_in_view, laid_out)
        self._verdict = f"{mark} {words}"
        note = Text()
        if fields:
            note.append("  ".join(f"{'✓' if ok else '✗'} {FIELD_LABELS[name]}" for name, ok in fields.items()),
                        style="dim")
        self._set_note(note)

    async def _verdict_in_view(self, laid_out: AwaitComplete) -> None:
        """The learner may be typing in the console: bring the verdict into view."""
        await laid_out
        self.call_after_refresh(self.query_one("#verdict").scroll_visible, animate=False)

    def mark_options(self, expected: str, picked: str | None = None) -> None:
        """✓ on the right option; ✗ on the one picked when it was another."""
        options = self.query_one(ChoiceList)
        for shown, index in enumerate(self.order):
            text = self.question.options[index].text
            if text == expected:
                options.replace_option_prompt_at_index(shown, self._option_prompt(shown, ("✓ ", "bold green")))
            elif text == picked:
                options.replace_option_prompt_at_index(shown, self._option_prompt(shown, ("✗ ", "bold red")))

    def say(self, text: Text) -> None:
        """A line of the tutor's own (waiting, a refusal, a failure): it replaces the verdict."""
        self.query_one("#verdict").display = False
        self._verdict = ""
        self._set_note(text)

    def show_waiting(self, words: str) -> None:
        self.say(Text(f"… {words}", style="dim italic"))

    def _set_note(self, text: Text) -> None:
        if first_control(text.plain) is not None:  # rare enough that its colours may go
            text = Text(visible(text.plain))
        self._note = text
        shown = self.query_one("#note", Static)
        shown.update(text)
        shown.display = bool(text.plain) or not self._verdict  # under a verdict, an empty line is no news

    def freeze(self, frozen: bool = True) -> None:
        """Hold the answer while it is graded; unfrozen, the cursor goes back to it."""
        self.frozen = frozen
        self._freeze_widgets(frozen)
        if not frozen:
            self.focus_answer()

    def _freeze_widgets(self, frozen: bool) -> None:
        for widget in self.query(".answer-input, ChoiceList, Button"):
            widget.disabled = frozen
        if not frozen:
            self.query_one("#hint-button", Button).disabled = not self.hints_left

    def finish(self, summary: Text | None = None) -> None:
        """Answered or skipped: freeze it for good, and say under the verdict what the answer was."""
        self.done = True
        self.add_class("-done")
        self.freeze()
        if summary is None:
            return
        note = Text()
        if self._note.plain.strip() and not self._note.plain.startswith("…"):
            note.append_text(self._note).append("\n")
        note.append_text(summary)
        self._set_note(note)  # the verdict, if one is shown, stays above the answer
