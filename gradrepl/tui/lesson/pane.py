"""The lesson pane: the course picker, then one lesson played step by step beside the console.

Prose is rendered with Textual's Markdown widget; python cells run in the
learner's own kernel (the console's) so the tensors appear in the panel;
questions are asked inline and graded by the lesson engine (tutor/grading.py).
Keys are computed in a second kernel (lesson_kernels.KeyKernel). Progress is
kept in the progress store; resume replays setup, cells and finished steps'
solutions in the kernel, never pickled tensors. Everything that waits (disk,
kernels) runs in workers or kernel jobs that post messages; handlers render.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import replace
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Markdown, OptionList, Static

from gradrepl.kernel.protocol import StepResult
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.lesson.kernels import KeyKernel, LiveLesson, needs_kernel
from gradrepl.tui.lesson.messages import (
    AnswerGraded,
    CourseLoaded,
    KeyComputed,
    LessonLoaded,
    LessonNotice,
    LessonResumed,
    Revealed,
)
from gradrepl.tui.lesson.picker import LessonPicker
from gradrepl.tui.lesson.question import QuestionCard, answer_summary
from gradrepl.tui.lesson.store import ProgressKeeper
from gradrepl.tui.markdown_text import fenced
from gradrepl.tutor.grading import Grade
from gradrepl.tutor.lesson import Course, Lesson, Question, Step, load_course
from gradrepl.tutor.progress import LessonProgress

if TYPE_CHECKING:
    from gradrepl.tui.app import GradReplApp


class LessonPane(Vertical):
    """The course picker and the lesson being played; `lesson_id` opens one at once."""

    def __init__(self, lesson_id: str | None = None, lessons_dir: str | None = None, **kwargs) -> None:
        super().__init__(id="lesson", **kwargs)
        self.wanted = lesson_id
        self.lessons_dir = lessons_dir
        self.course: Course | None = None
        self.course_progress: dict[str, LessonProgress] = {}
        self.keeper = ProgressKeeper()
        self._reviewed: set[str] = set()  # questions already rated as quiz reviews in this visit
        self.keys: KeyKernel | None = None
        self.lesson: Lesson | None = None
        self.progress: LessonProgress | None = None
        self.index = 0
        self._shuffle_seed = secrets.token_hex(4)  # a new option order each visit

    @property
    def gradrepl(self) -> GradReplApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static(id="lesson-notice")
        yield LessonPicker(id="lesson-picker")
        yield VerticalScroll(id="lesson-steps")
        with Horizontal(id="lesson-bar"):
            yield Static(id="lesson-position")
            yield Button("Lessons", id="lesson-back", compact=True)
            yield Button("Continue ▸", id="lesson-next", variant="primary", compact=True)

    def on_mount(self) -> None:
        self.border_title = "lessons"
        self._mode("picker")
        self.load_course()

    async def on_unmount(self) -> None:
        if self.keys is not None:
            await self.keys.close()
        self.keeper.close()

    # -- the course ------------------------------------------------------------
    @work(group="lesson-course", exclusive=True, exit_on_error=False)
    async def load_course(self) -> None:
        """Parse lessons/ (a broken file is reported, the others load) and read progress."""
        course = await asyncio.to_thread(load_course, self.lessons_dir)
        progress = await self.keeper.all()
        self.post_message(CourseLoaded(course, progress, self.keeper.take_notices()))

    @on(CourseLoaded)
    async def _course_loaded(self, message: CourseLoaded) -> None:
        self.course, self.course_progress = message.course, message.progress
        self.query_one(LessonPicker).show_course(message.course, message.progress)
        for notice in message.notices:
            self._console_notice(notice, "yellow")
        wanted, self.wanted = self.wanted, None
        if wanted is None:
            return
        if message.course.get(wanted) is not None:
            await self.open_lesson(wanted)
            return
        broken = [str(p) for p in message.course.problems if wanted in p.path]
        words = (f"Lesson {wanted!r} could not be loaded:\n" + "\n".join(broken)) if broken else \
            f"There is no lesson {wanted!r}; pick one below."
        self.query_one("#lesson-notice", Static).update(Text(words, style="bold red"))

    def show_picker(self) -> None:
        """Back to the course list (progress refreshed)."""
        self.lesson = None
        self._mode("picker")
        self.load_course()

    @on(OptionList.OptionSelected, "#lesson-picker")
    async def _lesson_picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id and not event.option.id.startswith("broken:"):
            await self.open_lesson(event.option.id)

    # -- one lesson ------------------------------------------------------------
    async def open_lesson(self, lesson_id: str) -> None:
        """Open a lesson of the loaded course where the learner stopped."""
        lesson = self.course.get(lesson_id) if self.course else None
        if lesson is None:
            return
        self.lesson = lesson
        self.query_one("#lesson-notice", Static).update("")
        self.border_title = lesson.title
        self._mode("lesson")
        await self.query_one("#lesson-steps").remove_children()
        if self.keys is None and any(needs_kernel(q) for q in lesson.questions):
            self.keys = KeyKernel(self.gradrepl.options)
            self._live(self._warm_keys_job())
        self.read_progress(lesson)

    @work(group="lesson-open", exclusive=True, exit_on_error=False)
    async def read_progress(self, lesson: Lesson) -> None:
        self.post_message(LessonLoaded(lesson.id, await self.keeper.lesson(lesson.id, lesson.version)))

    def _warm_keys_job(self):
        """Start the key kernel once the console's kernel is up: two torch imports at once slow both."""
        async def job(session) -> None:
            self.warm_keys()
        return job

    @work(group="lesson-keys", exit_on_error=False)
    async def warm_keys(self) -> None:
        await self.keys.start()

    @on(LessonLoaded)
    async def _lesson_loaded(self, message: LessonLoaded) -> None:
        lesson = self.lesson
        if lesson is None or lesson.id != message.lesson_id:
            return
        progress = message.progress
        if progress.notice:
            self._console_notice(progress.notice, "yellow")
        self.progress = progress
        self.index = max(0, min(progress.current_step, len(lesson.steps) - 1))
        current_done = self.index in progress.finished
        await self.query_one("#lesson-steps").mount_all(
            [self._step_widget(i, done=i in progress.finished) for i in range(self.index + 1)])
        upto = self.index + 1 if current_done else self.index
        self._live(self._resume_job(lesson, upto))
        if not current_done:
            self._enter(self.index)
        self.call_after_refresh(self._focus_step, self.index)
        self._update_bar()
        self._scroll_to(self.index)

    def _resume_job(self, lesson: Lesson, upto: int):
        live = LiveLesson(lesson, self.app.post_message)

        async def job(session) -> None:
            problems = await live.rebuild(session, upto)
            self.post_message(LessonResumed(lesson.id, upto, problems))
        return job

    @on(LessonResumed)
    def _lesson_resumed(self, message: LessonResumed) -> None:
        if message.replayed:
            steps = len(self.lesson.steps) if self.lesson else 0
            which = "every step" if message.replayed >= steps else f"the steps before step {message.replayed + 1}"
            self._console_notice(f"Lesson {message.lesson_id!r}: a fresh kernel, with {which} of the lesson "
                                 "replayed (variables you made before are gone).")
        else:
            self._console_notice(f"Lesson {message.lesson_id!r}: a fresh kernel for the lesson.")
        for problem in message.problems:
            self._console_notice(f"lesson problem: {problem}", "bold red")

    def _step_widget(self, index: int, done: bool) -> Widget:
        step = self.lesson.steps[index]
        if step.kind == "prose":
            return Markdown(step.text, classes="step prose", id=f"step-{index}")
        if step.kind == "code":
            return Markdown(fenced(step.text), classes="step cell", id=f"step-{index}")
        question = step.question
        return QuestionCard(question, question.option_order(self._shuffle_seed), skippable=self.lesson.skippable, done=done, id=f"step-{index}")

    def _enter(self, index: int) -> None:
        """Make step `index` happen: run its cell, or set its question up; prose is read."""
        step = self.lesson.steps[index]
        if step.kind == "prose":
            self._finish(index)
        elif step.kind == "code":
            self._live(self._cell_job(index, step))
            self._finish(index)
        else:
            question = step.question
            card = self._card(index)
            if question.setup:
                self._live(self._setup_job(index, question))
            if needs_kernel(question):
                self.compute_key(question)
            hints = self.progress.hints.get(index, 0)
            if hints:
                card.show_hints(question.hints[:hints])

    def _cell_job(self, index: int, step: Step):
        live = LiveLesson(self.lesson, self.app.post_message)

        async def job(session) -> None:
            result = await live.run(session, step.text)
            if _needs_lesson_namespace(result):
                # Lesson cells never raise in the lesson's own namespace: the learner's changed it.
                self.post_message(LessonNotice("This cell needs the lesson's own variables: rebuilding them "
                                               "and running it again.", "yellow"))
                await live.rebuild(session, index)
                await live.run(session, step.text)
        return job

    def _setup_job(self, index: int, question: Question):
        live = LiveLesson(self.lesson, self.app.post_message)

        async def job(session) -> None:
            result = await live.run(session, question.setup, echo=False)
            if _needs_lesson_namespace(result):
                await live.rebuild(session, index)
                await live.run(session, question.setup, echo=False)
        return job

    async def advance(self) -> None:
        """Continue: the next step, or back to the course at the end."""
        if not self.can_advance():
            return
        if self.index + 1 >= len(self.lesson.steps):
            self.show_picker()
            return
        self.index += 1
        self.progress.current_step = self.index
        self._save()
        await self.query_one("#lesson-steps").mount(self._step_widget(self.index, done=False))
        self._enter(self.index)
        self._update_bar()
        self._scroll_to(self.index)
        if self._focus_is_here() or self.lesson.steps[self.index].kind == "question":
            self.call_after_refresh(self._focus_step, self.index)

    def can_advance(self) -> bool:
        return self.lesson is not None and self.progress is not None and self.index in self.progress.finished

    def open_task(self) -> QuestionCard | None:
        """The card of the task being worked on, if the current step is one."""
        if self.lesson is None or self.progress is None or self.index in self.progress.finished:
            return None
        step = self.lesson.steps[self.index]
        if step.kind != "question" or step.question.type != "task":
            return None
        cards = self.query(f"#step-{self.index}")
        return cards.first(QuestionCard) if cards else None

    def check_task(self) -> None:
        """F5: grade the open task on the console's namespace, without leaving the console."""
        card = self.open_task()
        if card is not None:
            card.post_message(QuestionCard.Action(card, "check", ""))

    def _finish(self, index: int) -> None:
        if index not in self.progress.finished:
            self.progress.finished.append(index)
        self._save()
        self._update_bar()

    # -- questions -------------------------------------------------------------
    @work(group="lesson-keys", exit_on_error=False)
    async def compute_key(self, question: Question) -> None:
        try:
            key = await self.keys_for(question).key(question)
        except Exception as exc:  # the learner can still answer: grading tries again
            self.post_message(LessonNotice(f"The answer key could not be computed yet: {exc}", "yellow"))
            return
        self.post_message(KeyComputed(question.uid, key))

    @on(KeyComputed)
    def _key_computed(self, message: KeyComputed) -> None:
        for problem in message.key.problems:
            self._console_notice(f"lesson problem: {problem}", "bold red")

    @on(QuestionCard.Action)
    def _question_action(self, message: QuestionCard.Action) -> None:
        message.stop()
        card, question = message.card, message.card.question
        index = self._index_of(card)
        if index is None or card.done:
            return
        if message.kind == "hint":
            shown = self.progress.hints.get(index, 0)
            if question.hint(shown) is not None:
                self.progress.hints[index] = shown + 1
                self._save()
            card.show_hints(question.hints[: self.progress.hints.get(index, 0)])
        elif message.kind == "skip":
            if not self.lesson.skippable:
                card.show_feedback(Text("This lesson cannot be skipped: try, or ask for a hint.", style="yellow"))
                return
            card.show_waiting("running the solution" if question.type == "task" else "showing the answer")
            self._live(self._reveal_job(question, skipped=True))
        elif message.kind == "check":
            card.show_waiting("checking the console's namespace")
            self._live(self._check_job(question))
        else:
            card.show_waiting("grading")
            self.grade_answer(question, message.answer)

    @work(group="lesson-grade", exit_on_error=False)
    async def grade_answer(self, question: Question, answer: object) -> None:
        """The engine grades; the answer key comes from the key kernel."""
        try:
            grade = await self.keys_for(question).grade(question, answer)
        except Exception as exc:  # no verdict is not a wrong answer: say why and let the learner retry
            grade = Grade(False, f"This answer could not be graded ({type(exc).__name__}: {exc}); try again.")
            self.post_message(AnswerGraded(question.uid, grade, counts=False))
            return
        self.post_message(AnswerGraded(question.uid, grade, answer=str(answer)))

    def keys_for(self, question: Question) -> KeyKernel:
        if self.keys is None:  # only author-keyed questions so far: a kernel is started on demand
            self.keys = KeyKernel(self.gradrepl.options)
        return self.keys

    def _check_job(self, question: Question):
        live = LiveLesson(self.lesson, self.app.post_message)

        async def job(session) -> None:
            self.post_message(AnswerGraded(question.uid, await live.check(session, question), answer="(task check)"))
        return job

    @on(AnswerGraded)
    def _answer_graded(self, message: AnswerGraded) -> None:
        index, card = self._find(message.uid)
        if card is None or card.done:
            return
        card.show_grade(message.grade)
        if message.counts and message.uid not in self._reviewed:  # the first verdict of this visit rates the card
            self._reviewed.add(message.uid)
            self.keeper.review(message.uid, message.grade.correct, self.progress.hints.get(index, 0) > 0,
                               message.answer, on_failure=self._not_saved)
        if message.grade.restored:  # the console's namespace changed under the learner: say so there too
            self._console_notice("Check: not yet. The namespace is back to where this task started; "
                                 "↑ brings your lines back to edit.", "yellow")
        if message.grade.correct:
            self._live(self._reveal_job(card.question, skipped=False))

    def _reveal_job(self, question: Question, skipped: bool):
        """After the answer the question's code runs where the learner sees it; a skipped task runs its solution."""
        live = LiveLesson(self.lesson, self.app.post_message)

        async def job(session) -> None:
            problems = []
            if question.type == "task":
                if skipped:
                    problems = await live.solve(session, question)
            elif question.code:
                await live.run(session, question.code)
            self.post_message(Revealed(question.uid, skipped, problems))
        return job

    @on(Revealed)
    async def _revealed(self, message: Revealed) -> None:
        index, card = self._find(message.uid)
        if card is None:
            return
        question = card.question
        expected = question.solution.strip() if question.type == "task" else \
            (await self.keys_for(question).key(question)).text
        card.finish(answer_summary(question, expected, message.skipped))
        for problem in message.problems:
            self._console_notice(f"lesson problem: {problem}", "bold red")
        self._finish(index)
        if self._focus_is_here() or self.app.focused is None:
            self.query_one("#lesson-next", Button).focus()

    # -- the bar and little helpers ----------------------------------------------
    @on(Button.Pressed, "#lesson-next")
    async def _next_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        await self.advance()

    @on(Button.Pressed, "#lesson-back")
    def _back_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.show_picker()

    @on(LessonNotice)
    def _notice(self, message: LessonNotice) -> None:
        self._console_notice(message.text, message.style)

    def _mode(self, mode: str) -> None:
        picking = mode == "picker"
        self.set_class(picking, "-picking")
        self.query_one(LessonPicker).display = picking
        self.query_one("#lesson-steps").display = not picking
        self.query_one("#lesson-next").display = not picking
        self.query_one("#lesson-back").display = not picking
        if picking:
            self.border_title = "lessons"
            self.query_one("#lesson-position", Static).update(Text("pick a lesson · Enter opens it", style="dim"))
            self.query_one(LessonPicker).focus()

    def _update_bar(self) -> None:
        if self.lesson is None or self.progress is None:
            return
        total = len(self.lesson.steps)
        done = self.index in self.progress.finished
        last = self.index + 1 >= total
        words = f"step {self.index + 1} of {total}"
        if done and last:
            words += " · lesson complete, NOT saved" if self.keeper.unsaved else " · lesson complete ✓"
        elif not done and self.lesson.steps[self.index].kind == "question":
            words += " · answer to go on"
        self.query_one("#lesson-position", Static).update(Text(words, style="dim"))
        button = self.query_one("#lesson-next", Button)
        button.label = "Done ▸" if last and done else "Continue ▸"
        button.disabled = not done
        self.gradrepl.refresh_bindings()  # Next step and Check task come and go with the step

    def _save(self) -> None:
        if self.progress is not None:
            snapshot = replace(self.progress, finished=list(self.progress.finished), hints=dict(self.progress.hints))
            self.keeper.save(snapshot, on_failure=self._not_saved)

    def _not_saved(self, words: str) -> None:
        """From the store's thread: say so, and take back any claim that progress is stored."""
        self.post_message(LessonNotice(words, "bold red"))
        self.app.call_from_thread(self._update_bar)

    def _live(self, job) -> None:
        """Queue `job(session)` in the console's step queue: lesson code and typed code never overlap."""
        async def guarded(session) -> None:
            try:
                await job(session)
            except Exception as exc:  # a job that fails must not stop the console's queue
                self.post_message(LessonNotice(f"The lesson could not use the kernel: {type(exc).__name__}: {exc}",
                                               "bold red"))
        self.gradrepl.submit_job(guarded)

    def _card(self, index: int) -> QuestionCard:
        return self.query_one(f"#step-{index}", QuestionCard)

    def _index_of(self, card: QuestionCard) -> int | None:
        return int(card.id.removeprefix("step-")) if card.id else None

    def _find(self, uid: str) -> tuple[int | None, QuestionCard | None]:
        for card in self.query(QuestionCard):
            if card.question.uid == uid:
                return self._index_of(card), card
        return None, None

    def _focus_step(self, index: int) -> None:
        """Answers go to the question, task code to the console; otherwise Enter continues."""
        step = self.lesson.steps[index] if self.lesson else None
        if step is None:
            return
        if step.kind == "question" and not self._card(index).done:
            if step.question.type == "task":
                self.gradrepl.focus_input()
            else:
                self._card(index).focus_answer()
        else:
            self.query_one("#lesson-next", Button).focus()

    def _focus_is_here(self) -> bool:
        focused = self.app.focused
        return focused is not None and self in focused.ancestors_with_self

    def _scroll_to(self, index: int) -> None:
        steps = self.query_one("#lesson-steps", VerticalScroll)

        def scroll() -> None:
            found = steps.query(f"#step-{index}")
            if found:
                steps.scroll_to_widget(found.first(), top=True, animate=False)
        # Markdown lays its blocks out after mounting: scroll once now and once it has settled.
        self.call_after_refresh(scroll)
        self.set_timer(0.2, scroll)

    def _console_notice(self, text: str, style: str = "dim") -> None:
        self.app.query_one(ConsoleLog).write_notice(text, style)


def _needs_lesson_namespace(result: StepResult) -> bool:
    """Lesson code failed for a reason other than the learner stopping it or the kernel dying."""
    return result.error is not None and not result.kernel_event and result.error.type != "KeyboardInterrupt"
