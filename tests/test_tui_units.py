"""The TUI's plain parts: when Enter runs, history on disk, how a row reads, why .grad is None."""

from __future__ import annotations

import json

from gradrepl.tui.cells import row_cells, shape, summary
from gradrepl.tui.grad_reason import why_grad_is_none
from gradrepl.tui.history import History
from gradrepl.tui.statement import is_complete, next_indent

X_AFTER_BACKWARD = {
    "name": "x", "shape": [], "dtype": "torch.float32", "requires_grad": True, "is_leaf": True,
    "grad_fn": None, "retains_grad": False, "version": 0,
    "grad": {"shape": [], "values": 7.0, "norm": 7.0}, "value": {"shape": [], "values": 2.0, "norm": 2.0},
}


def test_enter_runs_only_complete_statements():
    assert is_complete("x = torch.tensor(2.0, requires_grad=True)")
    assert not is_complete("for i in range(3):")
    assert not is_complete("for i in range(3):\n    y = y * 2")
    # The blank line ends a block, even with the auto-indent still on it.
    assert is_complete("for i in range(3):\n    y = y * 2\n    ")
    assert not is_complete("y = (x +")
    assert not is_complete("   ")
    assert is_complete("%graph y")
    # Broken code runs so the kernel can explain the error.
    assert is_complete("x = = 1")


def test_auto_indent_after_colon_and_out_after_return():
    assert next_indent("def f(x):") == "    "
    assert next_indent("    if x > 0:  # positive") == "        "
    assert next_indent("        return x") == "    "
    assert next_indent("    y = x") == "    "


def test_history_persists_and_browses(tmp_path):
    path = tmp_path / "history.jsonl"
    history = History(path)
    history.add("x = 1")
    history.add("for i in range(2):\n    print(i)")
    history.add("for i in range(2):\n    print(i)")  # a repeat is not stored twice
    again = History(path)
    assert again.entries == ["x = 1", "for i in range(2):\n    print(i)"]
    assert again.previous("draft") == "for i in range(2):\n    print(i)"
    assert again.previous("") == "x = 1"
    assert again.previous("") is None
    assert again.next() == "for i in range(2):\n    print(i)"
    assert again.next() == "draft"
    assert [json.loads(line) for line in path.read_text().splitlines()] == again.entries


def test_history_survives_a_torn_line(tmp_path):
    path = tmp_path / "history.jsonl"
    path.write_text('"a = 1"\n"b = \n')
    assert History(path).entries == ["a = 1"]


def test_cells_read_like_torch_and_keep_brackets():
    cells = row_cells(dict(X_AFTER_BACKWARD, name="xs[idx]"))
    assert cells["name"].plain == "xs[idx]"
    assert cells["grad"].plain == "7"
    assert cells["value"].plain == "2"
    assert cells["grad_fn"].plain == "—"
    assert cells["dtype"].plain == "float32"
    assert shape([]) == "scalar" and shape([2, 3]) == "2×3"
    big = {"shape": [1000], "min": -1.0, "max": 2.5, "mean": 0.25, "norm": 31.6}
    assert "norm" in summary(big, width=None)


def test_why_grad_is_none_names_the_cause():
    assert why_grad_is_none(X_AFTER_BACKWARD) is None
    no_grad = dict(X_AFTER_BACKWARD, grad=None, requires_grad=False)
    assert "requires_grad is False" in why_grad_is_none(no_grad)
    intermediate = dict(X_AFTER_BACKWARD, name="y", grad=None, is_leaf=False, grad_fn="AddBackward0")
    reason = why_grad_is_none(intermediate)
    assert "not a leaf" in reason and "y.retain_grad()" in reason and "AddBackward0" in reason
    waiting = dict(X_AFTER_BACKWARD, grad=None)
    assert "backward() has not yet run" in why_grad_is_none(waiting)
    retained = dict(intermediate, retains_grad=True)
    assert "backward() has not yet run" in why_grad_is_none(retained)


def test_the_tui_never_imports_torch_or_sympy():
    import subprocess
    import sys

    code = ("import sys, gradrepl.tui.app, gradrepl.cli; "
            "print(sorted(m for m in ('torch', 'sympy', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
