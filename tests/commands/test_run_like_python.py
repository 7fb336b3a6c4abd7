"""`gradrepl run FILE -- ARGS` runs a script as `python FILE ARGS` does (issue 24): its arguments, the
files and modules beside it, __file__, __doc__ and sys.exit. Each test runs both and compares."""

import json
import subprocess
import sys
import textwrap

from tests.support.paths import GRADREPL


def write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def python(script, *args):
    """`python FILE ARGS` from the script's folder, as a learner would start it."""
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120,
                          cwd=script.parent)


def gradrepl_run(script, *args, flags=(), cwd=None):
    """`gradrepl run --json FILE -- ARGS` (started elsewhere: the script's folder must not matter):
    (exit status, the script's stdout, its stderr, the JSON lines)."""
    proc = subprocess.run([*GRADREPL, "run", "--json", *flags, str(script), "--", *args], capture_output=True,
                          text=True, timeout=180, cwd=cwd)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    steps = [line for line in lines if line["type"] == "step"]
    return proc.returncode, "".join(s["stdout"] for s in steps), "".join(s["stderr"] for s in steps), lines, proc


def same_as_python(script, *args, cwd):
    code, out, err, lines, proc = gradrepl_run(script, *args, cwd=cwd)
    expected = python(script, *args)
    assert (code, out, err) == (expected.returncode, expected.stdout, expected.stderr), (proc.stderr, lines)
    return lines


ARGPARSE = '''\
    """Train for a few epochs (an argparse script)."""
    import argparse
    import torch

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("name")
    args = parser.parse_args()
    w = torch.zeros(1, requires_grad=True)
    for _ in range(args.epochs):
        loss = (w - 3).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            w -= args.lr * w.grad
        w.grad = None
    print(args.name, args.epochs, round(w.item(), 4))
'''


def test_an_argparse_script_gets_its_arguments(tmp_path):
    script = write(tmp_path / "project", "train.py", ARGPARSE)
    same_as_python(script, "--epochs", "3", "--lr", "0.5", "demo", cwd=tmp_path)
    same_as_python(script, "--help", cwd=tmp_path)  # usage on stdout, sys.exit(0)
    lines = same_as_python(script, "--epochs", "many", cwd=tmp_path)  # usage on stderr, sys.exit(2)
    assert lines[-1]["exit_status"] == 2 and lines[-1]["skipped"] > 0  # the steps after the exit never ran


def test_argv_and_file_are_the_scripts_own(tmp_path):
    script = write(tmp_path, "where.py", """\
        import os, sys
        print(os.path.basename(sys.argv[0]), sys.argv[1:], __file__ == os.path.abspath(sys.argv[0]))
        print(os.path.basename(__file__), __name__)
    """)
    lines = same_as_python(script, "4", "x y", cwd="/")
    assert "zygote" not in json.dumps(lines)


def test_a_data_file_beside_the_script_is_read(tmp_path):
    project = tmp_path / "project"
    write(project, "input.txt", "hello world\n")
    write(project, "data/more.csv", "1,2,3\n")
    script = write(project, "read.py", """\
        import os
        print(open("input.txt").read().strip())
        print(open(os.path.join(os.path.dirname(__file__), "data", "more.csv")).read().strip())
        print(sorted(os.listdir(".")))
    """)
    same_as_python(script, cwd=tmp_path)


def test_a_sibling_module_and_package_are_imported_from_the_scripts_folder(tmp_path):
    project = tmp_path / "project"
    write(project, "helpers.py", "def double(x):\n    return 2 * x\n")
    write(project, "pkg/__init__.py", "NAME = 'pkg beside the script'\n")
    write(project, "pkg/layers.py", "import torch\nlayer = torch.nn.Linear(2, 3)\n")
    script = write(project, "main.py", """\
        import helpers
        import pkg
        from pkg.layers import layer
        print(helpers.double(21), pkg.NAME, tuple(layer.weight.shape))
        print(helpers.__file__.endswith("project/helpers.py"))
    """)
    # A module of the same name in the folder gradrepl starts in is not the one imported.
    write(tmp_path, "helpers.py", "raise SystemExit('the wrong helpers')\n")
    same_as_python(script, cwd=tmp_path)


