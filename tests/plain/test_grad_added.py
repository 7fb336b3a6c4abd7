"""Across two backward calls, the plain table's .grad says which backward added what (issue 25), in the
words the TUI's panel uses (views.tables.grad_words): on a real pty, and in `gradrepl run`'s text."""

import subprocess

from tests.support.cli import run_json, steps
from tests.support.paths import GRADREPL
from tests.support.pty import screen_lines

TWO_BACKWARDS = ["x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2 + 3 * x", "y.backward(retain_graph=True)",
                 "y.backward()"]


def x_rows(lines: list[str]) -> list[str]:
    return [line for line in lines if line.lstrip("* ").startswith("x ")]


def test_the_step_table_and_tensors_say_what_the_second_backward_added(repl):
    repl.prompt(1)
    for step, line in enumerate(TWO_BACKWARDS, 2):
        repl.type(line + "\r")
        shown = screen_lines(repl.prompt(step))
    assert [row.split()[:5] for row in x_rows(shown)] == [["*", "x", "yes", "yes", "—"]]
    assert "14 (+7 at In [4])" in x_rows(shown)[0], shown  # the second backward added 7 to the first's 7
    repl.type("%tensors\r")  # looks only: takes no number
    repl.read_until(b"dtype")
    table = screen_lines(repl.prompt(5))
    assert "14 (+7 at In [4])" in x_rows(table)[0], table
    repl.type("x.grad.zero_()\r")
    repl.prompt(6)
    repl.type("%tensors\r")
    repl.read_until(b"dtype")
    table = screen_lines(repl.prompt(6))
    assert "(+" not in x_rows(table)[0] and x_rows(table)[0].split()[4] == "0", table  # emptied: no addition


def test_the_first_backward_writes_and_says_no_addition(repl):
    repl.prompt(1)
    for step, line in enumerate(TWO_BACKWARDS[:3], 2):
        repl.type(line + "\r")
        shown = screen_lines(repl.prompt(step))
    assert x_rows(shown)[0].split()[5] == "7" and "(+" not in x_rows(shown)[0], shown


def test_run_prints_what_the_second_backward_added(tmp_path):
    script = tmp_path / "twice.py"
    script.write_text("import torch\n" + "\n".join(TWO_BACKWARDS) + "\n")
    proc = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    steps = proc.stdout.split("── step ")
    third, fourth = steps[4], steps[5]  # `import torch` is step 1
    assert "y.backward(retain_graph=True)" in third and "(+" not in third
    assert "y.backward()" in fourth and "14 (+7 at In [5])" in fourth, proc.stdout


# Writes to x.grad no backward made: in place on the .grad, and through TensorBase's own setter (which the
# panel's wrapper on torch.Tensor.grad never sees); then a backward that does add, then both in one step.
BYPASSING = ["x = torch.tensor(2.0, requires_grad=True)", "(x ** 2 + 3 * x).backward()", "x.grad.mul_(2)",
             "torch._C.TensorBase.grad.__set__(x, torch.tensor(20.0))", "(x ** 2 + 3 * x).backward()",
             "x.grad.mul_(2); (x ** 2 + 3 * x).backward()", "(x ** 2 + 3 * x).backward(); x.grad.add_(1)"]


def test_a_grad_changed_by_no_backward_is_not_shown_as_added_by_one(tmp_path):
    script = tmp_path / "bypass.py"
    script.write_text("\n".join(BYPASSING) + "\n")
    proc, lines = run_json(script)
    assert proc.returncode == 0, proc.stderr
    assert [step["grads_set"] for step in steps(lines)] == [[], [], ["x"], ["x"], [], ["x"], ["x"]]
    text = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=120)
    shown = text.stdout.split("── step ")[1:]
    assert ["(+" in step for step in shown] == [False, False, False, False, True, False, False], text.stdout
    assert "27 (+7 at In [5])" in shown[4], shown[4]


def last_step(script, lines: list[str]) -> dict:
    script.write_text("\n".join(lines) + "\n")
    proc, out = run_json(script)
    assert proc.returncode == 0, proc.stderr
    return steps(out)[-1]


def x_grad(step: dict) -> object:
    return next(row["grad"] for row in step["tensors"] if row["name"] == "x")


# x.grad held 3; passes that never reach x, and then x.grad.mul_(5), in one step: the 12 is no addition.
X_HOLDS_3 = ["import torch", "x = torch.tensor(1.0, requires_grad=True)", "(x * 3).backward()",
             "z = torch.ones(2, requires_grad=True)"]


def test_a_grad_changed_after_more_passes_than_are_watched_is_not_shown_as_added(tmp_path):
    from gradrepl.kernel.inspect.grad_origin import PASSES_WATCHED

    step = last_step(tmp_path / "many.py", X_HOLDS_3 + [
        f"if True:\n    for _ in range({PASSES_WATCHED + 1}): z.sum().backward()\n    x.grad.mul_(5)"])
    assert step["error"] is None and x_grad(step)["values"] == 15, step
    assert "x" in step["grads_set"], step


def test_a_hook_of_a_pass_that_never_reaches_x_writes_x_grad_as_a_set(tmp_path):
    step = last_step(tmp_path / "hook.py", X_HOLDS_3 + [
        "h = z.register_hook(lambda g: (x.grad.mul_(5), g)[1])", "z.sum().backward()"])
    assert step["error"] is None and x_grad(step)["values"] == 15, step
    assert "x" in step["grads_set"], step


# A retained .grad of a tensor subclass whose __torch_dispatch__ raises once armed: reading the .grad's state
# runs none of it, so the kernel, the namespace and the steps' replies live on.
BOOM = ["import torch", "class Boom(torch.Tensor):\n    armed = False\n    @classmethod\n"
        "    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):\n        if Boom.armed:\n"
        "            raise {error}\n        return func(*args, **(kwargs or {{}}))",
        "w = torch.zeros(2, requires_grad=True)", "y = w * 1", "y.retain_grad()",
        "y.grad = torch.zeros(2).as_subclass(Boom)", "Boom.armed = True", "a = 1", "print(a, y.shape)"]


def test_a_grad_whose_dispatch_raises_neither_kills_the_kernel_nor_replaces_a_reply(tmp_path):
    for error in ("SystemExit(1)", "KeyboardInterrupt"):
        script = tmp_path / "boom.py"
        script.write_text("\n".join(BOOM).format(error=error) + "\n")
        _proc, out = run_json(script)
        ran = steps(out)
        assert [step["error"] for step in ran] == [None] * len(ran), (error, ran)
        assert [step["kernel_event"] for step in ran] == [None] * len(ran), (error, ran)
        assert ran[-1]["stdout"] == "1 torch.Size([2])\n", (error, ran[-1])
