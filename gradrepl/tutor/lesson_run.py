"""One lesson being taken, for every frontend: `play`, `play --auto`, `learn` and `lint`.

A LessonRun owns the lesson's state machine: which step the learner is on,
hints, skip, resume, answer keys (from a KeyKernel: a fresh rebuild, so nothing
the learner tries changes a key), solve-and-verify, the first verdict of each
question as a quiz review, and progress in the store. The rules live here and
nowhere else: `act` is the one transition (answer, check, hint, skip), and a
right answer or an allowed skip reveals the solution. It says what happens as
events (tutor/lesson_events.py, one `play --json` line each); frontends render them.

Two kernels may be involved. `live` is the learner's, reached through a
`session.steps.Door`: lesson cells, a question's setup and code and a task's
attempts run there, where the learner sees them, and each public live call
takes one turn of the door (in a TUI: of its step queue, so lesson code never
overlaps typed code). The door reports every step as an ordinary step result,
shown or (inside `quiet()`) rows only. The key kernel may be the same session
(headless playback) or one of its own (learn). Calls marked "keys" only use it.
"""

from __future__ import annotations

from typing import Any, Protocol

from gradrepl.protocol.messages import StepResult
from gradrepl.session.steps import Door
from gradrepl.tutor import grading, tasks
from gradrepl.tutor.answerers import Answerer, KeyAnswerer, Response, Turn  # noqa: F401 (play, lint import them here)
from gradrepl.tutor.asking import answer_text
from gradrepl.tutor.grading import Grade, Key
from gradrepl.tutor.keys import KeyKernel, needs_kernel
from gradrepl.tutor.lesson import Lesson, Question, replay_sources
from gradrepl.tutor.lesson_events import (  # noqa: F401 (frontends and tests import them from here too)
    Asked,
    CellRan,
    Emit,
    Event,
    Graded,
    Hinted,
    KeyReady,
    LessonProblem,
    Notice,
    Opened,
    Prose,
    Refused,
    Revealed,
    Summary,
)
from gradrepl.tutor.progress import LessonProgress, lesson_state
from gradrepl.tutor.replay import rebuild

ACTIONS = ("answer", "check", "hint", "skip")


class Recorder(Protocol):
    """Where progress and reviews go (tutor.keeper.ProgressKeeper); None keeps nothing (--auto, lint)."""

    def save(self, progress: LessonProgress) -> None: ...

    def review(self, question_id: str, correct: bool, hinted: bool, answer: str) -> None: ...




# -- the run ----------------------------------------------------------------------

