"""`gradrepl run` sends a step as soon as the one before has replied: what a learner sees stays the
same as running the steps one by one (each step's output, its table, stop-on-error, crashes, timeouts)."""

import json
import signal
import subprocess

from tests.support.paths import GRADREPL
from tests.support.cli import run_json, steps


def test_each_step_keeps_its_own_output_and_table(tmp_path):
    script = tmp_path / "many.py"
    script.write_text("import sys\n" + "".join(
        f"t = torch.full(({i + 1},), {i}.0); print('step', {i}); print({i}, file=sys.stderr)\n" for i in range(40)))
    proc, lines = run_json(script)
    assert proc.returncode == 0, proc.stderr
    ran = steps(lines)[1:]
    assert [step["stdout"] for step in ran] == [f"step {i}\n" for i in range(40)]
    assert [step["stderr"] for step in ran] == [f"{i}\n" for i in range(40)]
    assert [[row["shape"] for row in step["tensors"] if row["name"] == "t"] for step in ran] == \
           [[[i + 1]] for i in range(40)]


def test_stop_on_error_runs_nothing_after_the_failing_step(tmp_path):
    later = tmp_path / "later.txt"
    script = tmp_path / "bad.py"
    script.write_text(f"import pathlib\nx = 1\n1/0\npathlib.Path({str(later)!r}).write_text('ran')\nprint('never')\n")
    proc, lines = run_json(script, "--stop-on-error", "--workspace", tmp_path)
    assert proc.returncode == 1
    assert [step["source"] for step in steps(lines)] == ["import pathlib", "x = 1", "1/0"]
    assert lines[-1] == {**lines[-1], "type": "summary", "steps": 3, "errors": 1, "skipped": 2}
    assert not later.exists()


def test_without_stop_on_error_the_steps_after_a_failure_run(tmp_path):
    later = tmp_path / "later.txt"
    script = tmp_path / "bad.py"
    script.write_text(f"import pathlib\n1/0\npathlib.Path({str(later)!r}).write_text('ran')\n")
    proc, lines = run_json(script, "--workspace", tmp_path)
    assert proc.returncode == 1
    assert [step["error"] and step["error"]["type"] for step in steps(lines)] == [None, "ZeroDivisionError", None]
    assert later.read_text() == "ran"


CRASH = 'a = torch.ones(2)\nimport os; os._exit(3)\nprint("after", "a" in dir())\nb = torch.zeros(1)\n'


def test_a_crash_mid_replay_is_reported_and_the_rest_runs_in_a_fresh_kernel(tmp_path):
    script = tmp_path / "crash.py"
    script.write_text(CRASH)
    proc, lines = run_json(script)
    assert proc.returncode == 1
    first, crashed, after, last = steps(lines)
    assert crashed["error"]["type"] == "KernelLost" and "status 3" in crashed["error"]["message"]
    assert "fresh kernel" in crashed["kernel_event"]
    assert crashed["removed"] == ["a"] and crashed["tensors"] == []
    assert after["stdout"] == "after False\n" and after["error"] is None
    assert [row["name"] for row in last["tensors"]] == ["b"]
    assert lines[0]["kernel"]["restarts"] == 0
    assert lines[-1] == {**lines[-1], "type": "summary", "steps": 4, "errors": 1, "skipped": 0}


def test_a_crash_with_stop_on_error_ends_the_replay(tmp_path):
    script = tmp_path / "crash.py"
    script.write_text(CRASH)
    proc, lines = run_json(script, "--stop-on-error")
    assert proc.returncode == 1
    assert [step["source"] for step in steps(lines)] == ["a = torch.ones(2)", "import os; os._exit(3)"]
    assert lines[-1] == {**lines[-1], "steps": 2, "errors": 1, "skipped": 2}


def test_a_script_that_exits_with_the_out_of_memory_status_is_not_said_to_run_out_of_memory(tmp_path):
    """86 is what the sympy-only kernel ends with out of memory; a script can pick it too: its own exit."""
    script = tmp_path / "exits.py"
    script.write_text("import os; os._exit(86)\n")
    proc, lines = run_json(script)
    (crashed,) = steps(lines)
    assert crashed["error"]["type"] == "KernelLost" and "status 86" in crashed["error"]["message"]
    assert "out of memory" not in json.dumps(crashed), crashed
    text = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=120)
    said = text.stdout + text.stderr
    assert "status 86" in said and "out of memory" not in said, said


def test_a_step_past_the_timeout_is_interrupted_and_the_next_one_runs(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text("import time\nn = 1\ntime.sleep(60)\nn += 1\nprint('next', n)\n")
    proc, lines = run_json(script, "--step-timeout", "1")
    assert proc.returncode == 1
    slow = steps(lines)[2]
    assert slow["error"]["type"] == "KeyboardInterrupt" and "1 s step timeout" in slow["error"]["explanation"]
    assert steps(lines)[4]["stdout"] == "next 2\n"


def test_every_line_holds_the_whole_table_as_plain_json(tmp_path):
    script = tmp_path / "table.py"
    script.write_text("β = torch.ones(2)\nw = torch.zeros(3, requires_grad=True)\nprint('naïve ✓')\n"
                      "del β\n(w * 2).sum().backward()\nw.grad\n")
    proc = subprocess.run([*GRADREPL, "run", "--json", str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(json.dumps(json.loads(line), ensure_ascii=False) == line for line in lines)
    table = [[(row["name"], row["changed"]) for row in json.loads(line)["tensors"]] for line in lines[1:-1]]
    assert table == [[("β", True)], [("β", False), ("w", True)], [("β", False), ("w", False)], [("w", False)],
                     [("w", True)], [("w", False)]]
    last = json.loads(lines[-2])
    assert last["tensors"][0]["grad"]["values"] == [2.0, 2.0, 2.0] and last["result"] == "tensor([2., 2., 2.])"
    assert json.loads(lines[3])["stdout"] == "naïve ✓\n" and json.loads(lines[4])["removed"] == ["β"]


def test_a_reader_that_leaves_early_ends_the_replay_quietly(tmp_path):
    script = tmp_path / "long.py"
    script.write_text("".join(f"x{i} = torch.ones({i % 7 + 1})\n" for i in range(400)))
    proc = subprocess.Popen([*GRADREPL, "run", "--json", str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = [proc.stdout.readline() for _ in range(3)]
    proc.stdout.close()  # as `gradrepl run --json ... | head -3` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0 and "Traceback" not in err and "Task" not in err, err
    assert json.loads(first[2])["source"] == "x1 = torch.ones(2)"


def test_ctrl_c_mid_replay_ends_it_with_status_130_and_whole_lines(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text("x = torch.ones(2)\ny = x * 2\nimport time; time.sleep(60)\nprint('never')\n")
    proc = subprocess.Popen([*GRADREPL, "run", "--json", str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = [proc.stdout.readline() for _ in range(3)]  # the header and two steps: the third is sleeping
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    printed = [json.loads(line) for line in lines + rest.splitlines()]
    assert [line.get("source") for line in printed] == [None, "x = torch.ones(2)", "y = x * 2"]
