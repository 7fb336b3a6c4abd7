"""What `gradrepl run` promises, said where its users look: its help."""

import subprocess

from tests.support.paths import GRADREPL, ROOT


def test_run_help_says_the_exit_status_is_only_as_honest_as_the_script():
    shown = subprocess.run([*GRADREPL, "run", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    text = " ".join(shown.stdout.split())
    assert shown.returncode == 0, shown.stderr
    assert "only as honest as the script" in text, text
    assert "not a grade" in text, text
