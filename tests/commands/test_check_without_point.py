"""`gradrepl check EXPR` without --at: the symbolic derivatives from the sympy-only kernel
(kernel/symbolic_kernel.py), which is sandboxed as every kernel is and never imports torch, nor does the
command's own process. Real processes throughout: the command as a learner runs it, the kernel by Session."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gradrepl.client.options import SYMBOLIC_KERNEL, KernelOptions
from gradrepl.commands import check
from gradrepl.session import Session
from tests.support.paths import GRADREPL, ROOT

# The command's own process: what it imported, whether it launched the zygote (which imports torch),
# and the pid of every kernel it spawned, read from /proc while it was alive (its maps: libtorch or not).
WRAPPER = """
import asyncio, sys
from gradrepl import cli
from gradrepl.client import kernel_client, launch
launched, maps = [], []
real_early = launch.start_zygote_early
def recorded():
    launched.append(1)
    real_early()
launch.start_zygote_early = recorded
real_open = kernel_client.KernelClient._open_kernel
async def opened(self):
    kernel = await real_open(self)
    maps.append((self.options.kernel_module, "libtorch" in open(f"/proc/{kernel.pid}/maps").read()))
    return kernel
kernel_client.KernelClient._open_kernel = opened
try:
    code = cli.main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print("imported:", sorted(name for name in ("torch", "sympy") if name in sys.modules), "zygote:", bool(launched),
      "kernels:", maps, "exit:", code)
