"""The plain REPL driven through prompt_toolkit's pipe input, with a real kernel."""

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from gradrepl.history import History
from gradrepl.plain.repl import build_prompt, repl
from gradrepl.session import Session


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
