"""`gradrepl quiz`: the review quiz as a small Textual app, one question at a time.

A face over `QuizRun`: grading (kernel work) runs in an async worker that posts
`AnswerGraded`; the handlers here only render. `QuizRun.answer` commits each
answer to the store before it returns, so quitting at any point loses nothing
answered.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Markdown, Static

from gradrepl.tui.key_footer import KeyFooter
from gradrepl.tui.messages import KernelStateChanged
from gradrepl.tui.question import QuestionCard
from gradrepl.tui.quiz.words import result_markdown, summary_markdown
from gradrepl.tui.status_bar import STATE_WORDS
from gradrepl.tui.unicode_width import align_with_terminal
from gradrepl.tutor.quiz import QuizResult, QuizRun, QuizSummary, SessionGrader, due_in_words


@dataclass
class AnswerGraded(Message):
    """The kernel graded the answer and the store has it."""

    result: QuizResult


@dataclass
class GradingFailed(Message):
    """The answer could not be graded (no kernel); nothing was recorded."""

    reason: str


class QuizApp(App):
    """Ask the run's questions, show each verdict, end with the summary."""

    CSS_PATH = "quiz.tcss"
    TITLE = "gradrepl quiz"
    BINDINGS = [
        Binding("enter", "answer", "Answer", id="answer"),
        Binding("f1", "hint", "Hint", id="hint"),
        Binding("ctrl+n", "next", "Next", id="next"),
        Binding("escape", "close", "Close", id="close"),
        Binding("ctrl+q", "quit", "Quit (answers are saved)", priority=True, id="quit"),
    ]

    def __init__(self, quiz: QuizRun, *, grader: SessionGrader | None = None,
                 lesson_titles: dict[str, str] | None = None) -> None:
        super().__init__()
        align_with_terminal()  # Devanagari vowel signs take the cell the terminal gives them
        self.quiz = quiz
        # Given a grader, the app starts its kernel on mount and stops it on unmount.
        self.grader = grader
        self.lesson_titles = lesson_titles or {}
        self.phase = "opening"  # opening | asking | grading | answered | done
        self.kernel_state = "starting" if grader is not None else ""

    def compose(self) -> ComposeResult:
        with Vertical(id="quiz"):
            yield VerticalScroll(id="quiz-body")
            with Horizontal(id="quiz-buttons"):
                yield Button("Next", id="next-button", compact=True)
        yield Static(id="quiz-status")
        yield KeyFooter()

    async def on_mount(self) -> None:
        if self.grader is not None:
            # The learner reads the first question while torch imports.
            self.grader.start(on_state=lambda state: self.post_message(KernelStateChanged(state)))
        await self.show_next()

    async def on_unmount(self) -> None:
        if self.grader is not None:
            await self.grader.close()  # the kernel must not outlive the quiz

    @property
    def view(self) -> QuestionCard:
        return self.query_one(QuestionCard)

    # -- moving through the quiz -------------------------------------------------
    async def show_next(self) -> None:
        """The next question, or the summary when there is none."""
        question = self.quiz.next_question()
        body = self.query_one("#quiz-body", VerticalScroll)
        await body.remove_children()
        if question is None:
            await self.show_summary()
            return
        title = self.lesson_titles.get(question.lesson_id, "")
        view = QuestionCard(question, self.quiz.order(question), code=question.quiz_code, title=title)
        await body.mount(view)
        body.scroll_home(animate=False)
        quiz = self.query_one("#quiz")
        quiz.border_title = f"quiz · question {self.quiz.position} of {self.quiz.total}"
        quiz.border_subtitle = question.uid
        self.query_one("#next-button", Button).label = "Summary" if self.quiz.position == self.quiz.total else "Next"
        self._enter_phase("asking")
        view.focus_answer()

    async def show_summary(self) -> None:
        """Score, what to review, when the next reviews are due."""
        summary = self.quiz.summary()
        body = self.query_one("#quiz-body", VerticalScroll)
        await body.mount(Markdown(summary_markdown(summary, self.quiz.total), id="quiz-summary"))
        quiz = self.query_one("#quiz")
        quiz.border_title = "quiz · done"
        quiz.border_subtitle = ""
        self.query_one("#next-button", Button).label = "Close"
        self._enter_phase("done")

    def _enter_phase(self, phase: str) -> None:
        self.phase = phase
        next_button = self.query_one("#next-button", Button)
        next_button.disabled = phase not in ("answered", "done")
        if phase in ("answered", "done"):
            next_button.focus()
        self.refresh_bindings()
        self.refresh_status()

    # -- grading, in a worker ----------------------------------------------------
    @work(group="grade", exclusive=True, exit_on_error=False)
    async def grade_answer(self, answer: object) -> None:
        """Grade in the kernel and commit the review (QuizRun.answer does both)."""
        try:
            result = await self.quiz.answer(answer)
        except Exception as exc:  # the learner needs words, not a crashed quiz
            self.post_message(GradingFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(AnswerGraded(result))

    @on(QuestionCard.Action)
    def _card_action(self, message: QuestionCard.Action) -> None:
        message.stop()
        if message.kind == "hint":
            self.action_hint()
        elif message.kind == "answer" and self.phase == "asking":
            self._grade(message.answer)

    def _grade(self, answer: object) -> None:
        self.view.freeze()
        waiting = "grading…"
        if self.kernel_state == "starting":
            waiting += " (the kernel is still importing torch; the first answer takes a few seconds)"
        self.view.say(Text(waiting, style="dim italic"))
        self._enter_phase("grading")
        self.grade_answer(answer)

    @on(AnswerGraded)
    def _answer_graded(self, message: AnswerGraded) -> None:
        if message.result.retry:  # the answer was in another form than asked: nothing recorded, answer again
            self.view.say(Text(message.result.feedback, style="bold yellow"))
            self.view.freeze(False)
            self._enter_phase("asking")
            return
        result, view = message.result, self.view
        view.show_verdict(result.correct, result_markdown(result, self.quiz.spaced.now()),
                          mark_style="bold yellow" if result.correct and result.hinted else None)
        if result.question.type == "choice":
            view.mark_options(result.expected, result.answer)
        view.finish()
        self._enter_phase("answered")
        self.call_after_refresh(self.query_one("#quiz-body").scroll_end, animate=False)

    @on(GradingFailed)
    def _grading_failed(self, message: GradingFailed) -> None:
        self.view.say(Text(f"Could not grade this answer: {message.reason}\n"
                           "Nothing was recorded; try again, or quit with Ctrl+Q and run `gradrepl doctor`.",
                           style="bold red"))
        self.view.freeze(False)
        self._enter_phase("asking")

    @on(KernelStateChanged)
    def _kernel_state_changed(self, message: KernelStateChanged) -> None:
        self.kernel_state = message.state
        self.refresh_status()

    # -- buttons and keys --------------------------------------------------------
    @on(Button.Pressed, "#next-button")
    async def _next_pressed(self) -> None:
        await self.action_next()

    def action_answer(self) -> None:
        if self.phase == "asking":
            self.view.submit()

    def action_hint(self) -> None:
        """The next hint; a right answer after it rates Hard."""
        if self.phase != "asking":
            return
        hint = self.quiz.hint()
        if hint is None:
            self.view.say(Text("No more hints for this one." if self.view.hints else "This question has no hints.",
                               style="dim"))
        else:
            self.view.show_hints([*self.view.hints, hint])
        self.view.focus_answer()
        self.refresh_bindings()

    async def action_next(self) -> None:
        if self.phase == "answered":
            await self.show_next()
        elif self.phase == "done":
            self.exit()

    def action_close(self) -> None:
        if self.phase == "done":
            self.exit()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "answer":
            return self.phase == "asking"
        if action == "hint":
            return self.phase == "asking" and self.view.hints_left
        if action == "next":
            return self.phase == "answered"
        if action == "close":
            return self.phase == "done"
        return True

    # -- the status line -----------------------------------------------------------
    def refresh_status(self) -> None:
        self.query_one("#quiz-status", Static).update(self.status_text())

    def status_text(self) -> Text:
        """Score so far, the kernel's state, and the promise that answers are saved."""
        results = self.quiz.results
        text = Text(f"score {sum(r.correct for r in results)}/{len(results)}", style="bold")
        if self.kernel_state in STATE_WORDS:
            words, style = STATE_WORDS[self.kernel_state]
            text.append("  │  ").append(words, style=style)
        text.append("  │  answers are saved as you go", style="dim")
        return text


def closing_words(summary: QuizSummary, total: int) -> str:
    """What the terminal shows after the app closes: the score and when to come back."""
    if not summary.asked:
        return "Quiz closed before any answer; nothing was recorded."
    words = f"Quiz: {summary.score} right"
    if summary.asked < total:
        words = f"Stopped after {summary.asked} of {total}; your answers so far are saved. " + words
    if summary.next_due is not None:
        words += f"; next review due {due_in_words(summary.next_due, summary.now)}"
    return words + "."
