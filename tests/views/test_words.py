"""The words a learner reads come from one place (gradrepl/views/): the same node, cause and number
read the same in %graph, the TUI's graph tree and details, grading, `run` and `play`."""

from __future__ import annotations

import subprocess

from tests.support.paths import GRADREPL, ROOT
from tests.support.tui import Recorder, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.messages import DetailsLoaded, StepFinished
from gradrepl.tui.tensors.graph_tree import GraphTree
from gradrepl.views.graph import graph_text
from gradrepl.tutor.grading import compute_key, grade
from gradrepl.tutor.lesson import parse_lesson
from tests.support.tui import run_steps

TREE_LEAD = " │├└─"


async def test_the_graph_tree_and_percent_graph_word_every_node_alike(tmp_path):
    """A real kernel behind the TUI: each label of the details' graph tree is a line of %graph's text."""
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "history.jsonl"))
    async with app.run_test(size=(140, 45), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "w = torch.ones(2, 3, requires_grad=True)", "y = (w * w).sum()",
                        "%graph y")
        drawn = recorder.of(StepFinished)[-1].result.display
        await pilot.press("f2")
        await pilot.press("down", "enter")  # the second row is y
        await until(pilot, lambda: any(m.graph for m in recorder.of(DetailsLoaded)), "y's graph")
        labels, stack = [], list(app.query_one(GraphTree).root.children)
        while stack:
            node = stack.pop()
            labels.append(node.label.plain)
            stack.extend(node.children)
    assert "AccumulateGrad  → 2×3  leaf w" in labels, labels
    # %graph draws boxes and arrows here (it fits): each node's op in a box, its saved words beside it
    assert "│ MulBackward0 │  saved " in drawn and "holds 24 B" in drawn, drawn
    for label in labels:
        words = label if label.startswith("saved") else label.split("  ")[0].removeprefix("↺ ").removesuffix(" (shown above)")
        assert words in drawn, (words, drawn)
    # the tree, %graph's fallback when the picture is too wide, is worded as the details' tree
    lines = {line.lstrip(TREE_LEAD) for line in graph_text(recorder.of(DetailsLoaded)[-1].graph["graph"]).splitlines()}
    assert not set(labels) - lines, sorted(set(labels) - lines)


STATE = '''---
id: why
title: Why
---

```question
id: state-c
type: predict_state
prompt: State of c?
setup: |
  c = torch.ones(2) * 3
ask: c
```
'''


async def test_grading_says_why_grad_is_none_as_the_details_view_does(session):
    """An untracked tensor's .grad is None because nothing tracks it (not "until a backward reaches it")."""
    question = parse_lesson(STATE, "why.md").question("state-c")
    key = await compute_key(question, session)
    graded = await grade(question, {"requires_grad": "False", "is_leaf": "True", "grad_fn": "None",
                                    "grad": "tensor([1., 1.])"}, session, key)
    assert not graded.correct and graded.fields["grad"] is False
    assert ".grad is None: c.requires_grad is False, so autograd does not track it" in graded.feedback, \
        graded.feedback


def test_run_prints_a_whole_number_whole_as_the_check_table_does(tmp_path):
    script = tmp_path / "big.py"
    script.write_text("big = torch.tensor(12345.0)\n")
    done = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.lstrip("* ").startswith("big"))
    assert "12345" in row.split() and "1.234e+04" not in row, row


HELP_LESSON = '''---
id: helped
title: Helped
---

Some prose.

```python
help(len)
x = torch.tensor(2.0, requires_grad=True)
```

```question
id: q
type: predict
prompt: What is 1 + 1?
ask: 1 + 1
hints:
  - one
  - two
```
'''


