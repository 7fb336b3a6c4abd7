"""Replies of the right id and the wrong shape: learner code rewrites the worker's reply writer.

Each attack runs in a real kernel: a step replaces `worker._bounded_reply` (what serve() calls to
encode every reply) with one that bends the next replies out of shape, keeping their ids. The
frontend must treat that as a broken protocol: the kernel is replaced, the learner told in words,
and nothing of the frontend raises (Session, `gradrepl run`, `lint`, `play --auto`).
"""

from __future__ import annotations

import asyncio
import subprocess
import textwrap

import pytest
from tests.support.paths import GRADREPL, ROOT

from gradrepl.protocol import reply_schema


def hostile(change: str, when: str = "'duration_ms' in answer or 'skipped' in answer") -> str:
    """Learner code after which every reply that `when` picks is bent by `change` (it edits `answer`)."""
    return textwrap.dedent(f"""\
        import sys
        _worker = sys.modules['gradrepl.kernel.worker']
        _real = _worker._bounded_reply
        def _bent(answer):
            if {when}:
                {change}
            return _real(answer)
        _worker._bounded_reply = _bent
        """)


STEP_SHAPES = {
    "duration_ms": "answer['duration_ms'] = 'soon'",
    "error_keys": "answer['error'] = {'type': 'E', 'message': 'm', 'surprise': 1}",
    "notes": "answer['notes'] = 7",
    "saved_bytes": "answer['tensors'] = [dict(row, saved_bytes='lots') for row in answer['tensors']]",
    "row_keys": "answer['tensors'] = [dict(row, extra={'a': 1}) for row in answer['tensors']]",
    "removed": "answer['removed'] = [None]",
    "result": "answer['result'] = {'text': 'x'}",
    "display": "answer['display'] = {'kind': 'help', 'title': 1}",
    "values": "answer['tensors'] = [dict(row, value={'shape': [1], 'values': [[0] * 100]}) for row in answer['tensors']]",
    "frames": "answer['error'] = {'type': 'E', 'message': 'm', 'frames': [{'filename': 1}]}",
    "ok": "answer['ok'] = 'yes'",
    "huge_duration": "answer['duration_ms'] = 10 ** 4000",
    "huge_version": "answer['tensors'] = [dict(row, version=-10 ** 30) for row in answer['tensors']]",
}


def assert_replaced_in_words(result) -> None:
    assert result.kernel_event and "fresh kernel" in result.kernel_event, result
    assert "is not of the shape" in result.kernel_event, result.kernel_event


async def assert_in_order(session) -> None:
    first = await session.execute("6 * 7")
    second = await session.execute("'in order'")
    assert (first.result, second.result) == ("42", "'in order'"), (first, second)
    assert first.kernel_event is None and second.kernel_event is None


@pytest.mark.parametrize("change", STEP_SHAPES.values(), ids=STEP_SHAPES.keys())
async def test_a_step_reply_of_the_wrong_shape_replaces_the_kernel_in_words(session, change):
    await session.execute("kept = 1")
    result = await asyncio.wait_for(session.execute("t = torch.ones(2)\n" + hostile(change)), 60)
    assert_replaced_in_words(result)
    assert "kept" not in session.tensors and (await session.execute("'kept' in dir()")).result == "False"
    await assert_in_order(session)


# Other ops: the step that bends them replies as usual; the op asked next gets the bent reply.
OTHERS = "'id' in answer and 'duration_ms' not in answer and 'skipped' not in answer"
OP_SHAPES = {
    "graph": ("%graph t", "answer['graph']['kind'] = 7"),
    "graph_text": ("%graph t", "answer['text'] = 'words the kernel drew'"),  # replies carry data only
    "check": ("%check t", "answer['check'] = 7"),
    "check_keys": ("%check t", "answer['check'] = {'name': 't', 'kind': 'tensor', 'problem': 'p', 'more': 1}"),
    "check_text": ("%check t", "answer['check'] = {'name': 't', 'kind': 'tensor', 'problem': 'p', 'text': 't'}"),
    "trace": ("%trace t", "answer['trace'] = {'nodes': 7}"),
    "help": ("t?", "answer['display'] = 5"),
    "reset": ("%reset", "answer['removed'] = 'all'"),
}


