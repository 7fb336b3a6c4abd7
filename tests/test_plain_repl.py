"""The plain REPL driven through prompt_toolkit's pipe input, with a real kernel."""

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from gradrepl.history import History
from gradrepl.plain.repl import build_prompt, is_complete, next_indent, repl
from gradrepl.session import Session


def test_enter_runs_only_complete_statements():
    assert is_complete("x = 1")
    assert not is_complete("for i in range(3):")
    assert not is_complete("def f(x):\n    return x")
    assert is_complete("def f(x):\n    return x\n")
    assert is_complete("%graph y")
    assert not is_complete("x = (")
    assert is_complete("a = 1\nb = 2")  # a pasted block runs as a whole
    assert is_complete("1 +* 2")  # broken beyond repair: let the kernel say why


def test_auto_indent_after_colon():
    assert next_indent("for i in range(3):") == "    "
    assert next_indent("def f():\n    if x:") == "        "
    assert next_indent("def f():\n    y = 1") == "    "


async def test_a_scripted_session_shows_the_gradient(capsys, gradrepl_home):
    session = Session()
    with create_pipe_input() as pipe:
        prompt = build_prompt(session, input=pipe, output=DummyOutput())
        for line in ("x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x", "y.backward()",
                     "%graph y", "1 / 0"):
            pipe.send_text(line + "\r")
        pipe.send_text("\x04")  # Ctrl-D quits
        try:
            status = await repl(session, prompt)
        finally:
            await session.close()
    out = capsys.readouterr().out
    assert status == 0
    assert "AddBackward0" in out and "PowBackward0" in out
    x_row = [line for line in out.splitlines() if line.startswith("* x ")][-1]  # after backward
    assert " 7 " in x_row
    assert "ZeroDivisionError" in out
    # One history file for both frontends: what was typed here comes back in the TUI.
    assert "y.backward()" in History(gradrepl_home / "repl_history.jsonl").entries


async def test_plain_trace_listing_and_a_past_step(capsys):
    session = Session()
    with create_pipe_input() as pipe:
        prompt = build_prompt(session, input=pipe, output=DummyOutput())
        for line in ("x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x", "%trace y",
                     "y.backward()", "%at 2"):
            pipe.send_text(line + "\r")
        pipe.send_text("\x04")
        try:
            status = await repl(session, prompt)
        finally:
            await session.close()
    out = capsys.readouterr().out.splitlines()
    assert status == 0
    listing = out.index("backward from y: 4 node(s), in the order the engine ran them")
    assert out[listing + 1].split()[:2] == ["1", "AddBackward0"]
    assert out[listing + 4].split() == ["4", "AccumulateGrad", "x.grad", "+=", "7"]
    past = next(i for i, line in enumerate(out) if line.startswith("after step 2 of 4"))
    x_then = next(line for line in out[past:] if line.lstrip().startswith("x "))
    assert x_then.split()[6] == "None"  # x.grad before the backward of step 4
