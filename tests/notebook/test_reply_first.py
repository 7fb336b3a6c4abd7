"""The panel in a notebook whose frontend shows it: a cell's reply and its idle status go out before the
panel reads the cell, and the panel's delta for that cell follows, whole (a real ipykernel, driven by
jupyter_client as a frontend is: the view's "rendered" event on the panel's comm, then cells)."""

from __future__ import annotations

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


def test_a_shown_panel_reads_each_cell_after_its_reply_and_misses_none(kernel):
    seen: list[dict] = []
    run(kernel, "%load_ext gradrepl", seen)
    panel = next(msg["content"]["comm_id"] for msg in seen if msg["msg_type"] == "comm_open"
                 and "rows" in msg["content"]["data"].get("state", {}))
    kernel.shell_channel.send(kernel.session.msg("comm_msg", {
        "comm_id": panel, "data": {"method": "custom", "content": {"event": "rendered"}}}))
    cells = ["import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)", "y = (x * x).sum()", "y.backward()"]
    ids = [run(kernel, source, seen) for source in cells]
    run(kernel, "pass", seen)  # the last cell's delta is out by this one's end

    def delta_of(msg_id: str) -> tuple[int, dict]:
        found = [(index, msg["content"]["data"]["content"]["delta"]) for index, msg in enumerate(seen)
                 if msg["msg_type"] == "comm_msg" and msg["parent_header"].get("msg_id") == msg_id
                 and "delta" in msg["content"]["data"].get("content", {})]
        assert len(found) == 1, (msg_id, found)
        return found[0]

    for msg_id in ids:
        idle = next(index for index, msg in enumerate(seen) if msg["msg_type"] == "status"
                    and msg["content"]["execution_state"] == "idle" and msg["parent_header"].get("msg_id") == msg_id)
        assert delta_of(msg_id)[0] > idle  # the learner saw the cell end first
    assert [row["name"] for row in delta_of(ids[0])[1]["rows"]] == ["x"]
    assert [row["name"] for row in delta_of(ids[1])[1]["rows"]] == ["y"]
    backward = {row["name"]: row for row in delta_of(ids[2])[1]["rows"]}
    assert backward["x"]["grad"]["values"] == [2.0, 4.0] and backward["x"]["changed"] is True
