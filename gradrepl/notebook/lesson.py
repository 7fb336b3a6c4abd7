"""`gradrepl.notebook.learn("accumulation")`: a lesson played in a notebook, by the one lesson engine.

The engine is `play`'s and the TUI pane's: tutor/lesson_run.py's LessonRun, its one transition
`act` (answer, check, hint, skip), its keys computed in a gradrepl kernel of their own (a KeyKernel
over a fresh, sandboxed Session, as `learn` has) and its progress in the same store (a
ProgressKeeper under GRADREPL_HOME, else the platform's user data folder), so progress is one
whether the learner learns in a terminal or here. Only the face differs: the live side is the
notebook's own namespace (namespace_kernel.py), and the engine's events become a widget's traits
(lesson_widget.py) with the views' words. Each method below is what a button of the widget does;
a cell may call them too (`lesson.answer(1)`, `lesson.check()`), and tests do.

The engine runs on a loop of its own (loop_thread.py); the learner's code runs on the main thread.
A code step runs when the learner presses Run, or when they run the step's code in a cell of their
own (`lesson.insert()` puts it in the next cell): the cell's source is the step's, so it counts as run.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import secrets
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from IPython.display import display
from markdown_it import MarkdownIt

from gradrepl.client.options import KernelOptions
from gradrepl.notebook.extension import has_widget_frontend, loaded, unregister
from gradrepl.notebook.lesson_widget import LessonWidget
from gradrepl.notebook.loop_thread import LoopThread
from gradrepl.notebook.namespace_kernel import NamespaceKernel
from gradrepl.session.steps import Door
from gradrepl.tutor import lesson_events as events
from gradrepl.tutor.asking import (ANSWER_WORDS, FIELD_PLACEHOLDERS, PLACEHOLDERS, field_label, read_fields,
                                   read_typed)
from gradrepl.tutor.keeper import ProgressKeeper
from gradrepl.tutor.language import learner_language
from gradrepl.tutor.lesson import Lesson, Question, load_course, load_lesson
from gradrepl.tutor.lesson_parts import LessonParts
from gradrepl.tutor.lesson_run import LessonRun
from gradrepl.tutor.progress import LessonProgress
from gradrepl.tutor.quiz import result_word
from gradrepl.views.steps import step_text

_MARKDOWN = MarkdownIt("commonmark", {"html": False})  # lesson prose as HTML; raw HTML in it is shown as text
TASK_HOW = ("fix the code in the box and press Check, or fix it in a cell of your own (lesson.insert() puts it "
            "in the next cell), run that cell, then press Check my namespace")
CODE_HOW = "runs in this notebook; or lesson.insert() puts it in the next cell for you to run"


def learn(lesson: str, *, lessons: str | None = None, shell=None, options: KernelOptions | None = None,
          shuffle_seed: str | None = None) -> NotebookLesson:
    """Play lesson ``lesson`` (an id, or a lesson file) here; it goes on where you stopped, in a terminal too."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError("gradrepl.notebook.learn runs in IPython or a notebook; in a terminal: gradrepl play")
    played = NotebookLesson(shell, find_lesson(lesson, lessons), options or KernelOptions(),
                            secrets.token_hex(4) if shuffle_seed is None else shuffle_seed)
    played.open()
    return played


def find_lesson(name: str, folder: str | None = None) -> Lesson:
    """A lesson by path (a LessonFormatError lists its problems) or by id (an unknown one names those there are)."""
    if name.endswith(".md") or Path(name).is_file():
        return load_lesson(name)
    course = load_course(folder)
    if course.get(name) is None:
        raise ValueError(f"no lesson {name!r} (lessons: {', '.join(each.id for each in course.lessons)})")
    return course.get(name)


class _Waited:
    """The keeper's writes, waited for after each move: the store holds what the widget shows, or the
    widget says what was not saved."""

    def __init__(self, keeper: ProgressKeeper) -> None:
        self.keeper = keeper
        self.pending = []

    def save(self, progress: LessonProgress) -> None:
        self.pending.append(self.keeper.save(progress))

    def review(self, question_id: str, correct: bool, hinted: bool, answer: str) -> None:
        self.pending.append(self.keeper.review(question_id, correct, hinted, answer))

    def wait(self) -> None:
        pending, self.pending = self.pending, []
        for write in pending:
            write.result()  # a failure is among the keeper's notices


