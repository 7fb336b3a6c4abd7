"""The TUI's plain parts: when Enter runs, history on disk, how a row reads, why .grad is None."""

from __future__ import annotations

import json
import unicodedata

from rich.cells import cell_len
from rich.text import Text

from gradrepl.history import History
from gradrepl.views.numbers import shape_text as shape
from gradrepl.views.tables import tensor_table
from gradrepl.tui.tensors.cells import row_cells, summary
from gradrepl.views.why import why_grad_is_none
from gradrepl.tui.unicode_width import align_with_terminal

X_AFTER_BACKWARD = {
    "name": "x", "shape": [], "dtype": "torch.float32", "requires_grad": True, "is_leaf": True,
    "grad_fn": None, "retains_grad": False, "version": 0,
    "grad": {"shape": [], "values": 7.0, "norm": 7.0}, "value": {"shape": [], "values": 2.0, "norm": 2.0},
}


def test_history_persists_and_browses(tmp_path):
    path = tmp_path / "history.jsonl"
    history = History(path)
    history.add("x = 1")
    history.add("for i in range(2):\n    print(i)")
    history.add("for i in range(2):\n    print(i)")  # a repeat is not stored twice
    again = History(path)
    assert again.entries == ["x = 1", "for i in range(2):\n    print(i)"]
    assert again.previous("") == "for i in range(2):\n    print(i)"
    assert again.previous("") == "x = 1"
    assert again.previous("") is None
    assert again.next() == "for i in range(2):\n    print(i)"
    assert again.next() == ""
    assert [json.loads(line) for line in path.read_text().splitlines()] == again.entries


def test_history_walks_only_entries_starting_with_the_draft(tmp_path):
    history = History(tmp_path / "history.jsonl")
    for entry in ["x = torch.ones(2)", "y = x * 2", "x.grad", "print(y)"]:
        history.add(entry)
    assert history.previous("x") == "x.grad"
    assert history.previous("x.grad") == "x = torch.ones(2)"  # the draft stays "x" during the walk
    assert history.previous("x = torch.ones(2)") is None
    assert history.next() == "x.grad"
    assert history.next() == "x"
    assert history.search("x") == ["x.grad", "y = x * 2", "x = torch.ones(2)"]


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


def test_the_plain_table_and_the_panel_read_a_row_the_same_way():
    row = dict(X_AFTER_BACKWARD, name="w", aliases=["layer.weight"], grad_fn="MulBackward0", is_leaf=False)
    header, line = tensor_table([row]).splitlines()
    panel = [cell.plain for cell in row_cells(row).values()]
    assert header.split() == ["name", "requires_grad", "is_leaf", "grad_fn", ".grad", "value", "shape", "dtype"]
    assert line.split() == " ".join(panel).split() == ["w", "=", "layer.weight", "yes", "no", "MulBackward0",
                                                       "7", "2", "scalar", "float32"]
    narrow = tensor_table([row], width=50).splitlines()[0].split()
    assert narrow[:3] == ["name", "req", "leaf"]  # the panel's short headers when the console is narrow


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


def terminal_cells(text: str) -> int:
    """Cells a terminal (libc wcwidth, tmux) gives text: marks Mn/Me 0, wide East Asian 2, the rest 1."""
    def width(character: str) -> int:
        if unicodedata.category(character) in ("Mn", "Me"):
            return 0
        return 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1
    return sum(width(c) for c in text)


DEVANAGARI = ["त्वरित जाँच — a gradient", "कि", "ग्रेडिएंट की जाँच करें", "पढ़िए और लिखिए"]


def test_devanagari_is_measured_as_the_terminal_draws_it():
    for text in DEVANAGARI:
        cell_len(text)  # measured (and cached) before the fix, as a running app may have done
    align_with_terminal()
    align_with_terminal()  # a second call (a second app in the process) changes nothing
    for text in DEVANAGARI:
        assert any(unicodedata.category(c) == "Mc" for c in text)  # the spacing signs the fix is about
        assert cell_len(text) == terminal_cells(text), text
        assert Text(text).cell_len == terminal_cells(text), text
    # Textual measures some text through functions it imported by name; they read the same table.
    from textual._wrap import get_character_cell_size

    assert get_character_cell_size("ि") == 1 and get_character_cell_size("्") == 0


def test_a_long_history_keeps_its_newest_entries_read_from_the_end(tmp_path, monkeypatch):
    from gradrepl import history as history_module

    monkeypatch.setattr(history_module, "BLOCK", 7)  # lines cut across many blocks
    path = tmp_path / "history.jsonl"
    typed = [f"x{i} = torch.ones({i})\nx{i}.sum()  # é" for i in range(history_module.MAX_ENTRIES + 50)]
    lines = [json.dumps(entry, ensure_ascii=False).encode() for entry in typed]
    lines.insert(-3, b'{"not": "an entry"}')  # not a string: skipped
    lines.insert(-2, b'"bad \xff"')  # not UTF-8: the byte is replaced, the entry kept
    path.write_bytes(b"\n".join(lines) + b'\n"torn by a cra')
    newest = History(path).entries
    assert len(newest) == history_module.MAX_ENTRIES
    assert newest[-1] == typed[-1] and newest[0] == typed[-history_module.MAX_ENTRIES + 1]
    assert "bad \ufffd" in newest  # a stray byte is replaced, the entry kept
