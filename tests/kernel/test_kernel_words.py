"""The kernel sends codes and numbers, never sentences, for what it says about a step or a request
(issue 21 §2): each case's raw reply (as the client hands it over, before the session words it)
carries a code and names, and the session's result says it in views/remarks.py's words."""

from __future__ import annotations

import re

from gradrepl.protocol.messages import OUTPUT_CAP

_steps = iter(range(900, 1000))


async def raw_step(session, source: str, **fields) -> dict:
    return await session.client.request("execute", source=source, step=next(_steps), first_line=1, **fields)


def sentences(notes: list) -> list[str]:
    """Notes the kernel sent as text: only a warning's own words may be (torch's, 'UserWarning: ...')."""
    return [note for note in notes if isinstance(note, str) and not re.match(r"\w+Warning: ", note)]


async def test_a_cut_stream_is_a_code_with_its_numbers(session):
    source = f"print('x' * {OUTPUT_CAP + 1000})"
    raw = await raw_step(session, source)
    cut = [note for note in raw["notes"] if isinstance(note, dict)]
    assert cut == [{"code": "stream_truncated", "names": {"stream": "stdout", "dropped": 1001,
                                                          "limit_kib": OUTPUT_CAP // 1024}}], raw["notes"]
    assert sentences(raw["notes"]) == []
    said = await session.execute(source)
    assert f"stdout truncated: 1,001 bytes not shown (the limit is {OUTPUT_CAP // 1024} KiB per step)" in said.notes


async def test_a_skipped_name_is_a_code_with_the_guards_reason(session):
    source = "class Locked(dict):\n    def __getitem__(self, key):\n        raise KeyError(key)\nd = Locked(a=torch.ones(1))"
    raw = await raw_step(session, source)
    assert {"code": "panel_skips", "names": {"name": "d", "why": {"why": "raised", "error": "KeyError"}}} \
        in raw["notes"], raw["notes"]
    assert sentences(raw["notes"]) == []
    await session.execute("del d")
    said = await session.execute(source)
    assert ("panel skips d: reading it raised KeyError; it stays off the panel until d holds another object"
            in said.notes), said.notes


async def test_an_unreadable_message_or_repr_is_left_empty_beside_its_reason(session):
    sulky = "class Sulky(Exception):\n    def __str__(self):\n        raise RuntimeError('no words from me')\nraise Sulky()"
    raw = await raw_step(session, sulky)
    assert raw["error"]["message"] == "" and raw["error"]["unshown"] == {"why": "raised", "error": "RuntimeError"}
    said = await session.execute(sulky)
    assert said.error.message == "<the error message could not be shown: it raised RuntimeError>"
    assert said.error.traceback.endswith("Sulky: <the error message could not be shown: it raised RuntimeError>\n")
    grumpy = "class Grumpy:\n    def __repr__(self):\n        raise ValueError\nGrumpy()"
    raw = await raw_step(session, grumpy)
    assert raw["result"] is None and raw["result_unshown"] == {"why": "raised", "error": "ValueError", "type": "Grumpy"}
    said = await session.execute(grumpy)
    assert said.result == "<Grumpy object: its repr could not be shown: it raised ValueError>"
    value = await session.inspect("Grumpy()")
    assert value["repr"] == "<Grumpy object: its repr could not be shown: it raised ValueError>", value


async def test_timeit_sends_its_numbers(session):
    raw = await raw_step(session, "1 + 1", timeit=True)
    assert "display" not in raw and set(raw["timeit"]) == {"mean", "std", "runs", "loops"}, raw
    assert raw["timeit"]["runs"] == 7 and raw["timeit"]["loops"] >= 1


async def test_a_request_error_is_a_code_with_names(session):
    await session.execute("x = torch.ones(2, requires_grad=True)\nxs = {'a': 1}")
    cases = [("graph", {"name": "nope"}, "no_tensor", "no live tensor named 'nope' (see %tensors for the names)"),
             ("trace", {"name": "nope"}, "no_tensor", "no live tensor named 'nope' (see %tensors for the names)"),
             ("trace", {"name": "x"}, "trace_leaf", "x is a leaf: no operation made it"),
             ("series", {"name": "nope"}, "no_variable", "no variable named 'nope'"),
             ("series", {"name": "xs"}, "not_a_series", "xs is a dict, not a list of numbers or a tensor")]
    for op, fields, code, words in cases:
        raw = await session.client.request(op, **fields)
        assert raw["error"]["code"] == code, (op, raw)
        worded = await getattr(session, op)(fields["name"])
        assert worded.error.startswith(words), (op, worded.error)
    raw = await session.client.request("complete", code="x", cursor=5)
    assert raw["error"] == {"code": "cursor_outside", "names": {"cursor": 5, "length": 1}}, raw


async def test_a_symbolic_input_error_and_a_trace_note_are_codes(session):
    raw = await session.client.request("check_expr", expr="x.real", point={"x": 1})
    assert raw["check"]["error"] == {"code": "not_allowed_attribute", "names": {"attr": "real"}, "column": 2}, raw
    worded = await session.check_expr("x.real", {"x": 1})
    assert worded.error == "not allowed: attribute access ('.real')" and worded.column == 2, worded
    raw = await session.client.request("check", name="nosuch")
    assert raw["check"]["error"]["code"] == "not_a_tensor", raw
    assert (await session.check("nosuch")).error == "nosuch: no tensor; %check takes the name of a tensor"
    await session.execute("w = torch.ones(1, requires_grad=True)\ny = w\nfor _ in range(600):\n    y = y * 1.0")
    raw = await session.client.request("trace", name="y")
    assert raw["trace"]["note"] == {"code": "trace_capped", "names": {"nodes": 500}}, raw["trace"]["note"]
    worded = await session.trace("y")
    assert worded.data["trace"]["note"].startswith("the graph has more than 500 nodes: the 500 nearest the root")


async def test_a_help_page_is_its_fields_and_a_bare_help_a_code(session):
    raw = await session.client.request("help", expr="torch.zeros", source=True)
    fields = raw["display"]["fields"]
    assert "text" not in raw["display"] and fields["type"] == "builtin_function_or_method", raw["display"]
    assert fields["no_source"].endswith("zeros") and "source" not in fields
    page = (await session.execute("torch.zeros??")).display
    assert page["text"].startswith("Type:        builtin_function_or_method\nString form: <built-in")
    assert re.search(r"Source:\n<no Python source: \S*zeros is built in \(C/C\+\+\), or was typed where no file keeps it>",
                     page["text"]), page["text"]
    raw = await raw_step(session, "help()")
    assert raw["display"] == {"kind": "help", "title": "help", "code": "help_usage"}, raw["display"]
    said = await session.execute("help()\nhelp(len)")
    assert said.display["title"] == "help, help(builtins.len)"
    assert said.display["text"].startswith("help(obj) shows obj's documentation; obj? shows its signature")
    assert "Help on built-in function len" in said.display["text"]


def test_a_reply_too_large_is_a_code_with_its_sizes():
    from gradrepl.kernel.worker import _bounded_reply
    from gradrepl.protocol import messages, reply_schema
    from gradrepl.views.remarks import word_step

    huge = messages.reply(7, notes=["x" * messages.REPLY_CAP])
    raw = reply_schema.check("execute", messages.decode(_bounded_reply(huge)))
    assert raw["error"] == {"code": "reply_too_large", "names": {"mib": 16, "cap_mib": 16}}, raw
    said = messages.StepResult.from_payload(7, "", word_step(raw))
    assert said.error.type == "KernelError"
    assert said.error.message.startswith("the kernel's answer was 16 MiB, more than the 16 MiB a reply may hold")
