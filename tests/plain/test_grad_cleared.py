"""A .grad cell says what changed in the step (issue 22, a blind beginner): a step that set `x.grad = None`
before its backward wrote the gradient afresh, so it added nothing to what .grad held before the step."""

from gradrepl.views.steps import step_text


async def test_a_grad_cleared_then_written_in_one_step_shows_no_addition(session):
    await session.execute("x = torch.tensor([1.0, 2.0], requires_grad=True)")
    await session.execute("s = (x + 1).sum()\ns.backward(retain_graph=True)")
    result = await session.execute("x.grad = None\ns.backward(retain_graph=True)\ns.backward()")
    text = step_text(result, before=session.grads_before)
    assert "(+" not in text, text  # [2, 2] came from None, not [1, 1] plus [1, 1]
    assert "[2, 2]" in text, text
