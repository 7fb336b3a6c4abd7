"""The panel in a notebook, level 1: IPython's InteractiveShell runs cells in this process and the
panel widget's traits are read after each (no frontend: the widget has no comm's other end, which is
what a notebook without widget support is too, so the fallback table is printed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("anywidget")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

from gradrepl.notebook.extension import loaded  # noqa: E402

ROW_KEYS = {"name", "aliases", "shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn", "retains_grad",
            "version", "changed", "grad", "value", "saved_bytes", "cell"}


@pytest.fixture
def shell():
    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    cell(shell, "%load_ext gradrepl")
    yield shell
    cell(shell, "%unload_ext gradrepl")
    InteractiveShell.clear_instance()


def cell(shell, source: str, cell_id: str | None = None):
    result = shell.run_cell(source, store_history=True, cell_id=cell_id)
    assert result.error_in_exec is None and result.error_before_exec is None, result
    return result


def rows(shell) -> dict[str, dict]:
    return {row["name"]: row for row in loaded(shell).panel.rows}


def test_rows_after_each_cell_name_the_cell_that_changed_them(shell):
    first = cell(shell, "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)").execution_count
    assert set(rows(shell)) == {"x"}
    assert set(rows(shell)["x"]) == ROW_KEYS
    assert rows(shell)["x"]["cell"] == first and rows(shell)["x"]["changed"] is True
    second = cell(shell, "y = (x * x).sum()").execution_count
    assert rows(shell)["y"]["grad_fn"] == "SumBackward0" and rows(shell)["y"]["cell"] == second
    assert rows(shell)["x"]["changed"] is False and rows(shell)["x"]["cell"] == first
    third = cell(shell, "y.backward()").execution_count
    assert rows(shell)["x"]["grad"]["values"] == [2.0, 4.0]
    assert rows(shell)["x"]["cell"] == third and rows(shell)["x"]["changed"] is True


def test_writes_behind_the_version_counter_reach_the_panel(shell):
    cell(shell, "import torch\nw = torch.ones(2, requires_grad=True)")
    count = cell(shell, "w.data[0] = 7").execution_count  # no version bump: the write hooks see it
    assert rows(shell)["w"]["value"]["values"] == [7.0, 1.0]
    assert rows(shell)["w"]["cell"] == count


def test_ipython_names_get_no_rows(shell):
    cell(shell, "import torch\nt = torch.zeros(3)")
    cell(shell, "t * 2")  # Out[N] and _N hold the result
    assert set(rows(shell)) == {"t"}


def test_an_ipython_name_the_learner_rebinds_gets_its_row_in_namespace_order(shell):
    cell(shell, "import torch\na = torch.zeros(1)")
    cell(shell, "a * 2")                     # _ and _N hold IPython's copy of the output
    cell(shell, "In = torch.ones(2)\nb = torch.ones(3)")  # the learner's own `In`: a row of its own
    assert list(rows(shell)) == ["a", "In", "b"]
    assert rows(shell)["In"]["shape"] == [2]


def test_a_cell_that_changes_nothing_sends_nothing(shell):
    panel = loaded(shell).panel
    cell(shell, "import torch\nx = torch.ones(2)")
    sent = []
    panel.observe(lambda change: sent.append(change["name"]), names=["rows", "words"])
    cell(shell, "y = 1")   # x's changed mark goes off: one update
    assert sent == ["rows"]
    cell(shell, "z = 2")   # nothing at all
    assert sent == ["rows"]
    cell(shell, "x2 = torch.zeros(1)")
    assert sent == ["rows", "rows", "words"]
    assert set(panel.words) == {"x", "x2"} and panel.words["x2"]["grad"] == "None"


def test_off_stops_inspection_and_on_resumes_it(shell):
    cell(shell, "import torch")
    cell(shell, "%gradrepl off")
    cell(shell, "a = torch.ones(1)")
    assert "a" not in rows(shell) and loaded(shell).panel.on is False
    count = cell(shell, "%gradrepl on").execution_count
    assert rows(shell)["a"]["cell"] == count


def test_a_closed_panel_inspects_nothing(shell):
    cell(shell, "import torch")
    loaded(shell).panel.close()
    cell(shell, "b = torch.ones(1)")
    assert loaded(shell).cells.rows.get("b") is None
    cell(shell, "%gradrepl on")  # a new panel
    assert "b" in rows(shell)


def test_rows_from_an_edited_cells_old_run_are_stale(shell):
    cell(shell, "import torch")
    cell(shell, "u = torch.ones(1)\nv = torch.ones(1)", cell_id="c1")
    assert loaded(shell).panel.stale == []
    cell(shell, "u = torch.zeros(1)", cell_id="c1")  # edited: v came from the old version
    assert loaded(shell).panel.stale == ["v"]
    cell(shell, "v = u + 1")
    assert loaded(shell).panel.stale == []


def test_without_a_widget_frontend_the_changed_rows_are_printed(shell, capsys):
    cell(shell, "import torch\nq = torch.ones(2, requires_grad=True)")
    out = capsys.readouterr().out
    assert "gradrepl:" in out and "q" in out and "yes" in out
    cell(shell, "n = 3")
    cell(shell, "n = 4")
    assert "gradrepl:" not in capsys.readouterr().out


def test_magics_show_what_the_tui_shows(shell, capsys):
    cell(shell, "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)")
    made = cell(shell, "y = (x * x).sum()").execution_count
    capsys.readouterr()
    cell(shell, "%graph y")
    drawn = capsys.readouterr().out
    assert "│ SumBackward0 │" in drawn and "leaf x" in drawn and "▼" in drawn, drawn
    cell(shell, "%check y")
    out = capsys.readouterr().out
    assert "x_0**2 + x_1**2" in out and "y.backward() has not been called" in out
    cell(shell, "%trace y")
    out = capsys.readouterr().out
    assert "AccumulateGrad" in out
    # a preview wrote no .grad, and says so as the TUI and the REPL do
    assert "(a preview: no .grad is changed, the graph is kept)" in out and "x.grad would get += [1, 2] (from x * x) + [1, 2] (from x * x) = [2, 4]" in out, out
    assert rows(shell)["x"]["grad"] is None
    cell(shell, "%trace y.backward()")
    out = capsys.readouterr().out
    assert "x.grad += [1, 2] (from x * x) + [1, 2] (from x * x) = [2, 4]" in out and "would" not in out and rows(shell)["x"]["grad"]["values"] == [2.0, 4.0]
    cell(shell, f"%at {made}")
    out = capsys.readouterr().out
    assert f"after step {made}" in out and "SumBackward0" in out
    cell(shell, "%tensors")
    assert "x" in capsys.readouterr().out
    shell.run_cell("%graph nothing_here", store_history=True)
    captured = capsys.readouterr()
    assert "UsageError: no live tensor named 'nothing_here'" in captured.out + captured.err


def test_the_footer_says_there_is_no_sandbox(shell):
    assert loaded(shell).panel.footer.startswith("no sandbox:")


def test_the_extension_pulls_in_no_terminal_frontend():
    """A fresh interpreter: `import gradrepl` loads no torch; the extension loads neither textual nor
    prompt_toolkit (IPython's terminal shell would; the notebook's kernel does not)."""
    code = ("import sys\nimport gradrepl\nassert 'torch' not in sys.modules, 'import gradrepl loaded torch'\n"
            "from IPython.core.interactiveshell import InteractiveShell\n"
            "shell = InteractiveShell.instance()\nshell.run_cell('%load_ext gradrepl')\n"
            "shell.run_cell('import torch\\nx = torch.ones(1, requires_grad=True)')\n"
            "assert 'torch' in sys.modules\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'prompt_toolkit'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


def test_a_shown_panel_gets_only_what_a_cell_changed_and_the_whole_state_when_it_asks(shell):
    panel = loaded(shell).panel
    cell(shell, "import torch\n" + "\n".join(f"t{i} = torch.ones(2)" for i in range(30)))
    panel._handle_custom_msg({"event": "rendered"}, [])  # what the view sends once shown (panel.js)
    wire = []
    publish = panel.comm.publish_msg
    panel.comm.publish_msg = lambda msg_type, data=None, *args, **keys: (wire.append(data), publish(
        msg_type, data, *args, **keys))
    count = cell(shell, "t7 = torch.zeros(2)").execution_count
    [message] = wire
    delta = message["content"]["delta"]
    assert [row["name"] for row in delta["rows"]] == ["t7"] and delta["rows"][0]["cell"] == count
    assert delta["unmarked"] == [f"t{i}" for i in range(30) if i != 7]  # the load cell's marks go off
    assert message["method"] == "custom" and len(json.dumps(message)) < 2048
    wire.clear()
    cell(shell, "n = 1")
    assert wire[0]["content"]["delta"]["unmarked"] == ["t7"]
    wire.clear()
    cell(shell, "n = 2")
    assert wire == []
    state = panel.get_state()  # a new view, or a reload: the whole table, as it stands
    assert [row["name"] for row in state["rows"]] == [f"t{i}" for i in range(30)]
    assert state["rows"][7]["value"]["values"] == [0.0, 0.0] and state["rows"][7]["cell"] == count
    assert not any(row["changed"] for row in state["rows"])


def test_a_hidden_panel_inspects_nothing_and_catches_up_when_seen(shell):
    panel = loaded(shell).panel
    cell(shell, "import torch")
    panel._handle_custom_msg({"event": "rendered"}, [])
    panel._handle_custom_msg({"event": "visible", "visible": False}, [])  # output collapsed (panel.js)
    cell(shell, "h = torch.ones(1)")
    last = cell(shell, "k = torch.ones(1)").execution_count
    assert "h" not in loaded(shell).cells.rows and "k" not in loaded(shell).cells.rows
    panel._handle_custom_msg({"event": "visible", "visible": True}, [])
    assert {"h", "k"} <= set(loaded(shell).cells.rows)
    assert loaded(shell).cells.rows["k"]["cell"] == last


def test_a_selected_row_says_why_its_grad_is_none(shell):
    cell(shell, "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()")
    words = loaded(shell).panel.words
    assert "why is .grad None? backward() has not yet run through x" in words["x"]["details"]
    assert "y is not a leaf" in words["y"]["details"]


def test_control_characters_in_a_name_never_reach_the_terminal_raw(shell, capsys):
    """The rows pass the client's reply schema (protocol/reply_schema.py), as a kernel's do: names made
    visible, so the fallback table and the panel show what `gradrepl run --json` shows."""
    cell(shell, "import torch\n"
                "Odd = type('\\x1b[2JOdd', (torch.autograd.Function,), {'forward': staticmethod(lambda ctx, t: t * 2),"
                " 'backward': staticmethod(lambda ctx, g: g * 2)})\n"
                "x = torch.ones(1, requires_grad=True)\ny = Odd.apply(x)")
    out = capsys.readouterr().out
    assert "\x1b" not in out, repr(out)
    assert "\\x1b" in out
    assert all("\x1b" not in str(row) for row in loaded(shell).panel.rows), loaded(shell).panel.rows
    for magic in ("%graph y", "%trace y", "%tensors"):
        cell(shell, magic)
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\\x1b[2JOdd" in out, (magic, out)