"""


def wrapped(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, env=env,
                          timeout=180, stdin=subprocess.DEVNULL)


def test_without_a_point_the_derivatives_come_from_a_kernel_that_never_maps_torch():
    done = wrapped("check", "x**2 + 3*x")
    assert "f = x**2 + 3*x\nd/dx = 2*x + 3\n" in done.stdout, (done.stdout, done.stderr)
    assert "for the numeric check give a point, e.g. --at x=1" in done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last == f"imported: [] zygote: False kernels: [('{SYMBOLIC_KERNEL}', False)] exit: 2", (last, done.stderr)


def test_with_a_point_the_full_kernel_checks_as_before():
    """The wrapper sees a kernel with torch here: what it reads would tell the sympy-only kernel apart."""
    done = wrapped("check", "x**2 + 3*x", "--at", "x=2")
    last = done.stdout.strip().splitlines()[-1]
    assert last == "imported: [] zygote: True kernels: [('gradrepl.kernel.worker', True)] exit: 0", (last, done.stderr)


@pytest.mark.parametrize("argv, code, said", [
    (["x**2 + 3*x"], check.EXIT_BAD_INPUT, "--at x=1"),                           # no point, none can be asked
    (["open('/etc/passwd')"], check.EXIT_BAD_INPUT, "unknown function 'open'"),  # no call but the math ones
    (["x.__class__"], check.EXIT_BAD_INPUT, "at column 2"),
    (["x**2", "--json"], check.EXIT_BAD_INPUT, "--at x=1"),
    (["3"], check.EXIT_AGREE, ""),                                              # a constant: the full check, no point
    (["x**2", "--memory-limit", "1M"], check.EXIT_BAD_INPUT, "ran out of memory"),  # as the full kernel says it
])
def test_exit_codes_without_a_point_are_the_ones_help_promises(argv, code, said):
    done = subprocess.run([*GRADREPL, "check", *argv], capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert said in done.stderr
    assert "Traceback" not in done.stderr


async def test_json_without_a_point_is_one_object_with_the_derivatives(capsys):
    import json

    assert await check._check("x*y", {}, True, KernelOptions()) == check.EXIT_BAD_INPUT
    data = json.loads(capsys.readouterr().out)
    assert data == {"expr": "x*y", "formula": "x*y", "needs_point": ["x", "y"], "derivatives": {"x": "y", "y": "x"}}


@pytest.fixture
async def symbolic_session():
    session = Session(KernelOptions(spawn=True, kernel_module=SYMBOLIC_KERNEL))
    await session.start()
    yield session
    await session.close()


def _status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status") as status:
        return dict(line.rstrip("\n").split(":\t", 1) for line in status if ":\t" in line)


async def test_the_sympy_only_kernel_applies_the_sandbox_every_kernel_applies(symbolic_session, session):
    """The same layers as a full kernel's, active where the full kernel's are; and, read from outside
    in /proc, its seccomp filter, no_new_privs and no capabilities."""
    symbolic = {name: layer["active"] for name, layer in symbolic_session.sandbox.items()}
    full = {name: layer["active"] for name, layer in session.sandbox.items()}
    assert symbolic == full
    assert all(symbolic.values()) or not all(full.values())
    pid = symbolic_session.client.kernel.pid
    status = _status(pid)
    assert (status["Seccomp"], status["NoNewPrivs"], status["CapEff"]) == ("2", "1", "0000000000000000"), status
    assert "torch" not in symbolic_session.client.kernel.ready  # it has none to name


async def test_the_sympy_only_kernel_answers_over_the_protocol_and_never_maps_torch(symbolic_session):
    reply = await symbolic_session.check_expr("sin(x)*y", {})
    assert reply.error is None and reply.data["derivatives"] == {"x": "y*cos(x)", "y": "sin(x)"}
    refused = await symbolic_session.check_expr("().__class__", {})  # the same safe reader as the full kernel's
    assert "not allowed" in refused.error and refused.column == 3, refused
    maps = open(f"/proc/{symbolic_session.client.kernel.pid}/maps").read()
    assert "libtorch" not in maps and "/torch/" not in maps


async def test_the_sympy_only_kernel_refuses_what_needs_torch(symbolic_session):
    """A point (or a step) is the full kernel's work: refused with a request error's code, not computed."""
    at_point = await symbolic_session.check_expr("x**2", {"x": 2.0})
    assert at_point.error == "unknown op 'check_expr'" and not at_point.data and not at_point.lost
    ran = await symbolic_session.client.request("execute", source="import torch", step=1)
    assert ran["ok"] is False and ran["error"] == {"code": "unknown_op", "names": {"op": "execute"}}
    maps = open(f"/proc/{symbolic_session.client.kernel.pid}/maps").read()
    assert "libtorch" not in maps


def test_a_tiny_memory_limit_is_out_of_memory_every_time():
    """Under 1 MiB above the kernel the sympy-only kernel fails wherever an allocation does: in the derivative
    (a reply says so), listing sympy's folders (OSError ENOMEM), or reading the next request (no reply can
    say it: the kernel ends with protocol.OUT_OF_MEMORY_EXIT). Each is out of memory, exit 2, never exit 3."""
    for _ in range(6):
        done = subprocess.run([*GRADREPL, "check", "x**2", "--memory-limit", "1M"], capture_output=True, text=True,
                              timeout=180, stdin=subprocess.DEVNULL)
        assert (done.returncode, "ran out of memory" in done.stderr) == (check.EXIT_BAD_INPUT, True), done.stderr


def _checked(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*GRADREPL, "check", "x**2", *args], capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("limit, at", [("16M", ()), ("30M", ()), ("16M", ("--at", "x=1")), ("40M", ("--at", "x=1"))])
def test_a_limit_too_small_for_the_checker_says_so_not_that_the_expression_is_too_large(limit, at):
    """Under a few dozen MiB the checker itself (sympy, and torch's crosscheck at a point) does not fit: the
    smallest formula cannot be too large, an ImportError loading a library under the limit is no missing
    module. Each run says the limit is too small, and how much the checker needs, with exit 2."""
    for _ in range(3):
        done = _checked("--memory-limit", limit, *at)
        assert done.returncode == check.EXIT_BAD_INPUT, done.stderr
        assert "memory limit is too small for the checker" in done.stderr, done.stderr
        assert f"{check.CHECKER_NEEDS_MIB}M" in done.stderr and "too large" not in done.stderr, done.stderr


def test_the_memory_the_checker_is_said_to_need_is_enough():
    for at in ((), ("--at", "x=1")):
        done = _checked("--memory-limit", f"{check.CHECKER_NEEDS_MIB}M", *at)
        assert "d/dx = 2*x" in done.stdout or "agree" in done.stdout, done.stderr
