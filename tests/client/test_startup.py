"""Cold start: the zygote starts before the frontend has parsed its flags, and the first kernel
does not wait for what only some requests need (sympy, jedi, torch._dynamo)."""

import asyncio
import os

import pytest

from gradrepl import cli
from gradrepl.client import launch
from gradrepl.session import Session
from tests.support.process import cpu_seconds


@pytest.mark.parametrize("argv, starts", [
    (["run", "script.py"], True),
    (["--memory-limit", "2G", "play", "01-tracking"], True),  # a flag's value is not the command
    (["check", "x**2", "--at", "x=1"], False),  # check launches it itself once its arguments are read
    (["--disk-limit", "256M"], True),
    ([], True),                      # the tutor itself
    (["--plain"], True),
    (["lessons"], False),
    (["run", "--help"], False),
    (["--version"], False),
    (["--disk-limit", "1G", "run", "script.py"], True),
])
def test_commands_that_need_a_kernel_start_the_zygote_first(argv, starts):
    assert cli._starts_a_kernel(argv) is starts


@pytest.mark.parametrize("argv, opens", [
    ([], True), (["--memory-limit", "2G"], True), (["learn", "01-tracking"], True),
    (["--plain"], False), (["run", "script.py"], False), (["quiz"], False), (["learn", "--help"], False),
])
def test_only_the_tutor_tui_holds_the_collector_off_until_its_first_frame(argv, opens):
    assert cli._opens_the_tui(argv) is opens


def test_a_command_imports_no_other_commands_modules():
    import subprocess
    import sys

    probe = ("import sys\nfrom gradrepl import cli\nparser, modules = cli.build_parser(sys.argv[1:])\n"
             "parser.parse_args(sys.argv[1:])\n"
             "print(sorted(modules), [name for name in ('gradrepl.tutor.lesson', 'yaml', 'markdown_it') if name in sys.modules])")
    done = subprocess.run([sys.executable, "-c", probe, "--workspace", "/tmp", "run", "x.py"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "['run'] []\n"


@pytest.mark.parametrize("argv, words", [
    (["--help"], ["run", "check", "lessons", "quiz"]),     # every command listed
    (["-h", "run"], ["run", "check", "lessons", "quiz"]),
    (["run", "--help"], ["--stop-on-error"]),
])
def test_help_still_lists_what_it_should(argv, words):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "gradrepl", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and all(word in done.stdout for word in words), done.stdout


def test_an_unknown_command_names_the_known_ones():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "gradrepl", "nosuch"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "invalid choice" in done.stderr and "'lessons'" in done.stderr


async def test_the_first_session_adopts_the_early_zygote_and_runs_steps():
    launch.start_zygote_early()
    early = launch.early().process
    async with Session() as session:
        assert session.client.zygote.process is early  # no second interpreter importing torch
        assert (await session.execute("6 * 7")).result == "42"
    assert early.poll() is not None  # closing the session ended it
    assert launch.early() is None


async def test_a_session_with_other_settings_ends_the_early_zygote_and_starts_its_own():
    from gradrepl.client.options import KernelOptions

    launch.start_zygote_early()
    early, early_scratch = launch.early().process, launch.early().args[0]
    async with Session(KernelOptions(disk_limit=32 << 20)) as session:
        assert session.client.zygote.process is not early and early.poll() is not None
        assert session.client.scratch_dir != early_scratch
        assert (await session.execute("6 * 7")).result == "42"
    assert launch.early() is None


def test_an_early_zygote_nobody_needed_is_ended():
    launch.start_zygote_early()
    early = launch.early().process
    scratch_dir = launch.early().args[0]
    launch.discard_early_zygote()
    assert early.poll() is not None and launch.early() is None
    assert not os.path.exists(scratch_dir)  # nobody claimed its scratch folder


async def test_the_first_kernel_is_lean_and_later_kernels_get_the_rest_warm():
    probe = "import sys\n[name in sys.modules for name in ('sympy', 'jedi', 'torch._dynamo')]"
    async with Session() as session:
        assert (await session.execute(probe)).result == "[False, False, False]"
        check = await session.check_expr("x**2 + 3*x", {"x": 2.0})  # imports sympy on first use
        assert check.data["agree"] is True
        for _ in range(100):  # one module per idle moment (0.2 s without a request or a busy kernel)
            await asyncio.sleep(0.5)
            await session.restart()
            if (await session.execute(probe)).result == "[True, True, True]":
                break
        else:
            pytest.fail("kernels forked from an idle zygote never had sympy, jedi and torch._dynamo")


async def test_a_one_shot_command_does_not_warm_the_zygote_behind_its_steps():
    from gradrepl.client.options import KernelOptions

    probe = "import sys\n'torch._dynamo' in sys.modules or 'sympy' in sys.modules"
    async with Session(KernelOptions(warm_later=False)) as session:  # as `gradrepl run` and `check` start it
        await asyncio.sleep(1.5)  # long enough for an idle zygote to import its first modules
        await session.restart()
        assert (await session.execute(probe)).result == "False"


async def test_the_zygote_leaves_the_cpu_to_a_running_step():
    """The idle imports (sympy, jedi, torch._dynamo: seconds of CPU) wait while a kernel runs a step: on a
    small machine they took a core from the learner's training loop (a loop typed in a session ran at
    several times its pace under `run`, which does not warm). Counted in CPU time, not seconds."""
    busy = "import time\nend = time.process_time() + 4\nwhile time.process_time() < end:\n    pass"
    async with Session() as session:  # warms the zygote, as the TUI does
        zygote, kernel = session.client.zygote.process.pid, session.client.kernel.pid
        step = asyncio.ensure_future(session.execute(busy))
        start = cpu_seconds(kernel)
        while cpu_seconds(kernel) < start + 1 and not step.done():  # past whatever began before the step
            await asyncio.sleep(0.05)
        zygote_before, kernel_before = cpu_seconds(zygote), cpu_seconds(kernel)
        while cpu_seconds(kernel) < kernel_before + 2 and not step.done():
            await asyncio.sleep(0.05)
        zygote_used, kernel_used = cpu_seconds(zygote) - zygote_before, cpu_seconds(kernel) - kernel_before
        assert (await step).error is None
    assert kernel_used >= 1.5, "the step ended before the kernel had been watched for long"
    assert zygote_used < 0.1, f"the zygote used {zygote_used:.2f} s of CPU while the step used {kernel_used:.2f} s"


async def test_a_kernel_collects_garbage_although_the_zygote_imported_torch_without(session):
    code = ("import gc, weakref\nclass Node: pass\na, b = Node(), Node()\na.other, b.other = b, a\n"
            "gone = weakref.ref(a)\ndel a, b\nkept = [[] for _ in range(5000)]\n"
            "(gc.isenabled(), gone() is None)")
    assert (await session.execute(code)).result == "(True, True)"


def test_the_zygote_is_launched_before_the_frontend_imports_asyncio_or_the_sandbox():
    import subprocess
    import sys

    probe = ("import sys\nfrom gradrepl.client import launch\nlaunch.start_zygote_early()\n"
             "print(sorted(name for name in ('asyncio', 'argparse', 'gradrepl.kernel.sandbox', 'gradrepl.client.kernel_client')"
             " if name in sys.modules))\nlaunch.discard_early_zygote()")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"
