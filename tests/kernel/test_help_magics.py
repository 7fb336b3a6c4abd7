"""obj?, obj??, help(obj) and the %magics, through a real kernel."""

import logging
import re

from gradrepl.protocol.messages import Completion


async def test_question_mark_shows_signature_and_docstring(session):
    result = await session.execute("F.relu?")
    assert result.error is None
    assert result.display["kind"] == "help" and result.display["title"] == "F.relu?"
    text = result.display["text"]
    assert "Signature:   relu(input" in text and "Docstring:" in text
    assert "def relu" not in text


async def test_double_question_mark_adds_the_source_even_for_learner_code(session):
    await session.execute("def square(x):\n    '''x times x'''\n    return x * x\n")
    result = await session.execute("square??")
    assert "x times x" in result.display["text"]
    assert "Source:\ndef square(x):\n    '''x times x'''\n    return x * x" in result.display["text"]
    builtin = await session.execute("torch.zeros??")
    assert "no Python source" in builtin.display["text"]


async def test_help_in_learner_code_is_a_page_not_stdout(session):
    result = await session.execute("help(nn.Linear)")
    assert result.stdout == "" and result.error is None
    assert result.display["title"] == "help(torch.nn.modules.linear.Linear)"
    assert "class Linear" in result.display["text"] and "\b" not in result.display["text"]


async def test_help_on_a_missing_name_is_an_error_in_words(session):
    result = await session.execute("nope?")
    assert result.error.type == "NameError" and "nope" in result.error.message
    assert result.display is None


async def test_timeit_reports_mean_and_std_per_loop(session):
    await session.execute("x = torch.ones(100)")
    result = await session.execute("%timeit x.sum()")
    assert result.error is None and result.source == "%timeit x.sum()"
    assert re.fullmatch(r"[\d.]+ (ns|µs|ms|s) ± [\d.]+ (ns|µs|ms|s) per loop \(mean ± std\. dev\. of 7 runs, "
                        r"[\d,]+ loops? each\)", result.display), result.display
    broken = await session.execute("%timeit 1 / 0")
    assert broken.error.type == "ZeroDivisionError"


async def test_history_lists_this_sessions_inputs(session):
    await session.execute("a = 1")
    await session.execute("for i in range(2):\n    a += i")
    result = await session.execute("%history")
    assert result.display.splitlines() == ["1: a = 1", "2: for i in range(2):", "       a += i", "3: %history"]


async def test_help_lists_every_magic_and_each_one_is_known(session):
    listing = (await session.execute("%help")).display
    magics = re.findall(r"^  (%\w+)", listing, re.M)
    assert set(magics) >= {"%tensors", "%graph", "%check", "%timeit", "%history", "%restart", "%reset", "%help"}
    assert "obj?" in listing
    for magic in magics:
        result = await session.execute(f"{magic} x" if magic in ("%graph", "%check", "%timeit") else magic)
        assert not (result.error and "unknown command" in result.error.message), magic
    assert "unknown command" in (await session.execute("%nope")).error.message


async def test_tensors_fit_a_narrow_console(session):
    await session.execute("model = nn.Sequential(nn.Linear(3, 2))\nloss = model(torch.ones(1, 3)).pow(2).sum()")
    await session.execute("loss.backward()")
    session.width = 58
    try:
        table = (await session.execute("%tensors")).display
        graph = (await session.execute("%graph loss")).display
    finally:
        session.width = None
    assert "model[0].weight" in table.replace("\n", "") or "model" in table
    assert max(map(len, table.splitlines())) <= 58, table
    assert max(map(len, graph.splitlines())) <= 58, graph
    assert "SumBackward0" in graph


async def test_completion_carries_kind_and_signature(session):
    await session.execute("learning_rate = 0.1")
    found = await session.complete("learn")
    assert Completion("learning_rate", 0, "instance", None) in found
    zeros = {c.text: c for c in await session.complete("torch.zer")}
    assert zeros["zeros"].kind == "function" and zeros["zeros"].start == len("torch.")
    assert zeros["zeros"].signature.startswith("zeros(")


async def test_a_completion_failure_is_logged_not_silent(session, caplog):
    with caplog.at_level(logging.WARNING, logger="gradrepl.completion"):
        assert await session.complete("x = 1", cursor=99) == []
    assert any("completion failed" in record.getMessage() for record in caplog.records)


async def test_check_fits_a_narrow_console(session):
    await session.execute("x = torch.tensor([1.0, 2.0], requires_grad=True)\ny = (x ** 2 + 3 * x).sum()")
    await session.execute("y.backward()")
    wide = (await session.execute("%check y")).display
    session.width = 30
    try:
        narrow = (await session.execute("%check y")).display
    finally:
        session.width = None
    assert max(map(len, wide.splitlines())) > 30
    assert max(map(len, narrow.splitlines())) <= 30, narrow
    assert narrow.split() == wide.split()  # wrapped, nothing lost
