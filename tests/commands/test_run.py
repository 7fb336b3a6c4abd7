"""`gradrepl run` on the seed examples, compared with what plain torch computes."""

import os
import subprocess
import sys

from tests.support.cli import run_json, steps
from tests.support.paths import GRADREPL, ROOT

EXAMPLES = ROOT / "examples"


def plain_torch(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_first_gradient_matches_plain_torch():
    proc, lines = run_json(EXAMPLES / "first_gradient.py")
    assert proc.returncode == 0, proc.stderr
    assert lines[0]["type"] == "session" and "sandbox" in lines[0]
    assert lines[-1] == {**lines[-1], "type": "summary", "errors": 0}
    expected = plain_torch((EXAMPLES / "first_gradient.py").read_text())
    printed = "".join(step["stdout"] for step in steps(lines))
    assert printed == expected == "10.0\n7.0\n"
    backward = next(step for step in steps(lines) if step["source"] == "y.backward()")
    x = next(row for row in backward["tensors"] if row["name"] == "x")
    assert x["grad"] == {**x["grad"], "values": 7.0}
    assert x["changed"] is True
    y = next(row for row in backward["tensors"] if row["name"] == "y")
    assert y["grad_fn"] == "AddBackward0"
    assert y["changed"] is True and y["saved_bytes"] == 0  # backward freed what y's graph saved


def test_accumulation_after_two_backward_calls():
    proc, lines = run_json(EXAMPLES / "accumulate.py")
    assert proc.returncode == 0, proc.stderr
    echoed = next(step for step in steps(lines) if step["source"] == "x.grad")
    assert echoed["result"] == "tensor(14.)"
    second_backward = [step for step in steps(lines) if step["source"] == "y.backward()"][1]
    assert any("accumulate" in note for note in second_backward["notes"])


def test_linear_regression_learns_what_plain_torch_learns():
    proc, lines = run_json(EXAMPLES / "linear_regression.py")
    assert proc.returncode == 0, proc.stderr
    expected = plain_torch((EXAMPLES / "linear_regression.py").read_text())
    assert steps(lines)[-1]["stdout"] == expected
    final = {row["name"]: row for row in steps(lines)[-1]["tensors"]}
    assert {"x", "y_true", "w", "b", "y_pred", "loss"} <= set(final)
    assert final["w"]["is_leaf"] and final["w"]["grad"]["values"] == [0.0]


def test_error_step_gives_exit_1_and_explanation(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("import torch\nx = torch.arange(3)\nx.requires_grad_(True)\nprint('still running')\n")
    proc, lines = run_json(script)
    assert proc.returncode == 1
    failed = steps(lines)[2]
    assert failed["error"]["type"] == "RuntimeError"
    assert "floating point" in failed["error"]["explanation"]
    assert steps(lines)[3]["stdout"] == "still running\n"


def test_stop_on_error(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("1/0\nprint('never')\n")
    proc, lines = run_json(script, "--stop-on-error")
    assert proc.returncode == 1
    assert len(steps(lines)) == 1 and lines[-1]["skipped"] == 1


def test_usage_errors_exit_2_without_traceback(tmp_path):
    missing = subprocess.run([*GRADREPL, "run", str(tmp_path / "nope.py")], capture_output=True, text=True)
    assert missing.returncode == 2 and "no such file" in missing.stderr and "Traceback" not in missing.stderr
    syntax = tmp_path / "syntax.py"
    syntax.write_text("print('side effect')\nx = (\n")
    bad = subprocess.run([*GRADREPL, "run", str(syntax)], capture_output=True, text=True)
    assert bad.returncode == 2 and ":2:" in bad.stderr and "nothing was run" in bad.stderr
    assert "side effect" not in bad.stdout
    latin = tmp_path / "latin.py"
    latin.write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    enc = subprocess.run([*GRADREPL, "run", str(latin)], capture_output=True, text=True)
    assert enc.returncode == 2 and "UTF-8" in enc.stderr
    fine = tmp_path / "fine.py"
    fine.write_text("x = 1\n")
    limit = subprocess.run([*GRADREPL, "run", str(fine), "--memory-limit", "lots"], capture_output=True, text=True)
    assert limit.returncode == 2 and "--memory-limit" in limit.stderr and "Traceback" not in limit.stderr
    misplaced = subprocess.run([*GRADREPL, "--json", "run", str(fine)], capture_output=True, text=True)
    assert misplaced.returncode == 2 and "Traceback" not in misplaced.stderr


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path):
    """A blocking open of a FIFO waits for a writer that never comes: the script is refused unopened."""
    fifo = tmp_path / "script.py"
    os.mkfifo(fifo)
    refused = subprocess.run([*GRADREPL, "run", str(fifo)], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "named pipe" in refused.stderr and "Traceback" not in refused.stderr


def test_two_statements_on_one_line_run_once(tmp_path):
    script = tmp_path / "count.py"
    script.write_text('n = 0\nn += 1; print("n is", n)\nprint("then", n)\n')
    proc, lines = run_json(script)
    assert proc.returncode == 0, proc.stderr
    assert [step["source"] for step in steps(lines)] == ["n = 0", 'n += 1; print("n is", n)', 'print("then", n)']
    assert "".join(step["stdout"] for step in steps(lines)) == "n is 1\nthen 1\n"


def test_tracebacks_name_the_file_and_its_lines(tmp_path):
    (tmp_path / "nested.py").write_text("def g(x):\n    return x / 0\n\n\ndef f(x):\n    return g(x)\n\n\nf(1)\n")
    proc = subprocess.run([*GRADREPL, "run", "nested.py"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert proc.returncode == 1
    assert ('  File "nested.py", line 9, in <module>\n    f(1)\n  File "nested.py", line 6, in f\n'
            '    return g(x)\n  File "nested.py", line 2, in g\n    return x / 0\n') in proc.stdout
    assert "<step" not in proc.stdout and "gradrepl/" not in proc.stdout


def test_continuation_lines_show_dots(tmp_path):
    script = tmp_path / "loop.py"
    script.write_text("total = 0\nfor i in range(3):\n    total += i\nprint(total)\n")
    proc = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert ">>> for i in range(3):\n...     total += i\n" in proc.stdout
    assert ">>>     total" not in proc.stdout


def test_an_error_the_compiler_finds_names_the_script_line(tmp_path):
    script = tmp_path / "late.py"
    script.write_text("x = 1\n\n\nreturn x\nprint('after')\n")
    proc, lines = run_json(script)
    assert proc.returncode == 1
    error = steps(lines)[1]["error"]
    assert error["type"] == "SyntaxError" and error["message"] == "'return' outside function (line 4)"
    assert steps(lines)[2]["stdout"] == "after\n"
