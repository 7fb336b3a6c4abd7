"""A step where a torch.func transform ran and no .grad changed says so: the learner expected .grad to
fill in (issue 25, functional transforms). Real kernels."""

import pytest

NOTE = "functional transform: nothing was written to .grad"


@pytest.mark.parametrize("code", [
    "g = torch.func.grad(lambda t: (t ** 3).sum())(x)",
    "from torch.func import vjp\nout, pull = vjp(lambda t: t ** 3, x)\ng, = pull(torch.ones(2))",
    "from torch.func import jacrev\nJ = jacrev(lambda t: t ** 3)(x)",
    "out, tangent = torch.func.jvp(lambda t: t ** 3, (x,), (torch.ones(2),))",
])
async def test_a_transform_that_wrote_no_grad_is_noted(session, code):
    await session.execute("x = torch.tensor([1.0, 2.0], requires_grad=True)")
    result = await session.execute(code)
    assert result.error is None, result.error
    assert any(note.startswith(NOTE) for note in result.notes), result.notes
    assert session.tensors["x"]["grad"] is None


async def test_no_note_without_a_transform_or_when_a_grad_changed(session):
    await session.execute("x = torch.tensor([1.0, 2.0], requires_grad=True)")
    assert not any(NOTE in note for note in (await session.execute("(x ** 3).sum().backward()")).notes)
    # grad made a function but nothing was differentiated yet
    assert not any(NOTE in note for note in (await session.execute("f = torch.func.grad(lambda t: t.sum())")).notes)
    both = await session.execute("g = f(x)\n(x * 2).sum().backward()")
    assert both.error is None and not any(NOTE in note for note in both.notes), both.notes
