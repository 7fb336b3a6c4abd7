"""Out, _N, _, __ and ___ as in IPython: the values of the steps' last expressions, by step number,
kept out of the panel (they are the learner's tensors under other names)."""


async def test_out_and_underscore_names_hold_each_steps_value_as_ipython_does(session):
    await session.execute("x = torch.ones(2, requires_grad=True)")
    doubled = await session.execute("x * 2")
    added = await session.execute("x + 1")
    n, m = doubled.step, added.step
    check = await session.execute(
        f"print(Out[{n}] is _{n}, _{m} is _, __ is _{n}, torch.equal(_{n}, x.detach() * 2), sorted(Out))")
    assert check.stdout.strip() == f"True True True True [{n}, {m}]", check.stdout
    assert set(session.tensors) == {"x"}, session.tensors  # no Out[N] or _N rows beside x


async def test_a_name_the_learner_gave_underscore_is_left_alone(session):
    await session.execute("_ = 'mine'")
    await session.execute("3 + 4")
    kept = await session.execute("print(_, Out)")
    assert kept.stdout.strip().startswith("mine {"), kept.stdout
    assert "7" in kept.stdout


async def test_a_reset_forgets_the_outputs(session):
    await session.execute("torch.ones(1)")
    await session.reset()
    after = await session.execute("print(len(Out), '_' in globals())")
    assert after.stdout.strip() == "0 False", after.stdout
