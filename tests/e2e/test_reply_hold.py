"""Enter holds the screen's repaints for a quick step's reply (app.REPLY_HOLD): in a real terminal a slow
step still shows at once, and after a quick one the footer shows the keys of an idle kernel."""

from __future__ import annotations

from tests.support.tmux import E2E, panel_row, tutor

pytestmark = E2E


def test_a_slow_step_shows_while_it_runs_and_a_quick_one_leaves_the_idle_keys(tmp_path):
    term = tutor(tmp_path, 120, 40)
    try:
        term.wait_for(lambda s: "● idle" in s, "the kernel", timeout=60)
        term.type_then_pause("import time; time.sleep(3)")
        term.send("Enter")
        # the echo, and the footer rebuilt for the running step, long before it ends
        term.wait_for(lambda s: "In [1]: import time" in s and "busy" in s and "Interrupt" in s,
                      "the echo and Interrupt while it runs", timeout=2.5)
        term.wait_for(lambda s: "● idle" in s, "the slow step's end", timeout=30)
        term.type_then_pause("v = torch.tensor(1.5)")
        term.send("Enter")
        screen = term.wait_for(lambda s: (panel_row(s, "v") or "").find("1.5") > 0, "v's row")
        screen = term.wait_for(lambda s: "● idle" in s and "Kill kernel" in s, "the idle footer")
        assert "In [2]: v = torch.tensor(1.5)" in screen and "Interrupt" not in screen
    finally:
        term.close()
