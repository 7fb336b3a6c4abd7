"""The lesson pane: the course picker, then one lesson played step by step beside the console.

A face over the lesson engine (tutor/lesson_run.py's LessonRun), the engine `play`
and `lint` drive too. The pane never builds it: the app hands in its parts
(tutor/lesson_parts.py: the door to the console's kernel, a key kernel, the
progress keeper), and the pane only renders the run's events (LessonEvent
messages) and passes on what the learner does (`run.act`). Lesson code runs in
the console's kernel through the door, which takes turns in the console's step
queue, so lesson steps come back to the app as ordinary step results. Prose is
rendered with Textual's Markdown widget.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Markdown, OptionList, Static
from textual.worker import Worker, WorkerState

from gradrepl.tui.lesson.messages import CourseLoaded, LessonEvent, LessonLoaded
from gradrepl.tui.lesson.picker import LessonPicker
from gradrepl.tui.markdown_text import fenced
from gradrepl.tui.messages import ConsoleNotice, FocusConsole
from gradrepl.tui.question import QuestionCard
from gradrepl.tutor import lesson_events as events
from gradrepl.tutor.lesson import Course, Lesson, Question, load_course
from gradrepl.tutor.progress import LessonProgress

Call = Callable[[], Awaitable[object]]


class LessonPane(Vertical):
    """The course picker and the lesson being played; `lesson_id` opens one at once."""

    def __init__(self, parts, lesson_id: str | None = None, lessons_dir: str | None = None, **kwargs) -> None:
        super().__init__(id="lesson", **kwargs)
        self.wanted = lesson_id
        self.lessons_dir = lessons_dir
        self.parts = parts  # tutor.lesson_parts.LessonParts, built and closed by the app
        self.keeper = parts.keeper
        self.keeper.on_failure = self._not_saved
        self.course: Course | None = None
        self.run = None  # the LessonRun of the lesson open (parts.new_run)
        self._calls: asyncio.Queue[Call] = asyncio.Queue()  # the engine calls, one at a time, in order
        self._opening: str | None = None  # the lesson whose progress is being read
        self._shuffle_seed = secrets.token_hex(4)  # a new option order each visit
        self._started: set[str] = set()  # exercises whose starter code was put into the console

    @property
    def lesson(self) -> Lesson | None:
        return self.run.lesson if self.run else None

    @property
    def progress(self) -> LessonProgress | None:
        return self.run.progress if self.run else None

    @property
    def index(self) -> int:
        return self.run.index if self.run else 0

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
        self.run_calls()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # Worker messages reach only the widget that started the worker: the app's one handler says
        # what failed, then calls restore_after_failure here.
        if event.state == WorkerState.ERROR:
            self.app.post_message(Worker.StateChanged(event.worker, event.state))

    def restore_after_failure(self, name: str) -> None:
        """The lane of engine calls stopped: start it again, and let the learner answer again."""
        if name == "run_calls":
            self.run_calls()
            self._answer_again()

    def _answer_again(self) -> None:
        """A call that raised leaves its card waiting: unfreeze it."""
        if self.run is not None and self.run.question is not None:
            for card in self.query(f"#step-{self.run.index}").results(QuestionCard):
                card.freeze(False)

    # -- the course ------------------------------------------------------------
    @work(group="lesson-course", exclusive=True, exit_on_error=False)
    async def load_course(self) -> None:
        """Parse lessons/ (a broken file is reported, the others load) and read progress."""
        course = await asyncio.to_thread(load_course, self.lessons_dir)
        progress = await self.keeper.all()
        self.post_message(CourseLoaded(course, progress, self.keeper.take_notices()))

    @on(CourseLoaded)
    async def _course_loaded(self, message: CourseLoaded) -> None:
        self.course = message.course
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
        self.run = None
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
        self.run = None
        self.query_one("#lesson-notice", Static).update("")
        self.border_title = lesson.title
        self._mode("lesson")
        await self.query_one("#lesson-steps").remove_children()
        self.warm_keys(lesson)
        self._opening = lesson.id
        self.read_progress(lesson)

    @work(group="lesson-open", exclusive=True, exit_on_error=False)
    async def read_progress(self, lesson: Lesson) -> None:
        self.post_message(LessonLoaded(lesson.id, await self.keeper.lesson(lesson.id, lesson.version)))

    @work(group="lesson-keys", exit_on_error=False)
    async def warm_keys(self, lesson: Lesson) -> None:
        await self.parts.warm_keys(lesson)

    @on(LessonLoaded)
    async def _lesson_loaded(self, message: LessonLoaded) -> None:
        lesson = self.course.get(message.lesson_id) if self.course else None
        if lesson is None or self._opening != lesson.id:
            return
        progress = message.progress
        if progress.notice:
            self._console_notice(progress.notice, "yellow")
        run = self.parts.new_run(lesson, progress, self._deliver, self._shuffle_seed)
        self.run = run
        if run.again:
            self._console_notice("You finished this lesson before: taking it again from the start.")
        await self.query_one("#lesson-steps").mount_all(
            [self._step_widget(i, done=run.done(i)) for i in range(run.index + 1)])
        self._call(run.resume)
        if not run.done():
            self._enter()
        self.call_after_refresh(self._focus_step, run.index)
        self._update_bar()
        self._scroll_to(run.index)

    def _step_widget(self, index: int, done: bool) -> Widget:
        step = self.lesson.steps[index]
        if step.kind == "prose":
            return Markdown(step.text, classes="step prose", id=f"step-{index}")
        if step.kind == "code":
            return Markdown(fenced(step.text), classes="step cell", id=f"step-{index}")
        question = step.question
        return QuestionCard(question, self.run.order(question), code=question.code, skippable=self.lesson.skippable,
                            task_in_console=True, done=done, id=f"step-{index}")

    def _enter(self) -> None:
        """Make the current step happen: prose is read, a cell is queued, a question is set up."""
        run, index = self.run, self.run.index
        if run.step.kind != "question":
            run.mark_read()
            if run.step.kind == "code":
                self._call(lambda: run.enter(index))
            self._update_bar()
            return
        self._call(lambda: run.enter(index))
        self.compute_key(run)
        hints = run.hints_shown()
        if hints:
            self._card(index).show_hints(run.question.hints[:hints])

    async def advance(self) -> None:
        """Continue: the next step, or back to the course at the end."""
        if not self.can_advance():
            return
        if not self.run.advance():
            self.show_picker()
            return
        index = self.run.index
        await self.query_one("#lesson-steps").mount(self._step_widget(index, done=False))
        self._enter()
        self._update_bar()
        self._scroll_to(index)
        if self._focus_is_here() or self.run.step.kind == "question":
            self.call_after_refresh(self._focus_step, index)

    def can_advance(self) -> bool:
        return self.run is not None and self.run.done()

    def open_task(self) -> QuestionCard | None:
        """The card of the task being worked on, if the current step is one."""
        run = self.run
        if run is None or run.done() or run.question is None or run.question.type != "task":
            return None
        cards = self.query(f"#step-{run.index}")
        return cards.first(QuestionCard) if cards else None

    def check_task(self) -> None:
        """F5: grade the open task on the console's namespace, without leaving the console."""
        card = self.open_task()
        if card is not None:
            card.post_message(QuestionCard.Action(card, "check", ""))

    # -- questions -------------------------------------------------------------
    @work(group="lesson-keys", exit_on_error=False)
    async def compute_key(self, run) -> None:
        try:
            await run.key(run.question)
        except Exception as exc:  # the learner can still answer: grading tries again
            self._console_notice(f"The answer key could not be computed yet: {exc}", "yellow")

    @on(QuestionCard.Action)
    def _question_action(self, message: QuestionCard.Action) -> None:
        message.stop()
        run, card = self.run, message.card
        if run is None or card.done or self._index_of(card) != run.index:
            return
        waiting = {"skip": "running the solution" if run.question.type == "task" else "showing the answer",
                   "check": "checking the console's namespace", "answer": "grading"}.get(message.kind)
        if waiting:
            card.show_waiting(waiting)  # a refusal or the verdict replaces it
        self._call(lambda: run.act(message.kind, message.answer))

    # -- what the run says ------------------------------------------------------
    def _deliver(self, event: events.Event) -> None:
        self.post_message(LessonEvent(event))

    @on(LessonEvent)
    def _lesson_event(self, message: LessonEvent) -> None:
        event = message.event
        if isinstance(event, events.Opened):
            self._opened(event)
        elif isinstance(event, events.Hinted):
            self._card(self.run.index).show_hints(self.run.question.hints[:event.n])
        elif isinstance(event, events.Refused):
            self._card(self.run.index).say(Text(event.text, style="yellow"))
        elif isinstance(event, events.Notice):
            self._console_notice(event.text, "yellow")
        elif isinstance(event, events.Graded):
            self._graded(event)
        elif isinstance(event, events.Revealed):
            self._revealed(event)
        elif isinstance(event, events.LessonProblem):
            self._console_notice(f"lesson problem: {event.message}", "bold red")

    def _opened(self, event: events.Opened) -> None:
        if event.replayed:
            steps = len(event.lesson.steps)
            which = "every step" if event.replayed >= steps else f"the steps before step {event.replayed + 1}"
            self._console_notice(f"Lesson {event.lesson.id!r}: a fresh kernel, with {which} of the lesson "
                                 "replayed (variables you made before are gone).")
        else:
            self._console_notice(f"Lesson {event.lesson.id!r}: a fresh kernel for the lesson.")

    def _graded(self, event: events.Graded) -> None:
        card = self._card_of(event.uid)
        if card is None or card.done:
            return
        card.show_verdict(event.grade.correct, event.grade.feedback, fields=event.grade.fields)
        if event.grade.restored:  # the console's namespace changed under the learner: say so there too
            self._console_notice("Check: not yet. The namespace is back to where this task started; "
                                 "↑ brings your lines back to edit.", "yellow")

    def _revealed(self, event: events.Revealed) -> None:
        card = self._card_of(event.uid)
        if card is None:
            return
        if card.question.type == "choice":
            card.mark_options(event.expected)
        card.finish(answer_summary(card.question, event.expected, event.skipped))
        self._update_bar()
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
        run = self.run
        if run is None:
            return
        total = len(run.lesson.steps)
        done = run.done()
        last = run.index + 1 >= total
        words = f"step {run.index + 1} of {total}"
        if done and last:
            words += " · lesson complete, NOT saved" if self.keeper.unsaved else " · lesson complete ✓"
        elif not done and run.step.kind == "question":
            words += " · answer to go on"
        self.query_one("#lesson-position", Static).update(Text(words, style="dim"))
        button = self.query_one("#lesson-next", Button)
        button.label = "Done ▸" if last and done else "Continue ▸"
        button.disabled = not done
        self.app.refresh_bindings()  # Next step and Check task come and go with the step

    def _not_saved(self, words: str) -> None:
        """From the store's thread: say so, and take back any claim that progress is stored."""
        self.post_message(ConsoleNotice(words, "bold red"))
        self.app.call_from_thread(self._update_bar)

    def _call(self, call: Call) -> None:
        """An engine call, run after the ones before it (each takes its own turn in the console's queue)."""
        self._calls.put_nowait(call)

    @work(group="lesson-calls", exclusive=True, exit_on_error=False)
    async def run_calls(self) -> None:
        """The engine's calls one at a time, in the order the learner made them."""
        while True:
            call = await self._calls.get()
            try:
                await call()
            except Exception as exc:  # a call that fails must not stop the lesson
                self._console_notice(f"The lesson could not use the kernel: {type(exc).__name__}: {exc}",
                                     "bold red")
                self._answer_again()

    def _card(self, index: int) -> QuestionCard:
        return self.query_one(f"#step-{index}", QuestionCard)

    def _index_of(self, card: QuestionCard) -> int | None:
        return int(card.id.removeprefix("step-")) if card.id else None

    def _card_of(self, uid: str) -> QuestionCard | None:
        return next((card for card in self.query(QuestionCard) if card.question.uid == uid), None)

    def _focus_step(self, index: int) -> None:
        """Answers go to the question, task code to the console; otherwise Enter continues."""
        step = self.lesson.steps[index] if self.lesson else None
        if step is None:
            return
        if step.kind == "question" and not self._card(index).done:
            if step.question.type == "task":
                # A coding exercise's starter code goes into the console once per visit, to be fixed there.
                starter = step.question.starter if step.question.uid not in self._started else ""
                self._started.add(step.question.uid)
                self.post_message(FocusConsole(starter))
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
        self.post_message(ConsoleNotice(text, style))


def answer_summary(question: Question, expected: str, skipped: bool) -> Text:
    """The line shown under a finished question: the answer, or the task's solution."""
    text = Text()
    if skipped:
        text.append("skipped · ", style="yellow")
    if question.type == "task":
        text.append("solution:\n", style="bold")
        text.append(expected.rstrip(), style="green")
    else:
        text.append("answer: ", style="bold").append(expected, style="green")
    return text
