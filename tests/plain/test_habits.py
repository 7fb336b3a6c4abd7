"""`gradrepl --plain` as an IPython user expects it, on a real pty (80 columns): In [N] prompts that magics
do not advance, a busy line while a step runs, gradrepl's sentences wrapped at word boundaries; and a
completion menu that never opens by itself on a blank indented line."""

from __future__ import annotations

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from tests.support.pty import screen_lines

from gradrepl.plain.repl import KernelCompleter


@pytest.mark.timeout(300)
def test_prompts_busy_line_and_wrapped_sentences(repl):
    repl.read_until(b"In [1]:")
    repl.type("x = torch.ones(2)\r")
    repl.read_until(b"In [2]:")
    repl.type("%history\r")  # looks only: takes no number
    repl.read_until(b"1: x = torch.ones(2)")
    repl.read_until(b"In [2]:")
    repl.type("import time; time.sleep(3)\r")
    busy = repl.read_until(b"In [3]:")
    assert b"running In [2]" in busy and b"Ctrl-C interrupts" in busy, busy
    repl.type("x.sum().backward()\r")  # no graph behind it: a why-line of several lines at 80 columns
    said = repl.read_until(b"In [4]:")
    lines = [line.rstrip() for line in screen_lines(said)]
    why = [index for index, line in enumerate(lines) if line.startswith("  why: ")]
    assert why, lines
    body = lines[why[0]:]
    assert len(body[0]) <= 80 and body[1].startswith("       ") and body[1].strip(), body[:3]
    words = body[0].split() + body[1].split()
    assert all(word.isprintable() for word in words)
    # the cut falls between words: the last word of the first line and the first of the next are whole
    assert " ".join(body[0].split()[-1:] + body[1].split()[:1]) in " ".join(" ".join(body).split())
    repl.type("quit\r")
    assert repl.process.wait(timeout=60) == 0


async def test_no_menu_while_typing_on_a_blank_indented_line(session):
    completer = KernelCompleter(session)
    await session.execute("xs = [1, 2]")
    typing = CompleteEvent(text_inserted=True)

    async def texts(code: str, event) -> list[str]:
        return [found.text async for found in completer.get_completions_async(Document(code, len(code)), event)]

    assert await texts("for x in xs:\n    ", typing) == []  # the auto-indent after Enter
    assert await texts("y = ", typing) == []
    assert "print" in await texts("pri", typing)  # after a name the menu narrows as you type
    assert "xs" in await texts("for x in xs:\n    ", CompleteEvent(completion_requested=True))  # Tab asks


async def test_a_narrow_table_wraps_between_words_and_leaves_columns_out(session):
    """At 58 columns (the TUI's console) and 60, names, grad_fns and headers stay whole; what does not fit
    whole is left out, and the table says so."""
    from gradrepl.views.steps import step_text

    result = await session.execute("model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))\n"
                                   "loss = model(torch.randn(5, 3)).pow(2).mean()\nloss.backward()")
    for width in (58, 60):
        table = step_text(result, width)
        lines = table.splitlines()
        assert max(map(len, lines)) <= width, table
        for whole in ("model[0].weight", "model[2].bias", "MeanBackward0", "grad_fn"):
            assert any(whole in line for line in lines), f"{whole} cut at {width} columns:\n{table}"
        assert "left out to fit" in lines[-1]
    session.width = 58
    try:
        at = (await session.execute("%at -1")).display
    finally:
        session.width = None
    header = next(line for line in at.splitlines() if line.split()[:1] == ["name"])
    assert "graph" in header and max(map(len, at.splitlines())) <= 58, at  # %at keeps what the graph held
