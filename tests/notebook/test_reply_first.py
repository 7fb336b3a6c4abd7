"""The panel in a notebook whose frontend shows it: a cell's reply and its idle status go out before the
panel reads the cell, and the deltas that follow (merged when cells come back to back) bring a view to
the kernel's own rows (a real ipykernel, driven by jupyter_client as a frontend is: the view's "rendered"
event on the panel's comm, then cells; the view's delta rule, panel.js's, applied here)."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("ipykernel")
pytest.importorskip("anywidget")
from jupyter_client.manager import start_new_kernel  # noqa: E402


@pytest.fixture
def kernel():
    manager, client = start_new_kernel(kernel_name="python3", startup_timeout=120)
    yield client
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def until_idle(client, msg_id: str, seen: list[dict]) -> None:
    """Read iopub into `seen` until the idle status of request `msg_id`."""
    while True:
        msg = client.get_iopub_msg(timeout=120)
        seen.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle" \
                and msg["parent_header"].get("msg_id") == msg_id:
            return


def run(client, code: str, seen: list[dict]) -> str:
    msg_id = client.execute(code)
    reply = client.get_shell_msg(timeout=120)
    assert reply["content"]["status"] == "ok", reply["content"]
    until_idle(client, msg_id, seen)
    return msg_id


def applied(rows: list[dict], words: dict, delta: dict) -> tuple[list[dict], dict]:
    """panel.js's msg:custom handler, in Python: what a view holds after one delta."""
    gone, fresh = set(delta["removed"]), {row["name"]: row for row in delta["rows"]}
    kept = []
    for row in rows:
        if row["name"] in gone:
            continue
        kept.append(fresh.pop(row["name"]) if row["name"] in fresh else {**row, "changed": False})
    words = {**words, **delta["words"]}
    for name in gone - set(delta["words"]):
        words.pop(name, None)
    return kept + list(fresh.values()), words


CELLS = ["import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)", "y = (x * x).sum()", "y.backward()",
         "z = x * 3", "del z", "z = x + 1", "del y", "w = torch.zeros(1)", "x = x.detach()"]


def test_a_shown_panel_reads_each_cell_after_its_reply_and_a_view_ends_with_the_kernels_rows(kernel):
    seen: list[dict] = []
    run(kernel, "%load_ext gradrepl", seen)
    opened = next(msg for msg in seen if msg["msg_type"] == "comm_open"
                  and "rows" in msg["content"]["data"].get("state", {}))
    panel, state = opened["content"]["comm_id"], opened["content"]["data"]["state"]
    kernel.shell_channel.send(kernel.session.msg("comm_msg", {
        "comm_id": panel, "data": {"method": "custom", "content": {"event": "rendered"}}}))
    ids = [run(kernel, source, seen) for source in CELLS]
    time.sleep(0.5)  # past the panel's send delay: the last deltas are out
    truth_id = run(kernel, "import json\nfrom gradrepl.notebook.extension import loaded\n"
                           "print(json.dumps([dict(r) for r in loaded(get_ipython()).cells.rows.values()]))", seen)
    truth = json.loads(next(msg["content"]["text"] for msg in seen if msg["msg_type"] == "stream"
                            and msg["parent_header"].get("msg_id") == truth_id))

    idle_at = {msg["parent_header"].get("msg_id"): index for index, msg in enumerate(seen)
               if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle"}
    rows, words = state["rows"], state["words"]
    deltas = 0
    for index, msg in enumerate(seen):
        content = msg["content"].get("data", {}).get("content", {}) if msg["msg_type"] == "comm_msg" else {}
        if "delta" in content:
            parent = msg["parent_header"].get("msg_id")
            assert parent in ids and index > idle_at[parent]  # the learner saw the cell end first
            rows, words = applied(rows, words, content["delta"])
            deltas += 1
    assert 1 <= deltas <= len(CELLS)
    assert rows == truth and set(words) == {row["name"] for row in truth}
    assert {row["name"] for row in truth} == {"x", "z", "w"}