class NotebookLesson:
    """One lesson being played in a notebook: the engine's run, the notebook's namespace, the widget."""

    def __init__(self, shell, lesson: Lesson, options: KernelOptions, shuffle_seed: str) -> None:
        self.shell = shell
        self.lesson = lesson
        self.loop = LoopThread()
        self.kernel = NamespaceKernel(shell, self.loop, on_ran=self._panel_reads)
        self.widget = LessonWidget(lesson_id=lesson.id, title=lesson.title_in(learner_language()))
        self.widget.on_action = self._action
        self._events: list[events.Event] = []
        self._shown_in: int | None = None
        self._warming: Future | None = None
        self.parts, progress = self.loop.run(self._build(options))
        self.recorder = _Waited(self.parts.keeper)
        self.run = LessonRun(lesson, self.parts.door, self.parts.keys, self._events.append, progress=progress,
                             recorder=self.recorder, shuffle_seed=shuffle_seed)
        self._in_cell = False  # a cell began after the lesson opened (the one that opened it is no attempt)
        shell.events.register("pre_run_cell", self._cell_begins)
        shell.events.register("post_run_cell", self._cell_ran)

    async def _build(self, options: KernelOptions):
        parts = LessonParts.build(Door(self.kernel), options)
        return parts, await parts.keeper.lesson(self.lesson.id, self.lesson.version)

    # -- opening ------------------------------------------------------------------
    def open(self) -> None:
        """Replay the steps before the stored one into the namespace, show them, and enter the current one."""
        run = self.run
        notices = []
        if run.progress.notice:
            notices.append(run.progress.notice)
        if run.again:
            notices.append("You finished this lesson before: taking it again from the start.")
        elif run.index:
            notices.append(f"Going on at step {run.index + 1} of {len(self.lesson.steps)}, where you stopped.")
        self.widget.notices = notices
        self.widget.steps = [self._step_shown(index, done=True) for index in range(run.index)]
        if any(question.computed for question in self.lesson.questions):
            self._warming = self.loop.start(self.parts.keys.start())  # torch imports there while the learner reads
        self._drive(run.resume(), "replaying the lesson so far")
        self.widget.steps = [*self.widget.steps, self._step_shown(run.index, done=run.done())]
        if not run.done() and run.step.kind != "code":  # a code step waits for Run (or a cell), as after Next
            self._enter()
        self._update_next()
        self._show()

    def _show(self) -> None:
        if has_widget_frontend(self.shell):
            display(self.widget)
            self._shown_in = self.shell.execution_count
        else:
            print(f"gradrepl: no widget frontend here (terminal IPython): `gradrepl play {self.lesson.id}` plays this "
                  "lesson in a terminal, with the same progress")

    def _ipython_display_(self) -> None:
        if self._shown_in != self.shell.execution_count:
            self._show()

    def __repr__(self) -> str:
        return f"<gradrepl lesson {self.lesson.id!r}: step {self.run.index + 1} of {len(self.lesson.steps)}>"

    # -- what the buttons do ----------------------------------------------------------
    def answer(self, value: Any) -> None:
        """Check an answer: an option's number as shown (or its text), a value, {field: text}, or a task's code."""
        question = self._open_question()
        if question is None:
            return
        typed = read_fields(question, value if isinstance(value, dict) else {}) \
            if question.type == "predict_state" else read_typed(question, str(value), self.run.order(question),
                                                                ("skip",))
        if typed.kind == "again":
            self._set_question(said=typed.words)
            return
        self._act(typed.kind, typed.value)

    def check(self) -> None:
        """A task: judge this notebook's namespace as your cells left it."""
        question = self._open_question()
        if question is not None and question.type == "task":
            self._act("check")
        elif question is not None:
            self._set_question(said="Only a task is checked on the namespace: answer in the box.")

    def hint(self) -> None:
        if self._open_question() is not None:
            self._act("hint")

    def skip(self) -> None:
        if self._open_question() is not None:
            self._act("skip")

    def run_code(self) -> None:
        """Run the current code step in this notebook's namespace."""
        if self.run.step.kind == "code" and not self.run.done():
            self._drive(self.run.enter(), "running the step")

    def next(self) -> None:
        """Go on: prose is shown until a code step or a question (its setup runs) comes, or the end."""
        if not self.run.done():
            self._notice("Finish this step first: run it, answer it, or skip it.")
            return
        while self.run.advance():
            self.widget.steps = [*self.widget.steps, self._step_shown(self.run.index, done=False)]
            if self.run.step.kind == "code":
                break
            self._enter()
            if self.run.step.kind == "question":
                break
        self._update_next()

    def insert(self) -> None:
        """Put the current code step (or the open task's code) into the next cell, to run it there."""
        step = self.run.step
        text = step.text if step.kind == "code" else (step.question.starter if step.question else "")
        if text and not self.run.done():
            self.shell.set_next_input(text.rstrip("\n"), replace=False)

    def close(self) -> None:
        """Stop the key kernel and the store's thread (a notebook closing does this for you)."""
        unregister(self.shell, pre_run_cell=self._cell_begins, post_run_cell=self._cell_ran)
        if self.loop.closed:
            return
        self.loop.run(self._close())
        self.loop.close()

    async def _close(self) -> None:
        if self._warming is not None:  # a key kernel still starting is closed once started
            with contextlib.suppress(Exception):
                await asyncio.wrap_future(self._warming)
        await self.parts.close()

    # -- the engine ---------------------------------------------------------------
    def _enter(self) -> None:
        words = "setting up the question" if self.run.step.kind == "question" else "running the step"
        self._drive(self.run.enter(), words)

    def _act(self, kind: str, value: Any = None) -> None:
        words = {"answer": "checking", "check": "checking the namespace", "skip": "showing the answer"}.get(kind, "")
        self._drive(self.run.act(kind, value), words)

    def _drive(self, coroutine, busy: str) -> None:
        """One engine call to its end (the learner's code runs here meanwhile); then its events are shown."""
        self.widget.busy = busy
        try:
            self.loop.run(coroutine)
        except Exception as exc:  # the engine's failure is no verdict: said, and the learner may try again
            self._events.append(events.Notice(f"The lesson could not go on ({type(exc).__name__}: {exc})."))
        finally:
            self.recorder.wait()
            self.widget.busy = ""
            self._apply()
            self._update_next()

    def _action(self, action: str, value: Any) -> None:
        """A button of the widget."""
        moves = {"answer": lambda: self.answer(value), "check": self.check, "hint": self.hint, "skip": self.skip,
                 "next": self.next, "run": self.run_code}
        if action in moves:
            moves[action]()

    def _cell_begins(self, _info) -> None:
        self._in_cell = True

    def _cell_ran(self, result) -> None:
        """A cell of the learner's: a task's `check` reads it as their attempt; the current code step's own
        code run in a cell counts as run."""
        began, self._in_cell = self._in_cell, False
        source = getattr(result.info, "raw_cell", "") or ""
        if not began or self.loop.busy or self._drives_me(source):
            return
        self.kernel.noted(source)
        step = self.run.step
        if step.kind == "code" and not self.run.done() and result.success \
                and source.strip() == step.text.strip():
            self.run.mark_read()
            self.recorder.wait()
            self._set_step(self.run.index, ran=True, output=f"(ran in cell [{result.execution_count}])", done=True)
            self._update_next()

    def _drives_me(self, source: str) -> bool:
        """A cell that only calls this lesson's methods (lesson.hint()) is no attempt at a task."""
        mine = {name for name, value in self.shell.user_ns.items() if value is self}
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return False
        return bool(tree.body) and all(
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute) and isinstance(node.value.func.value, ast.Name)
            and node.value.func.value.id in mine for node in tree.body)

    def _panel_reads(self, source: str) -> None:
        extension = loaded(self.shell)
        if extension is not None:
            extension.read_now(source)

    # -- events into traits ---------------------------------------------------------
    def _apply(self) -> None:
        happened, self._events[:] = list(self._events), []
        for event in happened:
            handler = getattr(self, f"_on_{type(event).__name__.lower()}", None)
            if handler is not None:
                handler(event)
        for notice in self.parts.keeper.take_notices():
            self._notice(notice)

    def _on_opened(self, event: events.Opened) -> None:
        if event.replayed:
            self._notice(f"The steps before step {event.replayed + 1} ran again in this notebook, so its names "
                         "are the lesson's (your own other variables stay).")

    def _on_prose(self, event: events.Prose) -> None:
        self._set_step(event.step, done=True)

    def _on_cellran(self, event: events.CellRan) -> None:
        self._set_step(event.step, ran=True, output=step_text(event.result, tables=False), done=True)

    def _on_asked(self, event: events.Asked) -> None:
        self.widget.question = question_shown(event.question, event.order, self.lesson.skippable,
                                              self.run.hints_shown())

    def _on_hinted(self, event: events.Hinted) -> None:
        question = self.run.question
        self._set_question(hints=question.hints[:event.n],
                           said="" if event.text else "No more hints: Skip shows the answer.")

    def _on_refused(self, event: events.Refused) -> None:
        self._set_question(said=event.text)

    def _on_notice(self, event: events.Notice) -> None:
        self._notice(event.text)

    def _on_lessonproblem(self, event: events.LessonProblem) -> None:
        self._notice(f"lesson problem: {event.message}")

    def _on_graded(self, event: events.Graded) -> None:
        if not self.widget.question:
            return
        grade = event.grade
        word = "try again" if grade.retry else result_word(grade.correct, event.hinted)
        question = self.run.question
        fields = "  ".join(f"{'✓' if ok else '✗'} {field_label(question, name)}" for name, ok in grade.fields.items())
        self._set_question(verdict={"correct": grade.correct, "word": word, "feedback": grade.feedback,
                                    "fields": fields}, said="", output=_outputs(grade.steps))

    def _on_revealed(self, event: events.Revealed) -> None:
        shown = self.widget.question
        output = "\n".join(text for text in (shown.get("output", ""), _outputs(event.steps)) if text)
        closed = {**shown, "closed": True, "answer": event.expected.strip(), "output": output, "said": ""}
        with self.widget.hold_sync():  # one message: the page never draws the question both open and closed
            self._set_step(self.run.index, done=True, question=closed)  # drawn with the steps from now on
            self.widget.question = {}

    # -- traits -------------------------------------------------------------------
    def _open_question(self) -> Question | None:
        if self.run.question is None or self.run.done():
            self._notice("There is no open question now.")
            return None
        return self.run.question

    def _step_shown(self, index: int, done: bool) -> dict:
        step = self.lesson.steps[index]
        shown = {"index": index, "kind": step.kind, "done": done, "ran": done, "output": "", "code": "", "html": ""}
        if step.kind == "prose":
            shown["html"] = _MARKDOWN.render(step.text)
        elif step.kind == "code":
            shown.update(code=step.text, how=CODE_HOW)
        else:
            shown["html"] = _MARKDOWN.render(step.question.prompt)
        return shown

    def _set_step(self, index: int, **changes) -> None:
        steps = [dict(step) for step in self.widget.steps]
        for step in steps:
            if step["index"] == index:
                step.update(changes)
                break
        else:
            steps.append({**self._step_shown(index, done=False), **changes})
        self.widget.steps = steps

    def _set_question(self, **changes) -> None:
        if self.widget.question:
            self.widget.question = {**self.widget.question, **changes}

    def _notice(self, text: str) -> None:
        self.widget.notices = [*self.widget.notices, text]

    def _update_next(self) -> None:
        run = self.run
        at_end = run.done() and run.index + 1 >= len(self.lesson.steps)
        self.widget.can_next = run.done() and not at_end
        if at_end:
            summary = run.summary
            self.widget.finished = (f"Lesson finished: {summary.correct} of {summary.questions} question(s) right "
                                    f"({summary.first_try} at the first try), {summary.skipped} skipped.")


def question_shown(question: Question, order: list[int], skippable: bool, hints: int) -> dict:
    """A question as the widget draws it: every word from the lesson and tutor/asking.py."""
    return {
        "id": question.uid, "type": question.type, "prompt": _MARKDOWN.render(question.prompt),
        "code": question.code, "given": question.given, "starter": question.starter,
        "options": [{"n": n, "text": question.options[index].text} for n, index in enumerate(order, 1)],
        "fields": [{"name": name, "label": field_label(question, name), "placeholder": FIELD_PLACEHOLDERS.get(name, "")}
                   for name in (question.fields if question.type == "predict_state" else ())],
        "placeholder": PLACEHOLDERS.get(question.type, ""),
        "how": TASK_HOW if question.type == "task" else f"answer with {ANSWER_WORDS[question.type]}",
        "hints": question.hints[:hints], "verdict": {}, "output": "", "said": "", "answer": "", "closed": False,
        "skippable": skippable,
    }


def _outputs(steps) -> str:
    return "\n".join(text for text in (step_text(step, tables=False) for step in steps) if text)