class LessonRun:
    """One lesson, from where the learner is to its end."""

    def __init__(self, lesson: Lesson, live: Door | Any, keys: KeyKernel, emit: Emit, *,
                 progress: LessonProgress | None = None, recorder: Recorder | None = None,
                 shuffle_seed: str = "", auto: bool = False, verify: bool = False) -> None:
        self.lesson = lesson
        self.live = live if isinstance(live, Door) else Door(live)  # lint hands in its bare Session
        self.keys = keys
        self.emit = emit
        self.progress = progress or LessonProgress(lesson.id, lesson.version)
        self.recorder = recorder
        self.shuffle_seed = shuffle_seed
        self.auto = auto      # the key answers: a wrong grade is the lesson's bug, noted, and the lesson goes on
        self.verify = verify  # lint: a task's check must fail before its solution runs
        self.summary = Summary(lesson.id)
        # A finished lesson opened again is taken again from its start, in play and in learn alike: the
        # learner picked it to practise, and a run that opens on its last step has nothing left to ask
        # (the quiz is where answered questions come back). The store keeps every earlier review.
        self.again = lesson_state(self.progress, len(lesson.steps)) == "done"
        if self.again:
            self.progress.current_step = 0
            self.progress.finished.clear()
            self.progress.hints.clear()
        self.index = max(0, min(self.progress.current_step, len(lesson.steps) - 1))
        self.progress.current_step = self.index
        self._attempts = 0
        self._wrong = False       # a wrong verdict on the current question
        self._reviewed: set[str] = set()  # first verdicts already rated in this visit
        self._code_ran = False    # the current question's code ran in the live kernel (a shared key kernel)
        self._task_start: tasks.Start | None = None  # where the open task's attempts start in the live kernel
        self._last_feedback = ""
        # What a resume replays is fixed when the run opens: a prose step marked read meanwhile (learn
        # lets the learner read on while the kernel starts) was not run before, so it is not "replayed".
        self._replay_upto = self._replay_point()

    # -- where the learner is --------------------------------------------------
    @property
    def shares_kernel(self) -> bool:
        return self.keys.session in (self.live, self.live.session)

    @property
    def step(self):
        return self.lesson.steps[self.index]

    @property
    def question(self) -> Question | None:
        return self.step.question

    def done(self, index: int | None = None) -> bool:
        return (self.index if index is None else index) in self.progress.finished

    def order(self, question: Question) -> list[int]:
        return question.option_order(self.shuffle_seed)

    def hints_shown(self, index: int | None = None) -> int:
        return self.progress.hints.get(self.index if index is None else index, 0)

    # -- live: opening and stepping --------------------------------------------
    async def resume(self, start: int | None = None) -> None:
        """Live: a fresh kernel holding the lesson before the step to play (``start``, else the stored one)."""
        if start is not None:
            # Asked to start at a step, the run plays every step from it on: one finished before is taken
            # again (as a finished lesson is), never skipped; the steps before it are replayed.
            self.progress.finished[:] = [index for index in self.progress.finished if index < start]
            self.index = self.progress.current_step = start
            self._replay_upto = self._replay_point()
        upto = self._replay_upto
        self.emit(Opened(self.lesson, self.index, upto))
        async with self.live.turn():
            await self._rebuild(upto)

    def _replay_point(self) -> int:
        return self.index + 1 if self.done() else self.index

    def mark_read(self) -> None:
        """Prose counts as done once shown, a cell once it is queued to run (learn lets the learner go on)."""
        if self.step.kind != "question":
            self._finish(self.index)

    async def enter(self, index: int | None = None) -> None:
        """Live: make step ``index`` (the current one) happen: prose is read, a cell runs, a question's
        setup runs. A TUI queues this behind typed steps, so it names the step it was queued for."""
        index = self.index if index is None else index
        async with self.live.turn():
            await self._enter(index)

    async def _enter(self, index: int) -> None:
        step = self.lesson.steps[index]
        if step.kind == "prose":
            self.emit(Prose(index, step.line, step.text))
        elif step.kind == "code":
            result = await self._run_lesson_code(step.text, step.line, index, shown=True)
            self.emit(CellRan(index, step.line, step.text, result))
            if result.error:
                self._problem(f"{self.lesson.path}:{step.line + 1}: the cell raised {result.error.type}: "
                              f"{result.error.message}")
        else:
            await self._enter_question(index, step.question)
            return
        self._finish(index)

    async def _enter_question(self, index: int, question: Question) -> None:
        self.summary.questions += 1
        if self.shares_kernel and needs_kernel(question) and question.type == "task":
            await self.key(question)  # the reference's rebuild runs the setup and the solution in this kernel
        elif question.setup and question.type != "task":
            # In a shared kernel a question's key is computed when it is answered: its code run now would
            # leave the answer in the namespace, for %tensors or %at at the prompt to show.
            await self._run_lesson_code(question.setup, question.line, index, shown=False)
        if question.type == "task":
            # A task starts in a fresh kernel holding only what the lesson builds (its cells, then the task's
            # setup); and, in a shared kernel, after the solution ran there for the reference. A name, an
            # import or a patch the learner made earlier would act in the attempt unseen by the code rules,
            # which read only what runs from here.
            await self._task_start_afresh(question)
            if self.verify:
                await self._verify_start(question)
        self.emit(Asked(index, question, self.order(question)))

    async def _task_start_afresh(self, question: Question) -> None:
        with self.live.quiet():
            problems, self._task_start = await tasks.restart_at(question, self.live, self._timed_step,
                                                                self.keys.prelude)
        for problem in problems:
            self._problem(problem)

    async def _verify_start(self, question: Question) -> None:
        """lint: the task's start, with nothing typed, must not pass (else any answer does)."""
        key = await self.key(question)
        if key.reference is None or key.reference.error:
            return
        end = await tasks.read(question, self.live, self._task_start)
        if tasks.judge(question, key.reference, end, "").ok:
            self._problem(f"{question.path}:{question.line}: task {question.id!r}: the check already holds "
                          "before the solution runs, so any answer passes")

    def advance(self) -> bool:
        """Go on to the next step once this one is finished; False at the end (or when it is not)."""
        if not self.done() or self.index + 1 >= len(self.lesson.steps):
            return False
        self.index += 1
        self.progress.current_step = self.index
        self._attempts, self._wrong, self._code_ran = 0, False, False
        self._task_start = None
        self._save()
        return True

    # -- keys --------------------------------------------------------------------
    async def key(self, question: Question | None = None) -> Key:
        """Keys: a question's key, the current one's by default (computed once; lesson problems met on
        the way are emitted)."""
        question = question or self.question
        known = question.uid in self.keys.keys
        with self.live.quiet():
            key = await self.keys.key(question, self._timed_step if self.shares_kernel else None)
        if not known and self.shares_kernel and needs_kernel(question) and question is self.question:
            self._code_ran = True  # the key's rebuild ran the setup and the code in this, the live, kernel
        if not known:
            for result in key.steps:
                self._timed(result, question.line)
            for problem in key.problems:
                self._problem(problem)
            self.emit(KeyReady(question.uid, key))
        return key

    def hint(self) -> str | None:
        """The next hint of the current question (None when out); the count is kept in progress."""
        question = self.question
        text = question.hint(self.hints_shown())
        if text is not None:
            self.progress.hints[self.index] = self.hints_shown() + 1
            self._save()
        self.emit(Hinted(question.uid, self.hints_shown(), text))
        return text

    def may_skip(self) -> bool:
        """Skipping is allowed unless the lesson forbids it (then the learner is told)."""
        if not self.lesson.skippable:
            self.emit(Refused("This lesson cannot be skipped: try, or ask for a hint."))
        return self.lesson.skippable

    async def grade(self, answer: Any) -> Grade:
        """Keys: grade a non-task answer (as asking.read_answer gives it) and rate the first verdict."""
        question = self.question
        try:
            if needs_kernel(question):
                await self.key(question)  # here, not in keys.grade: its steps and problems are told
            grade = await self.keys.grade(question, answer)
        except Exception as exc:  # no verdict is not a wrong answer: say why and let the learner retry
            grade = Grade(False, f"This answer could not be graded ({type(exc).__name__}: {exc}); try again.")
            self._last_feedback = grade.feedback
            self.emit(Graded(question.uid, self._attempts, answer, self.hints_shown() > 0, grade, counts=False))
            return grade
        return self._graded(answer, grade)

    # -- the one transition ----------------------------------------------------------
    async def act(self, kind: str, value: Any = None) -> bool:
        """The learner's move on the current question, for every frontend: "answer" (``value`` as
        asking.read_answer gives it, or a task's code), "check" (a task on the namespace as the learner
        left it), "hint" or "skip". A right answer or an allowed skip reveals the solution: True when
        the question is closed. Live for tasks, skips and reveals; keys for the rest."""
        if kind not in ACTIONS:
            raise ValueError(f"unknown action {kind!r}")
        if kind == "hint":
            self.hint()
            return False
        if kind == "skip":
            if not self.may_skip():
                return False
            await self.reveal(skipped=True)
            return True
        if kind == "check":
            grade = await self.check()
        elif self.question.type == "task":
            grade = await self.attempt(str(value))
        else:
            grade = await self.grade(value)
        if grade.correct:
            await self.reveal(skipped=False)
        return grade.correct

    # -- live: tasks, reveal -------------------------------------------------------
    async def attempt(self, code: str) -> Grade:
        """Live: run one attempt at the current task and judge it against the solution; a wrong one is undone."""
        question = self.question
        key = await self.key(question)
        async with self.live.turn():
            with self.live.quiet():
                grade = await grading.grade_task(question, code, self.live, key, start=self._task_start,
                                                 on_step=self._timed_step, prelude=self.keys.prelude)
        self._task_start = grade.start
        for result in grade.steps:
            self._timed(result, question.line)
        return self._graded(code, grade)

    async def check(self) -> Grade:
        """Live: judge the current task on the namespace as the learner left it (typed at a console)."""
        question = self.question
        key = await self.key(question)
        async with self.live.turn():
            if self._task_start is None:  # opened before this run marked it (a restored TUI): start it now
                await self._task_start_afresh(question)
            with self.live.quiet():
                grade = await grading.grade_task_state(question, self.live, key, self._task_start,
                                                       self._timed_step, self.keys.prelude)
        self._task_start = grade.start
        return self._graded("(task check)", grade)

    async def reveal(self, skipped: bool) -> None:
        """Live: close the question. Its code runs where the learner sees it; a skipped task's solution runs."""
        question = self.question
        steps: list[StepResult] = []
        key = await self.key()
        async with self.live.turn():
            if question.type == "task":
                expected = question.solution.strip()
                if skipped:
                    steps = await self._solve(question)
            else:
                expected = key.text
                if self._code_ran:
                    steps = list(key.steps)
                elif question.code:
                    steps = [await self._run_lesson_code(question.code, question.line, self.index, may_fail=True)]
        if skipped:
            self.summary.skipped += 1
        self.emit(Revealed(question.uid, skipped, expected, steps))
        self._finish(self.index)

    async def _solve(self, question: Question) -> list[StepResult]:
        """The solution runs in the live kernel, from the task's start (rebuilt when the learner's attempts
        left the kernel elsewhere), and must do what it did for the reference."""
        steps = []
        key = await self.key(question)
        for _attempt in range(2):
            start = self._task_start or await tasks.begin(question, self.live)
            result = await self.live.execute(question.solution)
            steps.append(result)
            if key.reference is not None and not result.error and tasks.same_start(question, start, key.reference) \
                    is None and tasks.judge(question, key.reference, await tasks.read(question, self.live, start),
                                            question.solution).ok:
                return steps
            with self.live.quiet():
                _problems, self._task_start = await tasks.restart_at(question, self.live, self._timed_step,
                                                                     self.keys.prelude)
        self._problem(f"{question.path}:{question.line}: task {question.id!r}: the solution does not pass "
                      "its own check")
        return steps

    # -- the headless loop -----------------------------------------------------------
    async def play(self, answerer: Answerer, start: int | None = None) -> Summary:
        """Play from ``start`` (or the stored step) to the end, asking `answerer`; the summary is emitted."""
        await self.resume(start)
        while True:
            if not self.done():
                await self.enter()
                if self.question is not None and not await self._ask(answerer):
                    break
            if not self.advance():
                self.summary.finished = self.done() and self.index + 1 >= len(self.lesson.steps)
                break
        self.emit(self.summary)
        return self.summary

    async def _ask(self, answerer: Answerer) -> bool:
        """Ask the current question until it is closed; False when the learner stops."""
        question = self.question
        key = await self.key() if isinstance(answerer, KeyAnswerer) else None
        while True:
            response = await answerer.respond(Turn(question, self.order(question), key, self._attempts + 1,
                                                   self.hints_shown()))
            if response.kind == "quit":
                return False
            if await self.act(response.kind, response.value):
                return True
            if self.auto and response.kind == "answer":
                # the key failed its own question: note it and go on
                self.summary.failed[question.uid] = self._last_feedback
                self._finish(self.index)
                return True

    # -- inner workings --------------------------------------------------------------
    def _graded(self, answer: Any, grade: Grade) -> Grade:
        question = self.question
        self._last_feedback = grade.feedback
        if grade.retry:  # an answer in the wrong form is not an attempt: it is asked again, not rated
            self.summary.not_read += 1
            self.emit(Graded(question.uid, self._attempts, answer, self.hints_shown() > 0, grade, counts=False))
            return grade
        self._attempts += 1
        hinted = self.hints_shown() > 0
        if grade.correct and not self.done():
            if self._wrong or hinted:
                self.summary.after_help += 1
            else:
                self.summary.first_try += 1
        self._wrong = self._wrong or not grade.correct
        if self.recorder is not None and question.uid not in self._reviewed:
            self._reviewed.add(question.uid)
            self.recorder.review(question.uid, grade.correct, hinted, answer_text(question, answer))
        self.emit(Graded(question.uid, self._attempts, answer, hinted, grade))
        return grade

    async def _run_lesson_code(self, code: str, line: int, index: int, *, shown: bool = True,
                               may_fail: bool = False) -> StepResult:
        """Lesson code in the live kernel (inside a turn). It never fails in the lesson's own namespace,
        so a failure other than an interrupt or a lost kernel means the learner changed it: rebuild and
        run it again."""
        result = await self._execute(code, shown)
        self._timed(result, line)
        if result.error is None or may_fail or result.kernel_event or result.error.type == "KeyboardInterrupt":
            return result
        self.emit(Notice("This step needs the lesson's own variables: rebuilding them and running it again."))
        await self._rebuild(index)
        result = await self._execute(code, shown)
        self._timed(result, line)
        return result

    async def _execute(self, code: str, shown: bool) -> StepResult:
        if shown:
            return await self.live.execute(code)
        with self.live.quiet():
            return await self.live.execute(code)

    async def _rebuild(self, upto: int) -> None:
        with self.live.quiet():
            problems = await rebuild(self.live, replay_sources(self.lesson, upto), self.lesson.path,
                                     self.keys.prelude, self._timed_step)
        for problem in problems:
            self._problem(problem)

    def _timed_step(self, result: StepResult) -> None:
        self._timed(result, 0)

    def _timed(self, result: StepResult, line: int) -> None:
        if result.duration_ms > self.summary.slowest_ms and line:
            self.summary.slowest_ms, self.summary.slowest_line = result.duration_ms, line
        if result.kernel_event:
            self._problem(f"{self.lesson.path}: the kernel was replaced: {result.kernel_event}")

    def _problem(self, message: str) -> None:
        if message not in self.summary.problems:
            self.summary.problems.append(message)
            self.emit(LessonProblem(message))

    def _finish(self, index: int) -> None:
        if index not in self.progress.finished:
            self.progress.finished.append(index)
        self._save()

    def _save(self) -> None:
        # A finished lesson taken again is practice: the store keeps it done (and where it was) whatever this
        # run reaches, so quitting half-way never turns a done lesson back into a started one.
        if self.recorder is not None and not self.again:
            self.recorder.save(LessonProgress(self.progress.lesson_id, self.progress.version,
                                              self.progress.current_step, list(self.progress.finished),
                                              dict(self.progress.hints)))