def test_doc_is_the_module_docstring_and_sys_exit_ends_the_run(tmp_path):
    script = write(tmp_path, "quits.py", '''\
        """What this script does."""
        import sys
        print(repr(__doc__))
        if len(sys.argv) > 1:
            sys.exit(sys.argv[1] if not sys.argv[1].isdigit() else int(sys.argv[1]))
        print("not reached when asked to stop")
    ''')
    for args in ((), ("0",), ("3",), ("a message",)):
        lines = same_as_python(script, *args, cwd=tmp_path)
        summary = lines[-1]
        assert summary["errors"] == 0, summary
        if args:
            assert summary["skipped"] == 1 and summary["exit_status"] == {"0": 0, "3": 3}.get(args[0], 1)


def test_text_mode_prints_what_python_prints_and_results_only_when_asked(tmp_path):
    script = write(tmp_path, "echo.py", '''\
        """A docstring python never prints."""
        import torch
        model = torch.nn.Linear(2, 2)
        model.train()
        1 + 1
        print("printed")
    ''')
    quiet = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=180)
    assert quiet.returncode == 0, quiet.stderr
    assert "printed" in quiet.stdout
    for echo in ("A docstring python never prints.'", "Linear(in_features", "\n2\n"):
        assert echo not in quiet.stdout, quiet.stdout
    shown = subprocess.run([*GRADREPL, "run", "--results", str(script)], capture_output=True, text=True,
                           timeout=180)
    assert "Linear(in_features=2" in shown.stdout and "\n2\n" in shown.stdout, shown.stdout


def test_sys_exit_in_text_mode_is_the_exit_status_with_one_note(tmp_path):
    script = write(tmp_path, "stop.py", "import sys\nprint('before')\nsys.exit(4)\nprint('after')\n")
    proc = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 4
    assert "before" in proc.stdout and "after\n" not in proc.stdout.replace(">>> print('after')", "")
    assert proc.stdout.count("the script called sys.exit() at line 3: exit status 4\n") == 1, proc.stdout


def test_a_refused_read_says_what_is_readable_and_how_to_allow_another(tmp_path):
    other = tmp_path / "elsewhere"
    write(other, "data.txt", "far away\n")
    script = write(tmp_path / "project", "far.py", f"print(open({str(other / 'data.txt')!r}).read().strip())\n")
    code, out, err, lines, proc = gradrepl_run(script)
    error = [line for line in lines if line["type"] == "step"][0]["error"]
    assert code == 1 and error["type"] == "PermissionError"
    assert str(tmp_path / "project") in error["explanation"] and "--readable" in error["explanation"], error
    code, out, err, lines, proc = gradrepl_run(script, flags=("--readable", str(other)))
    assert (code, out) == (0, "far away\n"), lines


def test_writing_beside_the_script_needs_it_to_be_the_workspace(tmp_path):
    project = tmp_path / "project"
    script = write(project, "save.py", "import torch\ntorch.save(torch.ones(2), 'weights.pt')\nprint('saved')\n")
    code, out, err, lines, proc = gradrepl_run(script)
    error = [line for line in lines if line["type"] == "step"][1]["error"]
    assert code == 1 and not (project / "weights.pt").exists()
    assert str(project) in error["explanation"] and "--workspace" in error["explanation"], error
    assert "Relative paths like 'model.pt' work" not in error["explanation"]  # not in a read-only folder
    code, out, err, lines, proc = gradrepl_run(script, flags=("--workspace", str(project)))
    assert (code, out) == (0, "saved\n") and (project / "weights.pt").exists(), lines


async def test_the_repl_argv_is_that_of_python_i(session):
    result = await session.execute("import sys, __main__\nprint(sys.argv, repr(__doc__), __main__.torch is torch)")
    assert result.stdout == "[''] None True\n", result


async def test_a_comment_that_ends_in_a_question_mark_is_code(session):
    result = await session.execute("n = 3  # how many?")
    assert result.error is None and result.display is None, result.error
    assert (await session.execute("n")).result == "3"