@pytest.mark.parametrize("source, change", OP_SHAPES.values(), ids=OP_SHAPES.keys())
async def test_an_op_reply_of_the_wrong_shape_replaces_the_kernel_in_words(session, source, change):
    setup = await session.execute("x = torch.ones(1, requires_grad=True)\nt = (x * 2).sum()\n"
                                  + hostile(change, OTHERS))
    assert setup.kernel_event is None, setup
    result = await asyncio.wait_for(session.execute(source), 60)
    assert result.kernel_event and "is not of the shape" in result.kernel_event, result
    await assert_in_order(session)


async def test_completions_inspect_and_equivalent_of_the_wrong_shape_give_words_not_exceptions(session):
    for call, change in (
            (lambda: session.complete("tor"), "answer['completions'] = [{'text': 1, 'start': 'x', 'kind': None}]"),
            (lambda: session.inspect("1 + 1"), "answer['value'] = 7"),
            (lambda: session.equivalent("x", "x"), "answer['result'] = {'equivalent': 'maybe'}"),
            (lambda: session.trace("t"), "answer['trace'] = None")):
        await session.execute("x = torch.ones(1, requires_grad=True)\nt = (x * 2).sum()\n" + hostile(change, OTHERS))
        restarts = session.client.restarts
        answer = await asyncio.wait_for(call(), 60)
        assert session.client.restarts == restarts + 1, (change, answer)
        assert answer in ([], {}) or "is not of the shape" in str(answer), (change, answer)
    await assert_in_order(session)


def no_traceback(done: subprocess.CompletedProcess) -> None:
    said = done.stdout + done.stderr
    assert "Traceback (most recent call last)" not in said.replace("  Traceback", ""), said[-3000:]
    assert done.returncode in (0, 1), (done.returncode, said[-3000:])


@pytest.mark.parametrize("shape", ["duration_ms", "saved_bytes", "huge_duration"])
def test_run_reports_a_bent_reply_in_words_and_ends_normally(tmp_path, shape):
    script = tmp_path / "bent.py"
    script.write_text(hostile(STEP_SHAPES[shape]) + "t = torch.ones(2)\nprint('after', 6 * 7)\n")
    done = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=180, cwd=ROOT)
    no_traceback(done)
    assert done.returncode == 1 and "is not of the shape" in done.stdout, done.stdout
    assert "after 42" in done.stdout  # the rest of the script ran in the fresh kernel


def bent_lesson(folder, change: str, when: str) -> None:
    setup = textwrap.indent(hostile(change, when), "  ")
    (folder / "01-bent.md").write_text(
        f"---\nid: bent\ntitle: Bent\nsetup: |\n{setup}---\n\nSome prose.\n\n"
        "```python\nx = torch.ones(2, requires_grad=True)\n```\n\n"
        "```question\nid: q\ntype: predict\nprompt: What is 1 + 1?\nask: 1 + 1\nhints:\n  - one\n  - two\n```\n",
        encoding="utf-8")


LESSON_ATTACKS = {
    "inspect": ("answer['value'] = 7", OTHERS),
    "step": ("answer['notes'] = 7", "'duration_ms' in answer"),
}


@pytest.mark.parametrize("change, when", LESSON_ATTACKS.values(), ids=LESSON_ATTACKS.keys())
def test_lint_and_play_auto_survive_a_lesson_whose_setup_bends_replies(tmp_path, change, when):
    bent_lesson(tmp_path, change, when)
    linted = subprocess.run([*GRADREPL, "lint", str(tmp_path)], capture_output=True, text=True, timeout=180,
                            cwd=ROOT)
    no_traceback(linted)
    assert linted.returncode == 1 and "is not of the shape" in linted.stdout, linted.stdout + linted.stderr
    played = subprocess.run([*GRADREPL, "play", "bent", "--auto", "--lessons", str(tmp_path)], capture_output=True,
                            text=True, timeout=180, cwd=ROOT)
    no_traceback(played)
    assert "is not of the shape" in played.stdout + played.stderr, played.stdout + played.stderr


