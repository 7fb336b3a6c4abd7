"""No process of gradrepl outside the sandbox imports from the folder the tutor was started in, or from a
folder the kernel can write: modules planted there (as learner or lesson code with --workspace . can
plant them) never run unsandboxed. Judged from outside: each planted module writes a marker file to a
folder only unsandboxed code can write, then hands over to the real module so the session goes on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.support.pty import GRADREPL_COMMAND, PlainOnPty, wait_until, zygote_has_warmed

from gradrepl.client.options import KernelOptions
from gradrepl.session import Session

# What the zygote and a spawned worker import after start-up (torch and its dependencies, the idle
# imports of worker.WARM_LATER), gradrepl itself, and the names site.py looks for.
MODULES = ("jedi", "parso", "sympy", "mpmath", "torch", "numpy", "typing_extensions", "filelock", "networkx",
           "fsspec", "sitecustomize", "usercustomize")
PACKAGES = ("gradrepl", "jinja2")

PLANTED = '''
import os, sys
try:
    with open({marker!r}, "a") as _file:
        _file.write("%s imported by pid %d (%r)\\n" % (__name__, os.getpid(), sys.argv[:1]))
except OSError:
    pass  # in the kernel: the sandbox keeps the marker folder read-only, which is allowed
# Hand over to the real module, so that the session goes on and the test reaches its verdict.
import importlib.machinery, importlib.util
_start = {start!r}
_path = [entry for entry in sys.path if os.path.realpath(entry or ".") != _start]
_spec = None
for _finder in sys.meta_path:
    if _finder is importlib.machinery.PathFinder:
        _spec = _finder.find_spec(__name__, _path)
    elif hasattr(_finder, "find_spec"):
        _spec = _finder.find_spec(__name__, None)
    if _spec is not None and os.path.realpath(_spec.origin or "").startswith(_start + os.sep):
        _spec = None
    if _spec is not None:
        break
if _spec is not None:
    _real = importlib.util.module_from_spec(_spec)
    sys.modules[__name__] = _real
    _spec.loader.exec_module(_real)
'''


def plant(start: Path, markers: Path) -> None:
    real_start = os.path.realpath(start)
    for name in MODULES + PACKAGES:
        target = start / name / "__init__.py" if name in PACKAGES else start / f"{name}.py"
        target.parent.mkdir(exist_ok=True)
        target.write_text(PLANTED.format(marker=str(markers / f"{name}.txt"), start=real_start))


def ran(markers: Path) -> str:
    return "".join(path.read_text() for path in sorted(markers.iterdir()))


@pytest.fixture
def folders(tmp_path):
    start, markers = tmp_path / "start", tmp_path / "markers"
    start.mkdir()
    markers.mkdir()
    plant(start, markers)
    return start, markers


def plain_session(start: Path, *args: str) -> None:
    """A session as a learner has one: a few steps, completion, long enough for the idle zygote to
    import worker.WARM_LATER (sympy, jedi, dynamo), a step that imports sympy; then Ctrl-D."""
    repl = PlainOnPty(*args, cwd=start)
    try:
        banner = repl.prompt(1)
        kernel = repl.kernel_pid(banner)
        repl.type("x = torch.tensor(2.0, requires_grad=True)\r")
        repl.prompt(2)
        repl.type("(x ** 3).backward(); print('grad', x.grad.item())\r")
        repl.prompt(3)
        zygotes = repl.zygote_pids(kernel)
        assert zygotes, "no zygote found"
        wait_until(lambda: zygote_has_warmed(zygotes[0]), "the zygote's idle imports")
        repl.type("import sympy, jedi; print('imported', sympy.__name__)\r")
        repl.prompt(4)
        repl.type("quit\r")  # Ctrl-D would ask first: the namespace holds x
        assert repl.process.wait(timeout=60) == 0
    finally:
        repl.close()


@pytest.mark.timeout(900)  # two sessions whose zygotes import WARM_LATER, on a loaded machine
def test_modules_planted_in_the_start_folder_never_run_outside_the_sandbox(folders):
    start, markers = folders
    assert "current folder" in refused_workspace(".", cwd=start)  # learner code would write the start folder
    assert not ran(markers), f"planted modules ran outside the sandbox (with --workspace .):\n{ran(markers)}"
    plain_session(start)
    assert not ran(markers), f"planted modules ran outside the sandbox (later session):\n{ran(markers)}"


def test_a_run_imports_from_the_scripts_folder_only_inside_the_sandbox(folders):
    """`gradrepl run` puts the script's folder (here also the workspace) first on the kernel's sys.path,
    as `python FILE` does; the planted modules there run in the kernel alone, never in the zygote."""
    start, markers = folders
    (start / "script.py").write_text("import sympy, jedi\nprint('imported', sympy.__name__, jedi.__name__)\n")
    proc = subprocess.run([GRADREPL_COMMAND, "run", "--workspace", str(start), str(start / "script.py")],
                          capture_output=True, text=True, timeout=300, cwd=start.parent)
    assert proc.returncode == 0 and "imported sympy jedi" in proc.stdout, proc.stdout + proc.stderr
    assert not ran(markers), f"planted modules ran outside the sandbox (gradrepl run):\n{ran(markers)}"


SPAWNED = textwrap.dedent('''
    import asyncio, sys
    from gradrepl.client.options import KernelOptions
    from gradrepl.session import Session

    async def main():
        async with Session(KernelOptions(spawn=True, workspace=sys.argv[1])) as session:
            result = await session.execute("import sympy, jedi; print('spawned', sympy.__name__)")
            print(session.kernel_info["mode"], result.error is None, result.stdout.strip())

    asyncio.run(main())
''')


@pytest.mark.timeout(300)
def test_a_spawned_kernel_imports_nothing_from_the_start_folder(folders):
    start, markers = folders
    # -P: the harness itself must not import the planted gradrepl; the kernel it spawns gets no such help.
    done = subprocess.run([sys.executable, "-P", "-c", SPAWNED, str(start)], cwd=start, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["spawn", "True"], done.stdout
    assert not ran(markers), f"planted modules ran outside the sandbox (spawned kernel):\n{ran(markers)}"


@pytest.mark.timeout(300)
@pytest.mark.parametrize("exists", [True, False], ids=["existing", "not-yet-made"])
def test_a_workspace_that_holds_an_import_folder_is_refused(tmp_path, exists):
    """--workspace over a folder Python imports from (here a PYTHONPATH entry; as much a venv's
    site-packages, a user site not made yet, or gradrepl's own checkout) would let learner code plant
    a sitecustomize.py that every later gradrepl runs unsandboxed, the frontend first. A folder that
    does not exist yet counts: learner code can make it."""
    lib, marker = tmp_path / "lib", tmp_path / "marker.txt"
    if exists:
        lib.mkdir()
    script = tmp_path / "plant.py"
    planted = f"open({str(marker)!r}, 'a').write('ran')\n"
    script.write_text(f"import os\nos.makedirs({str(lib)!r}, exist_ok=True)\n"
                      f"open({str(lib / 'sitecustomize.py')!r}, 'w').write({planted!r})\n")
    env = {**os.environ, "PYTHONPATH": str(lib)}
    first = subprocess.run([GRADREPL_COMMAND, "run", "--workspace", str(tmp_path), str(script)], env=env,
                           cwd=tmp_path, capture_output=True, text=True, timeout=240)
    later = subprocess.run([GRADREPL_COMMAND, "lessons"], env=env, cwd=tmp_path, capture_output=True, text=True,
                           timeout=240)
    assert later.returncode == 0, later.stderr
    assert not marker.exists(), "learner code planted a module that ran outside the sandbox"
    assert first.returncode == 2, first.stdout + first.stderr
    assert f"--workspace: {tmp_path} holds {lib}" in first.stderr, first.stderr


def test_doctor_reports_the_safe_import_path():
    done = subprocess.run([GRADREPL_COMMAND, "doctor", "--json"], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    layer = json.loads(done.stdout)["sandbox"]["import_path"]
    assert layer["active"] and "never from the folder gradrepl was started in" in layer["detail"], layer


async def test_the_layer_is_missing_when_the_kernel_can_write_an_import_folder(tmp_path):
    """KernelOptions straight from code (no CLI check): the kernel itself finds the writable import folder."""
    async with Session(KernelOptions(workspace=str(tmp_path), extra_env={"PYTHONPATH": str(tmp_path)})) as session:
        layer = session.sandbox["import_path"]
    assert not layer["active"], layer
    assert f"learner code can write {tmp_path}" in layer["detail"], layer


def test_python_m_gradrepl_takes_the_start_folder_off_its_own_path(tmp_path):
    """`python -m gradrepl` (the frontend, not sandboxed) imports nothing planted in the start folder
    after its entry point, standard-library names included (subprocess, argparse, shutil)."""
    start, markers = tmp_path / "start", tmp_path / "markers"
    start.mkdir()
    markers.mkdir()
    for name in ("subprocess", "argparse", "shutil", "asyncio", "prompt_toolkit", "textual"):
        (start / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w').write('ran')\n")
    done = subprocess.run([sys.executable, "-m", "gradrepl", "--plain"], input="print(40 + 2)\n", cwd=start,
                          capture_output=True, text=True, timeout=180)
    assert sorted(path.name for path in markers.iterdir()) == [], done.stderr
    assert "42" in done.stdout, done.stdout + done.stderr


def refused_workspace(workspace, *, cwd, env=None, command=(GRADREPL_COMMAND,)) -> str:
    """`gradrepl run --workspace WORKSPACE` of a script that writes there: refused with exit 2, its words."""
    script = Path(cwd) / "writes.py"
    script.write_text("print('ran')\n")
    done = subprocess.run([*command, "run", "--workspace", str(workspace), str(script)], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=240)
    assert done.returncode == 2 and "ran" not in done.stdout, done.stdout + done.stderr
    return done.stderr


@pytest.mark.parametrize("place", ["venv-bin", "real-interpreter", "base-prefix", "inside-prefix"])
def test_a_workspace_over_the_interpreter_is_refused(tmp_path, place):
    """Learner code writing the interpreter's folder could swap .venv/bin/python (or the real one it
    links to): the next gradrepl, any command, would run the swapped program outside the sandbox."""
    folder = {"venv-bin": os.path.dirname(sys.executable),
              "real-interpreter": os.path.dirname(os.path.realpath(sys.executable)),
              "base-prefix": sys.base_prefix, "inside-prefix": os.path.join(sys.prefix, "include")}[place]
    if not os.path.isdir(folder):
        os.makedirs(folder)
    # `python -m gradrepl`: the venv's bin/ is then no import folder, only the interpreter's.
    stderr = refused_workspace(folder, cwd=tmp_path, command=(sys.executable, "-m", "gradrepl"))
    assert "runs outside the sandbox" in stderr, stderr


@pytest.mark.parametrize("variable", ["LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH"])
def test_a_workspace_over_a_folder_the_loader_reads_is_refused(tmp_path, variable):
    """A library planted in an $LD_LIBRARY_PATH folder (libffi.so.8) loads into the next frontend; an
    $LD_AUDIT or $LD_PRELOAD file's folder the same."""
    libs = tmp_path / "libs"
    libs.mkdir()
    value = str(libs / "audit.so") if variable == "LD_AUDIT" else str(libs)
    stderr = refused_workspace(libs, cwd=tmp_path, env={variable: value})
    assert f"--workspace: {libs} is a folder ${variable} names" in stderr, stderr


