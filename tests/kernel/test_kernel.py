"""The kernel as a learner meets it: real kernel processes, no mocks."""

import asyncio

from gradrepl.client.options import KernelOptions
from gradrepl.session import Session


async def test_repl_semantics_echo_and_errors_keep_the_session(session):
    first = await session.execute("a = 1 + 1\na * 10")
    assert first.result == "20" and first.error is None
    broken = await session.execute("1 / 0")
    assert broken.error.type == "ZeroDivisionError"
    assert "1 / 0" in broken.error.traceback
    after = await session.execute("a")
    assert after.result == "2"


async def test_namespace_starts_with_torch_nn_and_f(session):
    result = await session.execute("torch.__name__, nn.Linear.__name__, F.relu.__name__")
    assert result.result == "('torch', 'Linear', 'relu')"


async def test_stdout_and_stderr_arrive_with_their_step(session):
    result = await session.execute("import sys\nprint('hello')\nprint('oops', file=sys.stderr)")
    assert result.stdout == "hello\n"
    assert result.stderr == "oops\n"
    quiet = await session.execute("b = 3")
    assert quiet.stdout == "" and quiet.stderr == ""


async def test_first_gradient_rows(session):
    await session.execute("x = torch.tensor(2.0, requires_grad=True)")
    await session.execute("y = x ** 2 + 3 * x")
    result = await session.execute("y.backward()")
    rows = {row["name"]: row for row in result.tensors}
    assert rows["x"]["grad"]["values"] == 7.0
    assert session.tensors["y"]["grad_fn"] == "AddBackward0"
    assert session.tensors["x"]["is_leaf"] is True


async def test_only_changed_rows_cross_the_wire(session):
    await session.execute("xs = [torch.zeros(2) for _ in range(5)]")
    result = await session.execute("xs[3].add_(1)")
    assert [row["name"] for row in result.tensors] == ["xs[3]"]
    assert len(session.tensors) == 5
    gone = await session.execute("del xs")
    assert sorted(gone.removed) == [f"xs[{i}]" for i in range(5)]
    assert session.tensors == {}


async def test_explanation_for_backward_on_non_scalar(session):
    await session.execute("x = torch.ones(3, requires_grad=True)")
    result = await session.execute("(x * 2).backward()")
    assert result.error.type == "RuntimeError"
    assert "scalar" in result.error.message
    assert "ones_like" in result.error.explanation or "sum" in result.error.explanation


async def test_accumulation_is_noted(session):
    await session.execute("x = torch.tensor(2.0, requires_grad=True)")
    first = await session.execute("(x ** 2 + 3 * x).backward()")
    assert not any("accumulate" in note for note in first.notes)
    second = await session.execute("(x ** 2 + 3 * x).backward()")
    assert any("accumulate" in note for note in second.notes)
    assert session.tensors["x"]["grad"]["values"] == 14.0


async def test_graph_magic_walks_to_the_leaves(session):
    await session.execute("x = torch.tensor(2.0, requires_grad=True)")
    await session.execute("y = x ** 2 + 3 * x")
    result = await session.execute("%graph y")
    assert "AddBackward0" in result.display and "PowBackward0" in result.display
    assert "x" in result.display
    missing = await session.execute("%graph nope")
    assert missing.error is not None


async def test_graph_magic_shows_a_layers_saved_input_before_its_saved_numbers(session):
    # input-in-the-graph asks which node saves `inputs`: a short list must not cut it off for alpha and beta.
    await session.execute("layer = torch.nn.Linear(3, 2)\ninputs = torch.randn(4, 3)\n"
                          "loss = layer(inputs).pow(2).sum()")
    shown = (await session.execute("%graph loss")).display
    assert "saved mat1  4×3  is inputs" in shown, shown
    assert "saved alpha" not in shown.split("saved mat1")[0], shown


async def test_interrupt_keeps_the_namespace(session):
    await session.execute("kept = 41")
    task = asyncio.create_task(session.execute("while True:\n    kept = 42"))
    await asyncio.sleep(0.5)
    assert session.state == "busy"
    await session.interrupt()
    result = await task
    assert result.error.type == "KeyboardInterrupt"
    assert result.kernel_event is None
    assert (await session.execute("kept")).result == "42"