def test_play_prints_a_lesson_cells_help_page_through_the_one_step_renderer(tmp_path):
    """A lesson cell that calls help() once ended `play` with 'dict' object has no attribute 'rstrip'."""
    (tmp_path / "01-helped.md").write_text(HELP_LESSON, encoding="utf-8")
    done = subprocess.run([*GRADREPL, "play", "helped", "--lessons", str(tmp_path)], input="2\n",
                          capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Return the number of items in a container" in done.stdout, done.stdout
    assert "[right]" in done.stdout


async def test_plain_prints_graph_diagnoses_and_accumulation_in_the_views_words(capsys, gradrepl_home):
    """--plain's path (prompt_toolkit on a pipe, a real kernel): %graph, torch's warning with the words of
    views/why.py under it, and an accumulation note whose numbers are written as the tables write them."""
    from gradrepl.session import Session
    from tests.support.plain import typed_ahead

    status = await typed_ahead(Session(), ["w = torch.ones(2, 3, requires_grad=True)", "y = (w * 2).sum()",
                                           "%graph y", "y.grad", "x = torch.tensor(2.0, requires_grad=True)",
                                           "(x * 7).backward()", "(x * 7).backward()",
                                           "torch.ones(2).sum().backward()"])
    out = capsys.readouterr().out
    assert status == 0
    assert "│ MulBackward0 │" in out and "│ leaf w         │" in out and "│ → 2×3          │" in out, out
    assert "The .grad attribute of a Tensor that is not a leaf" in out  # torch's own words, then ours
    assert "This tensor is not a leaf, so .grad stays None unless its .retain_grad() was called" in out, out
    assert "x.grad already held 7 before this backward, and now holds 14" in out, out
    assert "why: backward() was called on a tensor with no graph behind it" in out, out


def test_run_json_carries_the_diagnosis_code_and_its_words(tmp_path):
    import json

    script = tmp_path / "freed.py"
    # the second backward freed the graph, not the first (which retained it): the words must not say "first"
    script.write_text("x = torch.ones(3, requires_grad=True)\ny = (x * x).sum()\n"
                      "y.backward(retain_graph=True)\ny.backward()\ny.backward()\n")
    done = subprocess.run([*GRADREPL, "run", "--json", str(script)], capture_output=True, text=True, timeout=180,
                          cwd=ROOT)
    steps = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    failed = next(step for step in steps if step.get("type") == "step" and step.get("error"))
    assert failed["error"]["diagnosis"] == "graph_freed", failed["error"]
    assert failed["error"]["explanation"].startswith("The graph was freed"), failed["error"]
    # of this graph, not of every graph: (x + 1).sum() saves nothing and can be walked twice (retain-graph)
    assert "this graph" in failed["error"]["explanation"], failed["error"]
    assert "the same graph cannot be walked twice" not in failed["error"]["explanation"], failed["error"]
    assert "the first backward() freed" not in failed["error"]["explanation"], failed["error"]


async def test_details_word_a_leaf_a_freed_graph_and_a_check_as_percent_magics_do(tmp_path):
    """The details view (Pilot, a real kernel) words the kernel's data with the views %graph and %check use."""
    from gradrepl.views.graph import FREED

    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "history.jsonl"))
    async with app.run_test(size=(140, 45), message_hook=recorder) as pilot:
        await run_steps(pilot, recorder, "x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x",
                        "y.backward()", "%check y")
        checked = recorder.of(StepFinished)[-1].result.display
        await pilot.press("f2")
        await pilot.press("enter")  # the first row is x: a leaf, no graph to draw
        await until(pilot, lambda: any(m.graph for m in recorder.of(DetailsLoaded)), "x's graph")
        leaf_note = str(app.query_one("#details-graph-note").render())
        await pilot.press("down", "enter")
        await until(pilot, lambda: any(m.check for m in recorder.of(DetailsLoaded) if m.name == "y"), "y's check")
        freed_note = str(app.query_one("#details-graph-note").render())
        check = str(app.query_one("#details-check").render())
    assert leaf_note.startswith("x is a leaf: it requires grad but no operation made it"), leaf_note
    assert FREED in freed_note, freed_note
    assert "✓" in checked and checked in check, (checked, check)


async def test_the_kernel_sends_codes_and_the_frontend_words_refusals_and_its_own_ends(session):
    """sys.exit in a session, a refused program and a check's notes: the kernel's reply carries a code and
    names (no sentence), and the session's result says it in views/ words."""
    raw = await session.client.request("execute", source="import sys\nsys.exit(3)", step=90, first_line=1)
    assert raw["error"]["diagnosis"] == "sys_exit_in_session" and raw["error"]["explanation"] is None, raw
    exited = await session.execute("import sys\nsys.exit(3)")
    assert exited.error.explanation.startswith("sys.exit() ends a script, not the tutor"), exited.error
    refused = await session.execute("import subprocess\nsubprocess.run(['ls'])")
    if session.sandbox.get("syscalls", {}).get("active"):
        assert refused.error.diagnosis == "no_processes", refused.error
        assert refused.error.explanation.startswith("Learner code cannot start programs"), refused.error
    await session.execute("x = torch.tensor(2.0, requires_grad=True)\ny = x ** 2 + 3 * x")
    raw_check = await session.client.request("check", name="y")
    leaf = raw_check["check"]["leaves"][0]
    assert leaf["note_code"] == "pending_none" and "note" not in leaf, leaf
    check = await session.check("y")
    assert check.data["leaves"][0]["note"] == "x.grad is None; y.backward() will make it 7", check.data


def test_accumulated_grad_words_say_what_the_second_backward_added():
    from gradrepl.views.tables import accumulated_text

    held = {"shape": [2], "values": [1.0, 2.0]}
    assert accumulated_text(held, {"shape": [2], "values": [2.5, 4.0]}, 5) == "[2.5, 4] (+[1.5, 2] at In [5])"
    assert accumulated_text(None, held, 5) is None  # a first write
    assert accumulated_text(held, held, 5) is None  # nothing added
    assert accumulated_text(held, {"shape": [3], "values": [1.0, 2.0, 3.0]}, 5) is None
    assert accumulated_text({"shape": [100], "norm": 3.0}, {"shape": [100], "norm": 6.0}, 5) is None
    # what shrinks a .grad is no backward: zero_(), a clip, a scale (found by the plain table's pty test)
    assert accumulated_text(held, {"shape": [2], "values": [0.0, 0.0]}, 5) is None
    assert accumulated_text(held, {"shape": [2], "values": [0.5, 1.0]}, 5) is None
    assert accumulated_text({"shape": [], "values": 7.0}, {"shape": [], "values": 0.0}, 5) is None
    # one number is a multiple of any other: only zero says emptied; a backward may add a negative
    assert accumulated_text({"shape": [], "values": 7.0}, {"shape": [], "values": 3.0}, 5) == "3 (+-4 at In [5])"
    assert accumulated_text({"shape": [2], "values": [0.0, 0.0]}, held, 5) is None  # into zeros: a write
    assert accumulated_text(held, {"shape": [2], "values": [2.0, 4.0]}, 5) == "[2, 4] (+[1, 2] at In [5])"
    assert accumulated_text(held, {"shape": [2], "values": [0.5, 2.5]}, 5) == "[0.5, 2.5] (+[-0.5, 0.5] at In [5])"


def test_the_non_leaf_flag_why_line_does_not_call_detach_a_copy_nor_name_a_tensor_it_cannot_know():
    """Issue 22 §2.13: detach() shares the data; the words are said of whatever tensor raised, not of `y`."""
    from gradrepl.views.diagnosis import error_words

    words = error_words("flag_of_non_leaf")
    assert "nothing is copied" in words and "a copy" not in words and "y.detach" not in words
