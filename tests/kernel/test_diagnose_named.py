"""Why-lines for the errors real programs hit (issue 24): each names the learner's tensor (or Function),
the concept and the fix. Real kernels, real torch messages."""

import re

import pytest

MY_FN = ("class Twice(torch.autograd.Function):\n"
         "    @staticmethod\n"
         "    def forward(ctx, x, y):\n"
         "        return x * 2\n"
         "    @staticmethod\n"
         "    def backward(ctx, grad):\n"
         "        return {returns}\n")

CASES = {
    "a number assigned to .grad": (
        "weights = torch.ones(2, requires_grad=True)", "weights.grad = 0.",
        ("weights.grad", "None", "zero_()")),
    "a gradient of the wrong shape": (
        MY_FN.format(returns="torch.ones(3), None") + "a = torch.ones(2, requires_grad=True)",
        "Twice.apply(a, a).sum().backward()", ("Twice.backward", "has shape 3, but its input has shape 2")),
    "a wrong number of gradients": (
        MY_FN.format(returns="grad * 2") + "a = torch.ones(2, requires_grad=True)",
        "Twice.apply(a, a).sum().backward()", ("Twice.backward", "one gradient", "None", "2")),
    "a hook on a tensor that needs no grad": (
        "data = torch.ones(3)", "data.register_hook(print)", ("data", "requires_grad", "never")),
    "a gradcheck failure": (
        "class Square(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n        return x ** 2\n    @staticmethod\n    def backward(ctx, g):\n"
        "        x, = ctx.saved_tensors\n        return g * x\n"
        "inp = torch.randn(3, dtype=torch.double, requires_grad=True)",
        "torch.autograd.gradcheck(Square.apply, (inp,))", ("inp", "numerical", "analytical", "backward")),
    "item() of a grad that is None": (
        "w = torch.ones(2, requires_grad=True)", "w.grad.item()", ("w.grad", "None", "backward()")),
    "item() of a non-leaf's grad": (
        "w = torch.ones(2, requires_grad=True)\nh = w * 3\nh.sum().backward()", "print(h.grad.sum().item())",
        ("h.grad", "leaf", "retain_grad")),
    "a layer fed the wrong width": (
        "layer = nn.Linear(2, 5)\nbatch = torch.ones(4, 3)", "out = layer(batch)",
        ("batch", "4×3", "in_features", "2", "3")),
    "a matrix product of mismatched shapes": (
        "a = torch.ones(4, 3)\nb = torch.ones(2, 5)", "c = a @ b", ("a", "b", "4×3", "2×5")),
    "an in-place change of a saved tensor": (
        "x = torch.ones(3, requires_grad=True)\ny = x.exp()", "y.add_(1)\ny.sum().backward()",
        ("y", "y.add_", "version 0", "version 1", "clone()")),
    # issue 22 (L23's autograd-again): the gradient was made in an earlier cell; no backward() was called
    "torch.autograd.grad of a gradient an earlier cell made without create_graph": (
        "xr = torch.tensor(4.0, requires_grad=True)\ng, = torch.autograd.grad(xr ** 3, xr)",
        "g2, = torch.autograd.grad(g, xr)", ("torch.autograd.grad", "g", "create_graph=True")),
}


@pytest.mark.parametrize("name", CASES)
async def test_the_why_line_names_the_tensor_the_concept_and_the_fix(session, name):
    setup, failing, words = CASES[name]
    ready = await session.execute(setup)
    assert ready.error is None, ready.error
    result = await session.execute(failing)
    assert result.error is not None, result
    explanation = result.error.explanation or ""
    missing = [word for word in words if word not in explanation]
    assert not missing, f"{result.error.type}: {result.error.message[:200]}\nwhy: {explanation!r}\nmissing {missing}"


async def test_the_in_place_why_line_names_the_tensor_whose_version_changed(session):
    """w (changed under no_grad, same shape, same version) is not the saved tensor: s, sigmoid's output, is."""
    ready = await session.execute("w = torch.tensor([2.0, 3.0], requires_grad=True)\nwith torch.no_grad():\n"
                                  "    w.add_(1)\na = torch.tensor([0.0, 1.0], requires_grad=True)\n"
                                  "s = a.sigmoid()\ns.mul_(2)")
    assert ready.error is None, ready.error
    result = await session.execute("s.sum().backward()")
    explanation = (result.error.explanation if result.error else "") or ""
    assert explanation.startswith("s was saved for backward at version 0"), explanation
    assert not re.search(r"(?<![\w.])w(?![\w])", explanation), explanation


PRODUCTS = {  # (setup, the failing line, what the why-line says of the operands)
    "two operands of one shape": ("m1 = torch.ones(2, 3)\nm2 = torch.ones(2, 3)", "m1 @ m2",
                                  "m1 is 2×3 and m2 is 2×3, so 3 columns meet 2 rows. Transpose one (m2.T)"),
    "the same, the other way round": ("m1 = torch.ones(2, 3)\nm2 = torch.ones(2, 3)", "torch.matmul(m2, m1)",
                                      "m2 is 2×3 and m1 is 2×3"),
    "a method call": ("m1 = torch.ones(2, 3)\nm2 = torch.ones(2, 3)", "out = m2.mm(m1)", "m2 is 2×3 and m1 is 2×3"),
    "a product over two lines": ("m1 = torch.ones(2, 3)\nm2 = torch.ones(2, 3)", "out = torch.matmul(m2,\n    m1)",
                                 "m2 is 2×3 and m1 is 2×3"),
    "an expression on the left": ("a = torch.ones(2, 3)\nb = torch.ones(2, 3)", "(a + 1) @ b",
                                  "the left operand is 2×3 and b is 2×3"),
    "the failing product of two": ("a = torch.ones(2, 3)\nb = torch.ones(3, 2)\nc = torch.ones(4, 5)",
                                   "d = (a @ b) @ c", "the left operand is 2×2 and c is 4×5"),
}


