"""One set of asking rules: what is typed means the same in play, the plain quiz, the quiz TUI and learn."""

from __future__ import annotations

import io
import sys

from textual.app import App
from textual.widgets import Input

from gradrepl.commands.play import TerminalAnswerer
from gradrepl.plain.quiz import _read_answer
from gradrepl.tui.question import QuestionCard
from gradrepl.tutor.asking import read_choice, read_fields, read_typed
from gradrepl.tutor.grading import Key
from gradrepl.tutor.lesson import Option, Question
from gradrepl.tutor.lesson_run import Turn
from gradrepl.tutor.quiz import QuizRun

STATE = Question(id="state", lesson_id="t", type="predict_state", prompt="z's state?", path="t.md", line=1,
                 ask="z", fields=("requires_grad", "is_leaf"), hints=["z comes from an operation."])
PREDICT = Question(id="value", lesson_id="t", type="predict", prompt="y?", path="t.md", line=1, ask="y")
CHOICE = Question(id="pick", lesson_id="t", type="choice", prompt="Which?", path="t.md", line=1,
                  options=[Option("first", correct=True), Option("second"), Option("third")])
ORDER = [2, 0, 1]  # the lesson's third option is shown first


def test_the_rules():
    assert read_typed(PREDICT, "  7 ", ORDER).value == "7"
    assert read_typed(PREDICT, "   ", ORDER).kind == "again"
    assert read_typed(PREDICT, "?", ORDER).kind == read_typed(PREDICT, "HINT", ORDER).kind == "hint"
    assert read_typed(PREDICT, "skip", ORDER).value == "skip"  # a word only where a frontend offers it
    assert read_typed(PREDICT, "skip", ORDER, ("skip",)).kind == "skip"
    # A number counts in the order shown; the option's text works in any order.
    assert [read_choice(CHOICE, typed, ORDER).value for typed in ("1", "2.", "3)", " Second ")] == [2, 0, 1, 1]
    assert read_choice(CHOICE, "4", ORDER).kind == "again" and read_choice(CHOICE, "b", ORDER).kind == "again"
    assert read_fields(STATE, {"requires_grad": "True", "is_leaf": " "}).words.startswith("Give every field")


def _play_reads(question: Question, lines: list[str], monkeypatch) -> object:
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    answerer = TerminalAnswerer(io.StringIO())
    return answerer.respond(Turn(question, ORDER, Key(question.uid, ""), 1, 0))


class _Reader:
    def __init__(self, lines: list[str]):
        self.lines = list(lines)

    async def read(self, prompt: str) -> str:
        return self.lines.pop(0)


async def _plain_quiz_reads(question: Question, lines: list[str]) -> object:
    run = QuizRun([question], spaced=None, grade=None)
    run.order = lambda q: ORDER
    run.next_question()
    said: list[str] = []
    return await _read_answer(run, question, _Reader(lines), said.append), said


class _Holder(App):
    def __init__(self, widget):
        super().__init__()
        self.widget = widget

    def compose(self):
        yield self.widget


async def _widget_reads(widget, values: dict[str, str]):
    async with _Holder(widget).run_test() as pilot:
        for selector, value in values.items():
            widget.query_one(selector, Input).value = value
        await pilot.pause()
        return widget.answer()


async def test_one_answer_is_read_the_same_by_all_four_frontends(monkeypatch):
    typed = {"requires_grad": " True", "is_leaf": "false "}
    expected = {"requires_grad": "True", "is_leaf": "false"}

    # play: a blank field, then each field again; the plain quiz: a hint word and a blank on the way.
    play = await _play_reads(STATE, ["True", "", *typed.values()], monkeypatch)
    assert (play.kind, play.value) == ("answer", expected)
    plain, said = await _plain_quiz_reads(STATE, ["?", typed["requires_grad"], "", typed["is_leaf"]])
    assert plain == expected and "Hint: z comes from an operation." in said

    # learn and the quiz TUI show the same card, set up as each shows it.
    fields = {f"#field-{name}": value for name, value in typed.items()}
    lesson = await _widget_reads(QuestionCard(STATE, ORDER, skippable=True, task_in_console=True), fields)
    quiz = await _widget_reads(QuestionCard(STATE, ORDER, title="a lesson"), fields)
    assert lesson.value == expected and quiz.value == expected

    # A blank field is not an answer anywhere: nothing is graded.
    blank = {"#field-requires_grad": "True", "#field-is_leaf": "  "}
    assert (await _widget_reads(QuestionCard(STATE, ORDER, skippable=True, task_in_console=True), blank)).kind \
        == "again"
    assert (await _widget_reads(QuestionCard(STATE, ORDER), blank)).kind == "again"

    # A choice typed as the number shown: the same option in play and the plain quiz.
    assert (await _play_reads(CHOICE, ["1"], monkeypatch)).value == 2
    assert (await _plain_quiz_reads(CHOICE, ["1"]))[0] == 2