async def test_an_interrupt_stops_only_the_step_it_is_aimed_at(session):
    # Steps sent ahead (`gradrepl run`): an interrupt meant for a step that has just ended must not
    # stop the next one, which the kernel is already running.
    async with session.client.pipeline() as pipe:
        _, first = pipe.send("execute", source="import time; time.sleep(0.2); a = 1", step=901)
        _, second = pipe.send("execute", source="time.sleep(0.6); b = 2", step=902)
        assert (await first)["error"] is None
        await asyncio.sleep(0.2)  # the kernel is inside step 902
        session.client.interrupt(901)
        assert (await second)["error"] is None
        _, third = pipe.send("execute", source="time.sleep(30); c = 3", step=903)
        await asyncio.sleep(0.3)
        session.client.interrupt(903)
        assert (await asyncio.wait_for(third, 10))["error"]["type"] == "KeyboardInterrupt"
    assert (await session.execute("(a, b, 'c' in dir())")).result == "(1, 2, False)"


async def test_crash_is_reported_and_next_step_runs_in_a_fresh_kernel(session):
    await session.execute("x = torch.ones(2, requires_grad=True)")
    old_pid = session.kernel_info["pid"]
    crash = await session.execute("import os\nos._exit(3)")
    assert crash.kernel_event and "lost" in crash.kernel_event
    assert "status 3" in crash.kernel_event
    assert crash.removed == ["x"]
    assert session.kernel_info["pid"] != old_pid
    after = await session.execute("'x' in dir()")
    assert after.result == "False"


async def test_segfault_reports_a_python_stack(session):
    crash = await session.execute("import ctypes\ndef boom():\n    ctypes.string_at(0)\nboom()")
    assert "segmentation fault" in crash.kernel_event
    assert "boom" in crash.stderr  # faulthandler's Python stack
    assert (await session.execute("1 + 1")).result == "2"


async def test_uninterruptible_step_is_killed_after_grace():
    async with Session(KernelOptions(step_timeout=0.5)) as session:
        await session.execute("x = torch.ones(1)")
        # A C call that blocks SIGINT-driven interrupts until it returns.
        result = await session.execute("import time, signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])\ntime.sleep(30)")
        assert result.kernel_event and "step timeout" in result.kernel_event
        assert (await session.execute("2 + 2")).result == "4"


async def test_restart_and_reset(session):
    await session.execute("x = torch.ones(1)")
    reset = await session.execute("%reset")
    assert reset.removed == ["x"]
    assert (await session.execute("'x' in dir(), torch.__name__")).result == "(False, 'torch')"
    await session.execute("z = torch.ones(1)")
    pid = session.kernel_info["pid"]
    restart = await session.execute("%restart")
    assert restart.removed == ["z"] and session.kernel_info["pid"] != pid


async def test_output_is_capped_with_a_visible_note(session):
    result = await session.execute("print('x' * (3 << 20))")
    assert len(result.stdout) <= (1 << 20) + 1
    assert any("truncated" in note for note in result.notes)
    raw = await session.execute("import os\nos.write(1, b'y' * (3 << 20))")
    assert len(raw.stdout) <= 1 << 20
    assert any("truncated" in note for note in raw.notes)
    assert (await session.execute("print('ok')")).stdout == "ok\n"


async def test_completion_comes_from_the_live_namespace(session):
    await session.execute("learning_rate = 0.1")
    matches = [completion.text for completion in await session.complete("learn")]
    assert "learning_rate" in matches
    methods = [completion.text for completion in await session.complete("torch.zer")]
    assert "zeros" in methods


async def test_spawn_fallback_runs_the_same_steps():
    async with Session(KernelOptions(spawn=True)) as session:
        assert session.kernel_info["mode"] == "spawn"
        await session.execute("x = torch.tensor(3.0, requires_grad=True)")
        await session.execute("(x * x).backward()")
        assert session.tensors["x"]["grad"]["values"] == 6.0
        crash = await session.execute("import os\nos._exit(0)")
        assert crash.kernel_event
        assert (await session.execute("1")).result == "1"


async def test_requires_grad_flips_are_seen_however_they_happen(session):
    await session.execute("xs = [torch.zeros(2) for _ in range(300)]\nmodel = nn.Linear(2, 1)")
    flips = {
        "xs[10].requires_grad_()": ("xs[10]", True),
        "xs[20].requires_grad = True": ("xs[20]", True),
        "xs[20].detach_()": ("xs[20]", False),
        "model.requires_grad_(False)": ("model.weight", False),
    }
    for source, (name, expected) in flips.items():
        result = await session.execute(source)
        assert name in [row["name"] for row in result.tensors], source
        assert session.tensors[name]["requires_grad"] is expected, source
    # A flip made outside a step (a lesson's inspect) is caught at the next step.
    await session.inspect("xs[30].requires_grad_()")
    after = await session.execute("pass")
    assert [row["name"] for row in after.tensors] == ["xs[30]"]