@pytest.mark.parametrize("name", PRODUCTS)
async def test_the_matmul_why_line_names_the_operands_by_their_place_not_their_shape(session, name):
    setup, failing, words = PRODUCTS[name]
    assert (await session.execute(setup)).error is None
    result = await session.execute(failing)
    explanation = (result.error.explanation if result.error else "") or ""
    assert words in explanation, explanation


async def test_a_custom_backward_of_the_wrong_shape_says_the_shapes_as_every_view_does(session):
    assert (await session.execute(MY_FN.format(returns="torch.ones(3), None") + "a = torch.ones(2, 2)\n"
                                  "b = torch.ones(2, 2, requires_grad=True)")).error is None
    result = await session.execute("Twice.apply(b, a).sum().backward()")
    explanation = (result.error.explanation if result.error else "") or ""
    assert "the gradient at index 0 has shape 3, but its input has shape 2×2" in explanation, explanation
    assert "[" not in explanation and "torch.Size" not in explanation, explanation


IN_PLACE = {  # (setup steps, the op the why-line names)
    "a method on a saved output": (["x = torch.ones(3, requires_grad=True)", "r = x.exp()", "r.mul_(2)"],
                                   "`r.mul_(2)` (step 3, line 1)"),
    "an augmented assignment on a saved input": (["x = torch.ones(3, requires_grad=True)\ny = x * 1",
                                                  "z = y ** 2", "y += 1"], "`y += 1` (step 3, line 1)"),
    "an assignment into part of it": (["x = torch.ones(3, requires_grad=True)\nz = x.sigmoid()\nz[0] = 5"],
                                      "`z[0] = 5` (step 1, line 3)"),
    "the change after the save, not the one before": (
        ["x = torch.ones(3, requires_grad=True)\ny = x * 1\ny.add_(1)\nz = y ** 2", "y.mul_(3)"],
        "`y.mul_(3)` (step 2, line 1)"),
    "a change under no_grad": (["x = torch.ones(3, requires_grad=True)\ny = x * 1\nz = y ** 2",
                                "with torch.no_grad():\n    y.mul_(3)"], "`y.mul_(3)` (step 2, line 2)"),
    "a tensor with no graph": (["x = torch.ones(3, requires_grad=True)\nw = torch.ones(3)\nz = x * w",
                                "w[0] = 2"], "`w[0] = 2` (step 2, line 1)"),
}


@pytest.mark.parametrize("name", IN_PLACE)
async def test_the_in_place_why_line_names_the_statement_that_changed_the_saved_tensor(session, name):
    steps, op = IN_PLACE[name]
    for source in steps:
        assert (await session.execute(source)).error is None, source
    root = "r" if any("r = " in source for source in steps) else "z"
    result = await session.execute(f"{root}.sum().backward()")
    explanation = (result.error.explanation if result.error else "") or ""
    assert f"then {op} changed it in place" in explanation, explanation
    assert "add_(), " not in explanation, explanation  # not the list of example ops


async def test_the_in_place_why_line_tells_the_saved_output_from_a_tensor_computed_from_it(session):
    """w = y * 1, changed in place too, has the shape and version torch names and reaches Exp down its
    graph, but through an op that is not in place: y is exp's output, w is not."""
    assert (await session.execute("x = torch.ones(3, requires_grad=True)\ny = x.exp()\nw = y * 1")).error is None
    assert (await session.execute("y.add_(1)\nw.add_(1)")).error is None
    result = await session.execute("y.sum().backward()")
    explanation = (result.error.explanation if result.error else "") or ""
    assert explanation.startswith("y was saved for backward at version 0"), explanation
    assert "then `y.add_(1)` (step 2, line 1) changed it in place" in explanation, explanation
    assert not re.search(r"(?<![\w.])w(?![\w])", explanation), explanation


@pytest.mark.parametrize("change, out_of_place", [
    ("s.mul_(2)", "s = s.mul(2)"), ("s *= 2", "s = s * 2"), ("s.sigmoid_()", "s = s.sigmoid()")])
async def test_the_in_place_why_line_offers_the_out_of_place_form_of_the_op_that_ran(session, change, out_of_place):
    """Issue 22 (round three): the why-line for sigmoid's changed output offered `s = s + 1 instead of
    s.add_(1)` when the op that ran was mul_."""
    ready = await session.execute(f"a = torch.tensor([0.0, 1.0], requires_grad=True)\ns = a.sigmoid()\n{change}")
    assert ready.error is None, ready.error
    result = await session.execute("s.sum().backward()")
    explanation = (result.error.explanation if result.error else "") or ""
    assert f"{out_of_place} instead of {change}" in explanation, explanation
    assert "add_(1)" not in explanation, explanation


# The why-line of a torch.autograd.grad that finds no graph speaks of that call, not of a backward() never made.
async def test_autograd_grad_without_a_graph_is_not_called_backward(session):
    ready = await session.execute("u = torch.ones(2)\nv = torch.ones(2, requires_grad=True)")
    assert ready.error is None, ready.error
    result = await session.execute("torch.autograd.grad(u.sum(), v)")
    explanation = result.error.explanation or ""
    assert "torch.autograd.grad" in explanation and "backward() was called" not in explanation, explanation
