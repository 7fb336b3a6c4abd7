"""The plain REPL driven through prompt_toolkit's pipe input, with a real kernel."""

from gradrepl.history import History
from gradrepl.session import Session
from tests.support.plain import drive, typed_ahead


async def test_a_scripted_session_shows_the_gradient(capsys, gradrepl_home):
    session = Session()
    status = await typed_ahead(session, ["x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x",
                                         "y.backward()", "%graph y", "1 / 0"])
    out = capsys.readouterr().out
    assert status == 0
    assert "AddBackward0" in out and "PowBackward0" in out
    x_row = [line for line in out.splitlines() if line.startswith("* x ")][-1]  # after backward
    assert " 7 " in x_row
    assert "ZeroDivisionError" in out
    # One history file for both frontends: what was typed here comes back in the TUI.
    assert "y.backward()" in History(gradrepl_home / "repl_history.jsonl").entries


def menu_shown(buffer) -> bool:
    return bool(buffer.complete_state and buffer.complete_state.completions)


async def test_enter_on_a_whitespace_only_line_runs_the_block(capsys):
    # The auto-indent leaves "    " on the line after print(i): Enter there ends the block.
    status = await drive(Session(), ["for i in range(2):\r", "print('i is', i)\r", "\r"])
    out = capsys.readouterr().out
    assert status == 0
    assert "i is 0\ni is 1" in out and "Error" not in out


async def test_backspace_in_an_indent_removes_one_level(capsys):
    chunks = ["for i in range(2):\r", "if i:\r", "print('odd', i)\r", "\x7f", "print('each', i)\r", "\r"]
    await drive(Session(), chunks)
    out = capsys.readouterr().out
    assert "each 0\nodd 1\neach 1" in out and "Error" not in out


async def test_a_block_pasted_without_bracketed_paste_runs_whole(capsys):
    pasted = "def f(x):\r    y = x * 2\r\r    return y + 1\r\rprint('f(3) =', f(3))\r"
    await drive(Session(), [pasted])
    out = capsys.readouterr().out
    assert "f(3) = 7" in out
    assert "IndentationError" not in out and "SyntaxError" not in out


async def test_up_with_a_prefix_walks_matching_history_only(capsys):
    chunks = ["print('alpha', 1)\r", "print('beta', 2)\r", "print('alpha', 3)\r", "print('b", "\x1b[A", "\r"]
    await drive(Session(), chunks)
    out = capsys.readouterr().out
    assert out.count("beta 2") == 2 and out.count("alpha 3") == 1  # the newest entry starting "print('b"


async def test_help_goes_to_the_pager_and_magics_fit_the_width(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "58")
    chunks = ["model = nn.Linear(3, 2)\r", "def f():\r    '''bell\\x07 here'''\r\r", "f?\r", "F.relu?\r", "%tensors\r"]
    await drive(Session(), chunks)
    out = capsys.readouterr().out
    assert "F.relu?\nType:        function" in out  # no terminal: pydoc's pager prints it
    assert "Docstring:\nbell\\x07 here" in out and "\x07" not in out  # control characters shown, not sent
    table = out[out.rindex("  name"):]  # the %tensors table, after the help page
    assert max(len(line) for line in table.splitlines() if not line.startswith("[")) <= 58


async def test_tab_on_a_single_match_completes_inline(capsys):
    await drive(Session(), ["learning_rate = 0.25\r", "learning_r", menu_shown, "\t", "\r"])
    out = capsys.readouterr().out
    assert "0.25" in out and "NameError" not in out  # the assignment prints nothing: the echo does


async def test_plain_trace_listing_and_a_past_step(capsys):
    lines = ["x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x", "%trace y", "y.backward()", "%at 2"]
    status = await drive(Session(), [line + "\r" for line in lines])
    out = capsys.readouterr().out.splitlines()
    assert status == 0
    listing = out.index("backward from y: 4 node(s), in the order the engine ran them")
    assert out[listing + 1] == "  (a preview: no .grad is changed, the graph is kept)"  # said once, whole
    assert out[listing + 2].split()[:2] == ["1", "AddBackward0"]
    assert out[listing + 2].split()[2:] == ["y", "=", "x", "**", "2", "+", "3", "*", "x", "(step", "2,", "line", "1)"]
    assert "       x.grad would get += 4 (from x ** 2) + 3 (from x * 3) = 7" in out[listing:]  # %trace y wrote none
    past = next(i for i, line in enumerate(out) if line.startswith("after step 2 of 3"))
    x_then = next(line for line in out[past:] if line.lstrip().startswith("x "))
    assert x_then.split()[6] == "None"  # x.grad before the backward of step 3 (%trace y took no number)