def test_trace_runs_a_script_as_run_does(tmp_path):
    """`gradrepl trace` takes the script path (run's), not the REPL's: a comment ending in '?' is code,
    `x?` a SyntaxError with its line, __file__ the script's; a failing step keeps its why-line."""
    script = write(tmp_path, "net.py", """\
        import os
        import torch
        n = 3  # how many?
        x = torch.ones(n, requires_grad=True)
        here = os.path.basename(__file__)
        loss = (x * 2).sum()
    """)
    proc = subprocess.run([*GRADREPL, "trace", str(script), "loss"], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert "MulBackward0" in proc.stdout
    broken = write(tmp_path, "broken.py", "import torch\nx = torch.arange(3)\nx.requires_grad_(True)\nloss = x.sum()\n")
    proc = subprocess.run([*GRADREPL, "trace", str(broken), "loss"], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 1
    assert f"{broken}:3: RuntimeError" in proc.stderr and "why:" in proc.stderr, proc.stderr
    assert "%" not in proc.stderr, proc.stderr  # CLI words: no %tensors, %trace


def test_trace_keeps_the_step_timeouts_why_line(tmp_path):
    script = write(tmp_path, "spin.py", "import torch\nwhile True:\n    pass\n")
    proc = subprocess.run([*GRADREPL, "trace", "--step-timeout", "1", str(script), "loss"], capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 1
    assert f"{script}:2" in proc.stderr and "why:" in proc.stderr and "--step-timeout" in proc.stderr, proc.stderr


def test_a_script_in_the_home_folder_does_not_open_the_home_folder(tmp_path):
    """The script's folder is read as python reads it, but not the home folder (~/.ssh and the rest):
    a script there is told so, and its neighbours stay unreadable."""
    import os
    from pathlib import Path

    home = Path(os.environ["HOME"])
    write(home, "secret.txt", "a key\n")
    script = write(home, "nosy.py", "print(open('secret.txt').read())\n")
    code, out, err, lines, proc = gradrepl_run(script)
    assert code == 1 and "a key" not in out
    assert "holds your home folder" in proc.stderr and "--readable" in proc.stderr, proc.stderr


def _readable_refused(folder, tmp_path, env=None):
    import os

    script = write(tmp_path, "reads.py", "print('ran')\n")
    proc = subprocess.run([*GRADREPL, "run", "--readable", str(folder), str(script)], capture_output=True, text=True,
                          timeout=180, env={**os.environ, **(env or {})})
    assert proc.returncode == 2 and "ran" not in proc.stdout, proc.stdout + proc.stderr
    assert f"--readable: {folder} holds your home folder" in proc.stderr, proc.stderr


def test_readable_that_holds_the_home_folder_is_refused(tmp_path):
    """--readable / or --readable ~ would let the script read ~/.ssh and every other secret there."""
    import os

    _readable_refused("/", tmp_path)
    _readable_refused(os.environ["HOME"], tmp_path)


def test_the_home_folder_is_the_accounts_too_not_only_HOME(tmp_path):
    """$HOME pointed elsewhere does not make the account's own home folder readable."""
    import os
    import pwd

    real_home = pwd.getpwuid(os.getuid()).pw_dir
    _readable_refused(real_home, tmp_path, env={"HOME": str(tmp_path / "elsewhere")})


def test_a_file_name_with_control_characters_reaches_the_terminal_visible(tmp_path):
    """A downloaded script's name is anyone's: an escape sequence in it (here one that retitles the
    terminal) is shown as \\x1b..., never sent raw, by run's header and trace's error words."""
    script = write(tmp_path, "n\x1b]0;FNAME\x07.py", "x = 1\n")
    for command in (["run", str(script)], ["trace", str(script), "nosuch"]):
        proc = subprocess.run([*GRADREPL, *command], capture_output=True, text=True, timeout=180)
        both = proc.stdout + proc.stderr
        assert "\x1b" not in both and "\x07" not in both, (command, both)
        assert "n\\x1b]0;FNAME\\x07.py" in both, (command, both)


def test_torch_threads_as_in_python(tmp_path):
    """MKL is free to use fewer threads for a small op in the kernel, as in python. torch.set_num_threads (the kernel sets its count after the fork) also turns MKL's dynamic threading
    off; then a 512-element sin or a small matmul waits for every thread, milliseconds on a busy machine."""
    script = write(tmp_path, "threads.py", '''\
        import ctypes
        import os
        import torch

        try:
            mkl = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
            dynamic = mkl.mkl_serv_get_dynamic()
        except (OSError, AttributeError):
            dynamic = "no MKL"
        print("MKL dynamic", dynamic)
    ''')
    same_as_python(script, cwd=tmp_path)


def test_a_forged_exit_status_is_not_taken_as_the_process_status(tmp_path):
    """Kernel code can make a step's reply say any schema-valid exit_status: one no process can have
    (beyond 0..255) is said to be invalid, and the run exits 1, never 0 or the forged number."""
    script = write(tmp_path, "forge.py", """\
        import sys
        import gradrepl.kernel.script_run as script_run
        script_run.exit_status = lambda exc: 1 << 62
        sys.exit(0)
    """)
    proc = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert str(1 << 62) not in proc.stdout and "exit status 0" not in proc.stdout, proc.stdout
    assert "not a valid exit status" in proc.stdout, proc.stdout