SHADOW = "open({marker!r}, 'a').write('gradrepl.py planted by the kernel ran outside the sandbox')\n"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("launcher", ["command", "python-m"])
@pytest.mark.parametrize("workspace", [".", ".."])
def test_python_m_gradrepl_never_runs_a_gradrepl_py_the_kernel_planted_in_its_start_folder(tmp_path, launcher,
                                                                                          workspace):
    """`python -m gradrepl` finds a gradrepl.py in the folder it is started in before any of gradrepl
    runs, so no kernel may write that folder: --workspace that is or holds the current folder is refused."""
    start, marker = tmp_path / "start", tmp_path / "marker.txt"
    start.mkdir()
    (start / "plant.py").write_text(f"open('gradrepl.py', 'w').write({SHADOW.format(marker=str(marker))!r})\n")
    command = [GRADREPL_COMMAND] if launcher == "command" else [sys.executable, "-m", "gradrepl"]
    first = subprocess.run([*command, "run", "plant.py", "--workspace", workspace], cwd=start,
                           capture_output=True, text=True, timeout=240)
    later = subprocess.run([sys.executable, "-m", "gradrepl", "lessons"], cwd=start, capture_output=True, text=True,
                           timeout=240)
    assert not marker.exists(), marker.read_text()
    assert later.returncode == 0, later.stderr
    assert first.returncode == 2, first.stdout + first.stderr
    assert "current folder" in first.stderr or "imports gradrepl" in first.stderr, first.stderr
