"""The walls hold: import-linter's contracts (pyproject.toml) pass, and there is no import cycle at run time."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT


def test_the_import_contracts_hold():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint_imports, "import-linter is in the test extra: pip install -e '.[test]'"
    done = subprocess.run([lint_imports], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    contracts = (ROOT / "pyproject.toml").read_text().count("[[tool.importlinter.contracts]]")
    assert f"{contracts} kept, 0 broken" in done.stdout


# Each module of the package, imported first in a child forked from an interpreter that holds the heavy
# third-party libraries but nothing of gradrepl: a cycle shows up as an ImportError when a module in the
# middle of it is imported first. `__main__` is left out (importing it runs the command line).
EVERY_MODULE_ALONE = r"""
import importlib, os, pkgutil, sys, traceback
import torch, sympy, textual.app, prompt_toolkit, jedi  # noqa: F401  (shared by the children, not gradrepl)
import gradrepl

names = [info.name for info in pkgutil.walk_packages(gradrepl.__path__, "gradrepl.")
         if not info.name.endswith(".__main__")]
for name in list(sys.modules):
    if name == "gradrepl" or name.startswith("gradrepl."):
        del sys.modules[name]
failed = []
for name in names:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(name)
            status = 0
        except BaseException:
            os.write(write, traceback.format_exc()[-2000:].encode())
            status = 1
        os._exit(status)
    os.close(write)
    with os.fdopen(read) as pipe:
        said = pipe.read()
    if os.waitpid(pid, 0)[1] != 0:
        failed.append(f"{name}: {said}")
print(len(names), "modules")
print("\n".join(failed))
sys.exit(1 if failed else 0)
"""


@pytest.mark.timeout(600)  # a fork and an import per module: minutes on a loaded machine, not a speed test
def test_every_module_imports_on_its_own():
    done = subprocess.run([sys.executable, "-c", EVERY_MODULE_ALONE], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    walked = int(done.stdout.split()[0])
    assert walked > 150, done.stdout  # the walk found the package, not one folder of it


# What the notebook panel will load in the user's own Python: the inspector, with torch and nothing of
# the sandbox, the worker, the client or a frontend. Any of those (or a frontend library) refused at
# import, in a fresh interpreter, and none of them loaded after a walk.
INSPECTOR_ALONE = r"""
import importlib, importlib.abc, pkgutil, sys

REFUSED = ("gradrepl.kernel.worker", "gradrepl.kernel.zygote", "gradrepl.kernel.sandbox", "gradrepl.kernel.janitor",
           "gradrepl.client", "gradrepl.session", "gradrepl.tui", "gradrepl.plain", "gradrepl.tutor",
           "gradrepl.commands", "textual", "prompt_toolkit", "jedi", "sympy")

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == refused or name.startswith(refused + ".") for refused in REFUSED):
            raise ImportError(f"the inspector imported {name}")

sys.meta_path.insert(0, Refuse())
import torch
import gradrepl.kernel.inspect as inspect
for module in pkgutil.iter_modules(inspect.__path__):
    importlib.import_module(f"gradrepl.kernel.inspect.{module.name}")
x = torch.ones(2, requires_grad=True)
rows, removed = inspect.Inspector().step({"x": x, "y": (x * 3).sum()})
assert sorted(row["name"] for row in rows) == ["x", "y"], rows
print(sorted(name for name in sys.modules if name.startswith(REFUSED)))
"""


def test_the_inspector_imports_with_torch_alone():
    done = subprocess.run([sys.executable, "-c", INSPECTOR_ALONE], capture_output=True, text=True, cwd="/",
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]", done.stdout
