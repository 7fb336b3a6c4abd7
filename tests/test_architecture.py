"""The walls hold: import-linter's contracts (pyproject.toml) pass, and there is no import cycle at run time."""

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_the_import_contracts_hold():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint_imports, "import-linter is in the test extra: pip install -e '.[test]'"
    done = subprocess.run([lint_imports], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout


def test_every_module_imports_on_its_own():
    # A cycle shows up as an ImportError when a module in the middle of it is imported first.
    modules = ["gradrepl.tui.lesson.pane", "gradrepl.tui.app", "gradrepl.commands.learn", "gradrepl.cli",
               "gradrepl.tutor.lesson_run", "gradrepl.session.steps", "gradrepl.plain.repl"]
    for module in modules:
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True,
                              cwd=ROOT, timeout=60)
        assert done.returncode == 0, f"{module}: {done.stderr[-2000:]}"