def test_the_schema_caps_are_the_kernels_own():
    from gradrepl.kernel import requests, tracebacks
    from gradrepl.kernel.inspect import graph, series, snapshot, summary, trace

    assert reply_schema.MAX_ALIASES == snapshot.MAX_ALIASES + 1
    assert reply_schema.SMALL_VALUES == summary.SMALL
    assert reply_schema.MAX_GRAPH_NODES == graph.MAX_NODES
    assert (reply_schema.MAX_TRACE_NODES, reply_schema.MAX_PASSES) == (trace.MAX_NODES, trace.MAX_PASSES)
    assert reply_schema.MAX_CAUSES == tracebacks.MAX_CAUSES
    assert reply_schema.MAX_SERIES == series.MAX_POINTS
    assert reply_schema.COMPLETION_LIMIT == requests.COMPLETION_LIMIT


def test_a_violation_names_the_field_and_never_quotes_its_value():
    reply = {"v": 1, "id": 5, "type": "reply", "ok": True, "result": None, "error": None, "notes": [],
             "duration_ms": 1.0, "removed": [], "tensors": [{"name": "t", "aliases": [], "shape": [1], "dtype": "d",
             "device": "cpu", "requires_grad": False, "is_leaf": True, "grad_fn": None, "retains_grad": False,
             "version": 0, "changed": True, "grad": None, "value": None, "saved_bytes": "\x1b]0;lots\x07"}]}
    with pytest.raises(reply_schema.Violation) as raised:
        reply_schema.check("execute", reply)
    assert str(raised.value) == "tensors[0].saved_bytes is text, not a count"


async def test_an_inspected_expression_raising_a_huge_message_is_capped_not_a_broken_protocol(session):
    restarts = session.client.restarts
    described = await asyncio.wait_for(session.inspect("(_ for _ in ()).throw(ValueError('x' * (2 << 20)))"), 60)
    assert session.client.restarts == restarts, described.get("message", "")[-300:]
    assert described["kind"] == "error" and described["type"] == "ValueError"
    assert "more characters not shown" in described["message"] and len(described["message"]) < 100_000


async def test_the_plain_repl_reports_a_bent_reply_and_goes_on(capsys):
    from tests.support.plain import drive

    from gradrepl.session import Session

    bend = ("import sys; w = sys.modules['gradrepl.kernel.worker']; r = w._bounded_reply; "
            "w._bounded_reply = lambda a: r({**a, 'duration_ms': 'soon'} if 'duration_ms' in a else a)")
    status = await drive(Session(), [bend + "\r", "6 * 7\r"])
    out = capsys.readouterr().out
    words = " ".join(out.split())  # the note is wrapped to the terminal's width
    assert status == 0 and "is not of the shape execute answers with" in words and "42" in out, out


async def test_the_tui_reports_a_bent_row_and_its_details_open_after(tmp_path):
    from tests.support.tui import Recorder, screen_text, until

    from gradrepl.history import History
    from gradrepl.tui.app import GradReplApp
    from gradrepl.tui.console.console_log import ConsoleLog
    from gradrepl.tui.messages import DetailsLoaded, StepFinished

    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(150, 45), message_hook=recorder) as pilot:
        for source in (hostile(STEP_SHAPES["saved_bytes"]) + "t = torch.ones(2)", "u = torch.zeros(3)"):
            done = len(recorder.of(StepFinished))
            app.submit(source)
            await until(pilot, lambda: len(recorder.of(StepFinished)) > done, f"step {source[-20:]!r}")
        bent, after = [message.result for message in recorder.of(StepFinished)][-2:]
        assert bent.kernel_event and "is not of the shape" in bent.kernel_event, bent
        logged = "\n".join(line.text for line in app.query_one(ConsoleLog).lines)
        assert "is not of the shape execute answers with" in " ".join(logged.split()), logged[-2000:]
        for name in ("t", "u"):  # t's row, had it been believed, held saved_bytes 'lots'
            loaded = len(recorder.of(DetailsLoaded))
            await app.show_details(name)
            await until(pilot, lambda: len(recorder.of(DetailsLoaded)) > loaded, f"the details of {name}")
            await pilot.pause(0.2)
        assert app.is_running and after.error is None and "u" in app.session.tensors
        assert "u  3 float32" in screen_text(app)


