"""IPython's everyday magics over a real kernel: %time, %who, %whos and %run FILE (its statements as steps)."""

from __future__ import annotations


async def test_time_runs_its_statement_as_a_step_and_says_how_long(session):
    timed = await session.execute("%time y = torch.ones(3) * 2")
    assert timed.error is None and timed.display.startswith("Wall time: "), timed
    assert timed.step == 1 and session.step == 1 and "y" in session.tensors


async def test_who_and_whos_list_the_learners_names_only(session):
    assert "No names of yours" in (await session.execute("%who")).display
    await session.execute("w = torch.zeros(2, 3, requires_grad=True)\nlosses = [0.5, 0.25]\nlr = 0.1\n"
                          "class Loud:\n    def __repr__(self):\n        raise RuntimeError('never')\nthing = Loud()")
    who = await session.execute("%who")
    assert who.error is None and who.display.split() == sorted(["w", "losses", "lr", "Loud", "thing"]), who
    whos = (await session.execute("%whos")).display
    rows = {line.split()[0]: line for line in whos.splitlines()[2:]}
    assert "2×3 float32, requires grad" in rows["w"] and "list" in rows["losses"] and "2 items" in rows["losses"]
    assert "0.1" in rows["lr"] and "Loud" in rows["thing"] and "never" not in whos  # no learner repr ran
    assert session.step == 1  # neither took a number


async def test_run_file_runs_each_statement_as_a_numbered_step_and_stops_at_an_error(session):
    # Written by learner code, so in the kernel's current folder (scratch), where %run reads it from.
    script = ("w = torch.tensor(2.0, requires_grad=True)\nloss = w * 3\nloss.backward()\n"
              "print('grad', w.grad.item())\nboom = 1 / 0\nnever = 1\n")
    await session.execute(f"open('train.py', 'w').write({script!r})")
    ran = await session.execute("%run train.py")
    assert "grad 3.0" in ran.stdout and ran.error.type == "ZeroDivisionError"
    assert ran.error.frames[-1]["filename"] == "train.py" and ran.error.frames[-1]["lineno"] == 5
    assert "In [2] to In [6]" in ran.display and "stopped at line 5" in ran.display, ran.display
    assert session.step == 6 and [step for step, _ in session.timeline.steps] == [1, 2, 3, 4, 5, 6]
    assert session.timeline.state_at(3).changed == {"loss"}
    assert {row["name"] for row in ran.tensors} == {"w", "loss"}
    assert session.history[-1] == "%run train.py"  # the line typed, not each statement
    assert "NameError" in (await session.execute("never")).error.type


async def test_run_names_a_missing_file_in_words(session, tmp_path):
    missing = await session.execute(f"%run {tmp_path / 'nosuch.py'}")
    assert missing.error.type == "UsageError" and "no such file" in missing.error.message
    assert session.step == 0


async def test_run_reads_only_what_the_kernel_may_read(session, tmp_path):
    """The file is read by the sandboxed kernel, not the frontend: a file outside what learner code may
    read is refused in the sandbox's words, and nothing of it reaches the learner (`_`, an error)."""
    secret = tmp_path / "secret.json"
    secret.write_text('"the-secret-token"\n')
    hostname = tmp_path / "hostname"
    hostname.write_text("secret-host-name\n")
    for path, words in ((secret, "the-secret-token"), (hostname, "secret-host-name")):
        before = session.step
        refused = await session.execute(f"%run {path}")
        assert session.step == before  # nothing ran
        assert refused.error is not None and refused.error.type == "UsageError", refused
        assert "--readable" in refused.error.message and str(path) in refused.error.message, refused.error
        assert words not in repr(refused)
        assert words not in repr(await session.execute("_"))


async def test_run_refuses_a_fifo_or_a_device_at_once(session):
    """A FIFO would block the read until a writer came, a device never end: both are refused unopened,
    in words, and the session goes on."""
    made = await session.execute("import os\nos.mkfifo('pipe')")
    assert made.error is None, made.error
    fifo = await session.execute("%run pipe")
    assert fifo.error is not None and "named pipe" in fifo.error.message, fifo
    device = await session.execute("%run /dev/null")
    assert device.error is not None and "device" in device.error.message, device
    assert (await session.execute("6 * 7")).result == "42"


async def test_help_of_an_object_is_titled_by_its_name_not_its_module(session):
    await session.execute("x = torch.ones(2)\nmodel = nn.Linear(2, 1)")
    assert (await session.execute("help(x)")).display["title"] == "help(x)"
    assert (await session.execute("help(model)")).display["title"] == "help(model)"
    assert (await session.execute("help(torch.relu)")).display["title"] == "help(torch.relu)"
    assert (await session.execute("help(torch.nn)")).display["title"] == "help(torch.nn)"
