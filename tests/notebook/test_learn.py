"""A lesson in a notebook, in process: IPython's InteractiveShell runs the cells, `gradrepl.notebook.learn`
plays lesson `accumulation` by LessonRun, and the widget's traits are read after each move. The keys come
from a real gradrepl kernel; the live side is the shell's own namespace; progress goes to the real store,
read back by `gradrepl lessons` and `gradrepl stats` in a terminal (and the other way round)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("anywidget")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from gradrepl.tutor.progress import ProgressStore  # noqa: E402
from tests.support.cli import gradrepl  # noqa: E402

RIGHT = "The sum of the gradients from both calls"
WRONG = "Only the gradient from the second call"


@pytest.fixture
def shell():
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    opened = []
    shell.user_ns["_opened"] = opened
    yield shell
    for lesson in opened:
        lesson.close()
    InteractiveShell.clear_instance()


def cell(shell, source: str):
    result = shell.run_cell(source, store_history=True)
    assert result.error_in_exec is None and result.error_before_exec is None, result
    return result


def learn(shell):
    cell(shell, "import gradrepl.notebook\nlesson = gradrepl.notebook.learn('accumulation')\n_opened.append(lesson)")
    return shell.user_ns["lesson"]


def option(lesson, text: str) -> int:
    """The number shown beside an option (the order is shuffled per visit, as in `play`)."""
    return next(shown["n"] for shown in lesson.widget.question["options"] if shown["text"] == text)


def closed(lesson) -> dict:
    return lesson.widget.steps[-1]["question"]


def to_first_question(lesson):
    assert [step["kind"] for step in lesson.widget.steps] == ["prose"]
    assert lesson.widget.can_next  # the prose is read: the Next button shows
    lesson.next()
    assert lesson.widget.steps[-1]["kind"] == "code" and not lesson.widget.steps[-1]["ran"]
    lesson.run_code()
    assert lesson.widget.steps[-1]["output"] == "tensor(7.)"  # x.grad, printed as the step's value
    lesson.next()
    assert lesson.widget.question["id"] == "accumulation/quick-check"


def test_wrong_hint_right_are_the_engines_verdicts_and_the_store_keeps_them(shell, gradrepl_home):
    lesson = learn(shell)
    widget = lesson.widget
    assert widget.title and widget.footer.startswith("no sandbox:")
    assert "<code>" in widget.steps[0]["html"]  # the prose's Markdown as HTML
    to_first_question(lesson)
    assert shell.user_ns["x"].grad.item() == 7.0  # the code step ran in the notebook's namespace

    lesson.answer(option(lesson, WRONG))
    verdict = widget.question["verdict"]
    assert verdict["correct"] is False and verdict["word"] == "wrong"
    assert "never replaces" in verdict["feedback"]  # the option's own feedback, from grading
    lesson.hint()
    assert widget.question["hints"] == [lesson.lesson.question("quick-check").hints[0]]
    assert not widget.can_next

    lesson.answer(option(lesson, RIGHT))
    assert closed(lesson)["verdict"]["correct"] is True and closed(lesson)["verdict"]["word"] == "right after a hint"
    assert closed(lesson)["answer"] == RIGHT
    assert shell.user_ns["x"].grad.item() == 7.0  # a choice runs no code: the namespace is as the cell left it
    assert widget.can_next and widget.question == {}

    store = ProgressStore.open(gradrepl_home / "progress.sqlite3")
    try:
        progress = store.lesson("accumulation", lesson.lesson.version)
        reviews = [(r.question_id, r.correct, r.hinted) for r in store.reviews()]
    finally:
        store.close()
    assert progress.current_step == 2 and 2 in progress.finished
    assert reviews == [("accumulation/quick-check", False, False)]  # the first verdict is the review


def test_a_blank_answer_is_asked_again_and_skip_reveals(shell):
    lesson = learn(shell)
    to_first_question(lesson)
    lesson.answer("  ")
    assert lesson.widget.question["said"] and not lesson.widget.question["verdict"]
    lesson.skip()
    assert closed(lesson)["closed"] and closed(lesson)["answer"] == RIGHT
    assert lesson.run.summary.skipped == 1


def test_a_task_is_checked_on_the_notebooks_namespace(shell):
    lesson = learn(shell)
    to_first_question(lesson)
    lesson.skip()
    lesson.next()  # prose, then the task: its setup ran here
    assert lesson.widget.question["id"] == "accumulation/zero-it"
    assert shell.user_ns["x"].grad.item() == 14.0

    cell(shell, "x.grad = torch.zeros_like(x.grad)")  # a new tensor: not what the task asks
    lesson.check()
    verdict = lesson.widget.question["verdict"]
    assert verdict["correct"] is False and "new tensor" in verdict["feedback"]
    held = shell.user_ns["x"].grad
    assert held.item() == 14.0  # the wrong attempt is undone: the task's start rebuilt here

    cell(shell, "x.grad.zero_()")
    lesson.check()
    assert closed(lesson)["verdict"]["correct"] is True
    assert shell.user_ns["x"].grad is held and held.item() == 0.0


# The notebook's kernel is the shell's own process: undoing an attempt rebuilds names, not torch. What the
# attempt switched process-wide is put back all the same (kernel/inspect/torch_globals.py).
def test_a_refused_attempt_in_a_notebook_leaves_torch_as_it_was(shell):
    lesson = learn(shell)
    to_first_question(lesson)
    lesson.skip()
    lesson.next()
    assert lesson.widget.question["id"] == "accumulation/zero-it"
    cell(shell, "torch.set_default_dtype(torch.float64)\ntorch.autograd.set_detect_anomaly(True)\n"
                "x.grad = torch.zeros_like(x.grad)")
    lesson.check()
    assert lesson.widget.question["verdict"]["correct"] is False
    cell(shell, "_after = (torch.get_default_dtype(), torch.is_anomaly_enabled())")
    assert shell.user_ns["_after"] == (shell.user_ns["torch"].float32, False)


def test_a_task_answered_in_the_box_and_a_button_message(shell):
    lesson = learn(shell)
    to_first_question(lesson)
    lesson.widget._handle_custom_msg({"action": "skip"}, [])  # what the Skip button sends
    assert closed(lesson)["closed"]
    lesson.widget._handle_custom_msg({"action": "next"}, [])
    lesson.answer("x.grad = None")
    assert lesson.widget.question["verdict"]["correct"] is False
    lesson.widget._handle_custom_msg({"action": "answer", "value": "x.grad.zero_()"}, [])
    assert closed(lesson)["verdict"]["correct"] is True


def test_a_code_step_run_in_a_cell_of_ones_own_counts_as_run(shell):
    lesson = learn(shell)
    lesson.next()
    code = lesson.lesson.steps[1].text
    cell(shell, code)
    assert lesson.widget.steps[-1]["ran"] and lesson.widget.can_next
    lesson.next()
    assert lesson.widget.question["id"] == "accumulation/quick-check"


def fresh_machine(tmp_path, monkeypatch) -> dict:
    """No GRADREPL_HOME: the store goes where a learner's does, under new, empty HOME and XDG folders."""
    monkeypatch.delenv("GRADREPL_HOME", raising=False)
    folders = {}
    for var in ("HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        folders[var] = tmp_path / var.lower()
        folders[var].mkdir()
        monkeypatch.setenv(var, str(folders[var]))
    return folders


def task_step(lesson) -> int:
    """The step index of the lesson's zero-it task (where a learner who answered quick-check stands)."""
    return next(i for i, step in enumerate(lesson.lesson.steps)
                if step.question is not None and step.question.uid == "accumulation/zero-it")


def terminal_progress() -> dict:
    listed = gradrepl("lessons", "--json")
    assert listed.returncode == 0, listed.stderr
    return next(row for row in json.loads(listed.stdout) if row["id"] == "accumulation")["progress"]


def test_progress_made_in_a_notebook_is_read_in_a_terminal(shell, tmp_path, monkeypatch):
    folders = fresh_machine(tmp_path, monkeypatch)
    lesson = learn(shell)
    to_first_question(lesson)
    lesson.answer(option(lesson, RIGHT))
    lesson.next()
    assert (folders["XDG_DATA_HOME"] / "gradrepl" / "progress.sqlite3").is_file()
    assert terminal_progress()["current_step"] == task_step(lesson)  # the task the notebook stands at
    stats = gradrepl("stats", "--json")
    assert stats.returncode == 0, stats.stderr
    lessons = {entry["lesson_id"]: entry for entry in json.loads(stats.stdout)["lessons"]}
    asked = {entry["question_id"]: entry for entry in lessons["accumulation"]["questions"]}
    assert asked["accumulation/quick-check"]["reviews"] == 1 and asked["accumulation/quick-check"]["right"] == 1


def test_progress_made_in_a_terminal_is_where_a_notebook_goes_on(shell, tmp_path, monkeypatch):
    fresh_machine(tmp_path, monkeypatch)
    played = gradrepl("play", "accumulation", input=f"{RIGHT}\nquit\n")
    assert played.returncode == 1, played.stdout[-2000:] + played.stderr[-2000:]  # stopped, not finished
    stood_at = terminal_progress()["current_step"]
    lesson = learn(shell)
    assert stood_at == task_step(lesson)
    assert lesson.widget.question["id"] == "accumulation/zero-it"  # where `play` stopped
    assert [step["kind"] for step in lesson.widget.steps][:4] == ["prose", "code", "question", "prose"]
    assert any(f"step {stood_at + 1} of" in notice for notice in lesson.widget.notices)
    assert shell.user_ns["x"].grad.item() == 14.0  # the steps before, replayed into this namespace
    cell(shell, "x.grad.zero_()")
    lesson.check()
    assert lesson.widget.question == {}, lesson.widget.question
    assert closed(lesson)["verdict"]["correct"] is True
    assert terminal_progress()["finished_steps"] == task_step(lesson) + 1  # every step up to the task


def test_the_panel_shows_what_a_lessons_button_ran(shell):
    from gradrepl.notebook.extension import loaded

    cell(shell, "%load_ext gradrepl")
    lesson = learn(shell)
    lesson.next()
    lesson.run_code()  # no cell ran: the panel reads the namespace after the lesson's step
    rows = {row["name"]: row for row in loaded(shell).panel.rows}
    assert rows["x"]["grad"] is not None and rows["y1"]["grad_fn"] == "AddBackward0"
    cell(shell, "%unload_ext gradrepl")


def to_task(shell, lesson_id: str, task: str, before: str = "pass"):
    """Open `lesson_id`, run the cell `before`, and go to its task `task`, skipping the questions before it."""
    cell(shell, f"import gradrepl.notebook\nlesson = gradrepl.notebook.learn({lesson_id!r})\n_opened.append(lesson)")
    lesson = shell.user_ns["lesson"]
    cell(shell, before)
    while lesson.widget.question.get("id") != task:
        if lesson.widget.question:
            lesson.skip()
        elif lesson.run.step.kind == "code" and not lesson.run.done():
            lesson.run_code()
        assert lesson.run.done() and lesson.run.index + 1 < len(lesson.lesson.steps), "the lesson has no such task"
        lesson.next()
    return lesson


KEEP_H = "h = x * 3\nh.retain_grad()\nz = h ** 2\nz.backward()\ngrad_h = h.grad"
UNFIXED_H = "h = x * 3\nz = h ** 2\nz.backward()\ngrad_h = h.grad"


# issue 22: a task whose state holds a non-leaf (h, with its grad_fn) was never judged in a notebook: its state
# was read as nothing, so every attempt, right ones too, was told the lesson's variables had changed.
def test_a_task_with_a_non_leaf_is_judged_in_a_notebook(shell):
    lesson = to_task(shell, "leaves-and-hooks", "leaves-and-hooks/keep-h-grad")
    cell(shell, KEEP_H)
    lesson.check()
    assert closed(lesson)["verdict"]["correct"] is True, closed(lesson)["verdict"]


# issue 22: in a kernel, a task starts in a fresh process, so a patch of torch made in a cell before it is gone;
# in a notebook the process stays, and the patch (here a product that keeps every gradient) let the unfixed
# starter pass. The task's start puts torch back as it was, as a fresh kernel would have it.
@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")  # the unfixed starter's own
def test_a_patch_of_torch_made_before_a_task_does_not_act_in_its_check(shell):
    patch = ("_mul = torch.Tensor.__mul__\n"
             "def _kept(self, other):\n    out = _mul(self, other)\n    if out.requires_grad:\n"
             "        out.retain_grad()\n    return out\ntorch.Tensor.__mul__ = _kept")
    lesson = to_task(shell, "leaves-and-hooks", "leaves-and-hooks/keep-h-grad", before=patch)
    cell(shell, UNFIXED_H)
    lesson.check()
    verdict = lesson.widget.question["verdict"]
    assert verdict["correct"] is False and "grad_h is None" in verdict["feedback"], verdict
    assert shell.user_ns["torch"].Tensor.__mul__ is not shell.user_ns["_kept"]
