"""`gradrepl check`: --at parsing here, the check itself in a real kernel through Session."""

import argparse
import json
import os
import re
import subprocess
import sys

import pytest

from gradrepl.commands import check
from tests.support.paths import ROOT



def run_check(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="gradrepl")
    check.register(parser.add_subparsers(dest="command"))
    return check.run(parser.parse_args(["check", *argv]))


@pytest.mark.parametrize("text, point", [
    ("x=2", {"x": 2.0}),
    ("x=2, y=-0.5", {"x": 2.0, "y": -0.5}),
    ("w=1e-3,b=0", {"w": 0.001, "b": 0.0}),
    ("", {}),
])
def test_parse_point(text, point):
    assert check.parse_point(text) == point


@pytest.mark.parametrize("text, words", [
    ("x", "not name=value"),
    ("x=", "not name=value"),
    ("x=two", "'two' is not a number"),
    ("x=inf", "finite"),
    ("x=1,x=2", "given twice"),
    ("1x=2", "not a variable name"),
])
def test_bad_points_are_refused_with_the_reason(text, words):
    with pytest.raises(ValueError, match=words):
        check.parse_point(text)


def test_bad_at_is_a_usage_error_before_any_kernel_starts():
    from gradrepl.errors import UsageError

    with pytest.raises(UsageError, match="--at: x=two"):
        run_check("x**2", "--at", "x=two")


def test_seed_example_prints_the_table_and_exits_0(capsys):
    assert run_check("x^2 + 3x", "--at", "x=2") == 0
    out = capsys.readouterr().out
    assert "2*x + 3" in out
    row = next(line for line in out.splitlines() if line.startswith("d/dx"))
    assert re.split(r"\s{2,}", row)[1:5] == ["2*x + 3", "7", "7", "7"] and row.endswith("✓")


def test_json_output_follows_the_issue_schema(capsys):
    assert run_check("x*y + sin(x)", "--at", "x=0,y=3", "--json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["point"] == {"x": 0.0, "y": 3.0} and result["agree"] is True
    assert result["grads"]["x"]["symbolic"] == "y + cos(x)"
    assert result["grads"]["x"]["autograd"] == 4.0


def test_a_disagreement_exits_1(capsys):
    assert run_check("exp(x)/(exp(x) + 1)", "--at", "x=800") == 1
    assert "overflow" in capsys.readouterr().out


def test_refused_input_exits_2_with_one_line_naming_problem_and_column(tmp_path, capsys):
    marker = tmp_path / "pwned"
    code = run_check(f"__import__('os').system('touch {marker}')", "--at", "x=1")
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err == "gradrepl check: not allowed: attribute access ('.system') at column 17\n"
    assert "Traceback" not in captured.err + captured.out
    assert not marker.exists()


def test_missing_variable_exits_2(capsys):
    assert run_check("x*y", "--at", "x=1") == 2
    assert "no value for y" in capsys.readouterr().err


def test_the_command_imports_neither_sympy_nor_torch_in_the_ui_process():
    script = (
        "import argparse, sys\n"
        "from gradrepl.commands import check\n"
        "p = argparse.ArgumentParser(); check.register(p.add_subparsers(dest='command'))\n"
        "code = check.run(p.parse_args(['check', 'x**2', '--at', 'x=3']))\n"
        "assert code == 0, code\n"
        "print(sorted(m for m in ('sympy', 'torch', 'numpy') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


# issue 22: a check whose kernel died says so in check's terms; the REPL's restart words (variables lost,
# history kept, steps from In [1]) are not true of a one-shot command.
async def test_a_check_whose_kernel_died_says_it_in_checks_terms(capsys):
    from gradrepl.commands.check import EXIT_NO_KERNEL, _report
    from gradrepl.session import Session

    async with Session() as session:
        dead = session.client.kernel
        dead.kill()
        await dead.exited
        code = _report(await session.check_expr("x**2", {"x": 2.0}), False)
    err = capsys.readouterr().err
    assert code == EXIT_NO_KERNEL and "gradrepl check: no kernel could run the check" in err, err
    assert not any(words in err for words in ("variables you defined", "history", "In [1]")), err