async def test_tensors_of_odd_shapes_and_text_values_are_no_broken_protocol(session):
    odd = ("empty_rows = torch.zeros(100, 0)\ndeep = torch.ones([1] * 60)\nc = torch.ones(2, dtype=torch.complex64)\n"
           "n = torch.tensor([float('nan'), float('inf')])\nb = torch.tensor([True, False])\n"
           "nested_t = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])\nbig = torch.ones(1000)")
    result = await session.execute(odd)
    assert result.kernel_event is None and result.error is None, result
    assert {"empty_rows", "deep", "c", "n", "b", "nested_t", "big"} <= set(session.tensors), session.tensors.keys()
    assert session.tensors["n"]["value"]["values"] == ["nan", "inf"]


async def test_completions_that_start_outside_the_typed_text_are_dropped(session):
    """A forged completion starting past the cursor (or before the text) once made prompt_toolkit's
    Completion assert in --plain: a traceback on the learner's terminal. Only sane ones come back."""
    forged = ("answer['completions'] = [{'text': 'ahead', 'start': 9, 'kind': 'x', 'signature': None}, "
              "{'text': 'behind', 'start': -4, 'kind': 'x', 'signature': None}, "
              "{'text': 'torch', 'start': 0, 'kind': 'module', 'signature': None}]")
    await session.execute(hostile(forged, OTHERS))
    found = await session.complete("tor", 3)
    assert [completion.text for completion in found] == ["torch"], found

    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from gradrepl.plain.repl import KernelCompleter

    tab = CompleteEvent(completion_requested=True)  # what prompt_toolkit passes for a Tab
    shown = [item async for item in KernelCompleter(session).get_completions_async(Document("tor", 3), tab)]
    assert [item.text for item in shown] == ["torch"]


def test_each_piece_of_a_reply_is_described_once():
    """protocol/shapes.py names a piece's keys and which are required; the schema built from it adds the
    types and sizes. A key in one but not the other is refused where the schema is built, and the
    record the schema checks replies with knows the shape's keys and nothing more."""
    from gradrepl.protocol import shapes

    specs = {key: reply_schema.NAME for key in shapes.Trace.__annotations__}
    with pytest.raises(TypeError, match=r"has \['stray'\]"):
        reply_schema.shaped(shapes.Trace, {**specs, "stray": reply_schema.NAME})
    with pytest.raises(TypeError, match=r"lacks \['note'\]"):
        reply_schema.shaped(shapes.Trace, {key: spec for key, spec in specs.items() if key != "note"})
    row = {"name": "x", "aliases": [], "shape": [2], "dtype": "torch.float32", "device": "cpu",
           "requires_grad": True, "is_leaf": True, "grad_fn": None, "retains_grad": False, "version": 0,
           "changed": True, "grad": None, "value": None, "saved_bytes": 0}
    assert set(row) == shapes.Row.__required_keys__
    assert reply_schema.ROW(row, ()) == row
    assert reply_schema.ROW({**row, "inspect_error": "why"}, ())["inspect_error"] == "why"
    for broken in ({k: v for k, v in row.items() if k != "version"}, {**row, "colour": "red"}):
        with pytest.raises(reply_schema.Violation):
            reply_schema.ROW(broken, ())
