"""A lesson in a notebook, level 2: nbclient runs a notebook in a real ipykernel (its own event loop on the
main thread, the widget displayed through a comm, store_widget_state=True, no browser). Its cells call
`gradrepl.notebook.learn` and answer through the widget's API, a task is solved in a cell of the learner's
own; the saved widget state holds the lesson as the learner saw it, and a terminal reads the progress."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import gradrepl

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("anywidget")

CELLS = [
    "import gradrepl.notebook\nlesson = gradrepl.notebook.learn('accumulation')",
    "lesson.next()\nlesson.run_code()\nlesson.next()",
    "shown = {o['text']: o['n'] for o in lesson.widget.question['options']}\n"
    "lesson.answer(shown['Only the gradient from the second call'])",
    "lesson.hint()",
    "lesson.answer(shown['The sum of the gradients from both calls'])\nlesson.next()",
    "x.grad.zero_()",  # the task, solved in a cell of the learner's own
    "lesson.check()",
    "lesson.next()\nlesson.run_code()\nlesson.next()\nlesson.skip()\nlesson.next()",
]


def lesson_state(states: dict) -> dict:
    lessons = [state for state in states.values() if "steps" in state and "question" in state]
    assert len(lessons) == 1, lessons
    return lessons[0]


@pytest.mark.timeout(600)
def test_a_notebook_plays_a_lesson_through_the_widget(tmp_path, gradrepl_home):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    client = nbclient.NotebookClient(notebook, timeout=240, kernel_name="python3", store_widget_state=True,
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    for cell in notebook.cells:
        errors = [output for output in cell.outputs if output.output_type == "error"]
        assert not errors, (cell.source, errors)

    widgets = notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    state = lesson_state({key: value["state"] for key, value in widgets.items()})
    shown = [output["data"]["application/vnd.jupyter.widget-view+json"]["model_id"]
             for output in notebook.cells[0].outputs if "application/vnd.jupyter.widget-view+json" in
             output.get("data", {})]
    assert len(shown) == 1 and widgets[shown[0]]["state"] == state  # learn() displayed the widget under its cell

    assert state["footer"].startswith("no sandbox:")
    assert state["finished"].startswith("Lesson finished: 2 of 3")
    questions = {step["question"]["id"]: step["question"] for step in state["steps"] if step["kind"] == "question"}
    assert questions["accumulation/quick-check"]["verdict"]["word"] == "right after a hint"
    assert len(questions["accumulation/quick-check"]["hints"]) == 1
    assert questions["accumulation/zero-it"]["verdict"]["correct"] is True
    assert questions["accumulation/zero-grad-none"]["closed"] and not questions["accumulation/zero-grad-none"]["verdict"]
    code = [step for step in state["steps"] if step["kind"] == "code"]
    assert [step["output"] for step in code] == ["tensor(7.)", "tensor([3., 3.])"]

    listed = gradrepl("lessons", "--json")
    progress = next(row for row in json.loads(listed.stdout) if row["id"] == "accumulation")["progress"]
    assert progress["state"] == "done", progress
    stats = json.loads(gradrepl("stats", "--json").stdout)
    asked = {entry["question_id"]: entry for lesson in stats["lessons"] for entry in lesson["questions"]}
    assert (asked["accumulation/quick-check"]["reviews"], asked["accumulation/quick-check"]["right"]) == (1, 0)
    assert (asked["accumulation/zero-it"]["reviews"], asked["accumulation/zero-it"]["right"]) == (1, 1)
