"""Start-up: the banner tells the truth about torch (the first frame's layout: test_e2e_tmux)."""

from __future__ import annotations


from tests.support.tui import Recorder, gate_kernel_start, until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.messages import KernelReady


def log_text(app: GradReplApp) -> str:
    return "\n".join(line.text for line in app.query_one(ConsoleLog).lines)


async def test_banner_says_torch_is_imported_only_once_it_is(tmp_path, monkeypatch):
    gate = gate_kernel_start(monkeypatch)
    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "history.jsonl"))
    async with app.run_test(size=(100, 30), message_hook=recorder) as pilot:
        await pilot.pause()
        assert "importing torch" in log_text(app) and "is imported" not in log_text(app)
        gate.set()
        await until(pilot, lambda: recorder.of(KernelReady), "the kernel")
        await pilot.pause()
        version = app.session.kernel_info["torch"]
        assert f"torch {version} is imported" in log_text(app)
