"""Tracebacks a learner can read: their frames and torch's, in order, never gradrepl's own."""

import asyncio
from pathlib import Path

import gradrepl

OURS = str(Path(gradrepl.__file__).resolve().parent)


def assert_no_gradrepl_frame(error):
    assert OURS not in error.traceback, error.traceback
    assert all(not frame["filename"].startswith(OURS) for frame in error.frames), error.frames
    assert "handle_torch_function" not in error.traceback  # torch's dispatch into our recorder


async def test_nested_function_error_names_its_cells(session):
    await session.execute("def g(x):\n    return x / 0\n")
    first = session.step
    await session.execute("def f(x):\n    return g(x) + 1\n")
    result = await session.execute("y = 1\nf(y)")
    error = result.error
    assert error.type == "ZeroDivisionError"
    assert [(f["filename"], f["lineno"], f["name"], f["origin"]) for f in error.frames] == [
        (f"Cell In[{first + 2}]", 2, "<module>", "learner"), (f"Cell In[{first + 1}]", 2, "f", "learner"),
        (f"Cell In[{first}]", 2, "g", "learner")]
    assert error.frames[-1]["line"] == "return x / 0"
    assert error.traceback.splitlines()[:3] == [
        "Traceback (most recent call last):", f"  Cell In[{first + 2}], line 2, in <module>", "    f(y)"]
    assert f"  Cell In[{first}], line 2, in g\n    return x / 0\n" in error.traceback


async def test_error_inside_a_torch_call_keeps_torch_frames_in_order(session):
    await session.execute("layer = nn.Linear(2, 3)")
    result = await session.execute("out = layer(torch.ones(4, 5))")
    error = result.error
    assert error.type == "RuntimeError"
    assert_no_gradrepl_frame(error)
    assert error.frames[0]["origin"] == "learner" and error.frames[0]["filename"] == f"Cell In[{session.step}]"
    library = [frame for frame in error.frames if frame["origin"] == "library"]
    assert library and all("torch" in frame["filename"] for frame in library)
    assert library[-1]["filename"].endswith("linear.py") and library[-1]["name"] == "forward"


async def test_failing_backward_shows_torch_not_gradrepl(session):
    await session.execute("x = torch.ones(3, requires_grad=True)")
    result = await session.execute("(x * 2).backward()")
    error = result.error
    assert "scalar" in error.message
    assert_no_gradrepl_frame(error)
    names = [frame["name"] for frame in error.frames]
    assert names[0] == "<module>" and "backward" in names
    assert any("autograd" in frame["filename"] for frame in error.frames)


async def test_interrupt_shows_the_learners_line_only(session):
    task = asyncio.create_task(session.execute("while True:\n    torch.ones(4).sum()"))
    await asyncio.sleep(0.5)
    await session.interrupt()
    error = (await task).error
    cell = f"Cell In[{session.step}]"
    assert error.type == "KeyboardInterrupt"
    assert_no_gradrepl_frame(error)
    assert "on_sigint" not in error.traceback
    assert error.frames[0] == {**error.frames[0], "filename": cell, "origin": "learner"}


async def test_syntax_error_carries_its_caret(session):
    result = await session.execute("x = 1\ny = 1 +* 2")
    error = result.error
    cell = f"Cell In[{session.step}]"
    assert error.type == "SyntaxError"
    assert (error.offset, error.text.rstrip("\n")) == (8, "y = 1 +* 2")
    assert error.end_offset >= error.offset
    assert error.frames == [{"filename": cell, "lineno": 2, "name": "<module>", "line": "y = 1 +* 2",
                             "origin": "learner", "col": None, "end_col": None}]
    assert error.traceback.splitlines() == [f"  {cell}, line 2", "    y = 1 +* 2", "           ^",
                                            "SyntaxError: invalid syntax"]


async def test_a_script_step_names_the_file_and_its_lines(session):
    source = "def g(x):\n    return x / 0\n\n\ndef f(x):\n    return g(x)\n"
    await session.execute(source[:source.index("\n\n")], filename="nested.py", first_line=1)
    await session.execute(source[source.index("def f"):].rstrip(), filename="nested.py", first_line=5)
    result = await session.execute("f(1)", filename="nested.py", first_line=8)
    assert [(f["filename"], f["lineno"], f["name"]) for f in result.error.frames] == [
        ("nested.py", 8, "<module>"), ("nested.py", 6, "f"), ("nested.py", 2, "g")]
    assert '  File "nested.py", line 2, in g\n    return x / 0\n' in result.error.traceback


CHAINED = ("def load(x):\n"
           "    try:\n"
           "        return x.item()\n"
           "    except RuntimeError as exc:\n"
           "        raise ValueError('could not read x') {how}\n")


async def test_a_chained_error_shows_what_led_to_it(session):
    await session.execute(CHAINED.format(how="from exc"))
    error = (await session.execute("load(torch.ones(3))")).error
    assert error.type == "ValueError"
    (cause,) = error.causes
    assert cause["type"] == "RuntimeError" and "cannot be converted to Scalar" in cause["message"]
    assert [frame["line"] for frame in cause["frames"] if frame["origin"] == "learner"] == ["return x.item()"]
    text = error.traceback
    assert text.index("RuntimeError: a Tensor with 3 elements") < text.index(
        "The above exception was the direct cause of the following exception:") < text.index(
        "ValueError: could not read x")
    assert_no_gradrepl_frame(error)
    assert all(not frame["filename"].startswith(OURS) for frame in cause["frames"])


async def test_an_error_while_handling_another_is_context_and_from_none_hides_it(session):
    await session.execute(CHAINED.format(how=""))
    during = (await session.execute("load(torch.ones(3))")).error
    assert [c["type"] for c in during.causes] == ["RuntimeError"]
    assert "During handling of the above exception, another exception occurred:" in during.traceback
    await session.execute(CHAINED.format(how="from None"))
    hidden = (await session.execute("load(torch.ones(3))")).error
    assert hidden.causes == [] and "RuntimeError" not in hidden.traceback


async def test_a_chained_error_without_words_of_its_own_is_explained_by_its_cause(session):
    await session.execute("def train_step(loss):\n    try:\n        loss.backward()\n"
                          "    except RuntimeError as exc:\n        raise ValueError('the step failed') from exc\n")
    error = (await session.execute("train_step(torch.ones(3, requires_grad=True) * 2)")).error
    assert error.type == "ValueError" and error.causes[0]["type"] == "RuntimeError"
    assert error.explanation and ".sum()" in error.explanation  # why backward needs a scalar, as for the cause
