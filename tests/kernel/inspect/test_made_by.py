"""made_by: the statement that made each node, from torch's node counter and one mark per statement."""

import ast

import torch

from gradrepl.kernel.inspect import made_by


def run_step(step: int, source: str, namespace: dict) -> None:
    """As the kernel runs a step: begin it, compile it with the marks, run it."""
    made_by.install()
    made_by.begin_step(step, source)
    exec(compile(made_by.instrument(ast.parse(source), source), f"Cell In[{step}]", "exec"), namespace)


def where(node) -> tuple:
    made = made_by.made_by(node)
    return made["step"], made["line"], made["source"], made["tensor"]


def test_a_function_defined_earlier_names_its_own_line_and_the_step_that_called_it():
    namespace = {"torch": torch}
    run_step(1, "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                "def f(t):\n"
                "    h = t * 2\n"
                "    return h.sin()\n", namespace)
    run_step(2, "y = f(x)\nz = y.exp()\n", namespace)
    z = namespace["z"]
    sin = z.grad_fn.next_functions[0][0]
    mul = sin.next_functions[0][0]
    assert where(z.grad_fn) == (2, 2, "z = y.exp()", "z")
    assert where(mul) == (2, 3, "h = t * 2", "h")
    assert where(sin) == (2, 1, "y = f(x)", "y")  # a return's expression: the caller's statement made it


def test_an_expression_statement_and_a_subscript_target_are_marked_too():
    namespace = {"torch": torch}
    run_step(3, "x = torch.ones(2, requires_grad=True)\nxs = []\nxs.append(x * 3)\nd = {}\nd['k'] = x.exp()\n",
             namespace)
    assert where(namespace["xs"][0].grad_fn) == (3, 3, "xs.append(x * 3)", None)
    assert where(namespace["d"]["k"].grad_fn) == (3, 5, "d['k'] = x.exp()", None)


def test_a_loop_names_its_inner_line_for_every_iteration():
    namespace = {"torch": torch}
    run_step(4, "x = torch.ones(2, requires_grad=True)\ntotal = 0\nfor i in range(3):\n"
                "    a = x * (i + 1)\n    total = total + a.sum()\n", namespace)
    node, seen = namespace["total"].grad_fn, []
    while node is not None and type(node).__name__ == "AddBackward0":
        seen.append(where(node))
        children = {type(child).__name__: child for child, _ in node.next_functions if child is not None}
        seen.append(where(children["SumBackward0"].next_functions[0][0]))
        node = children.get("AddBackward0")
    assert seen == [(4, 5, "total = total + a.sum()", "total"), (4, 4, "a = x * (i + 1)", "a")] * 3


def test_nodes_older_than_the_marks_kept_name_their_step(monkeypatch):
    namespace = {"torch": torch}
    run_step(5, "x = torch.ones(2, requires_grad=True)\nfirst = x * 2\n", namespace)
    monkeypatch.setattr(made_by, "KEPT", 4)
    run_step(6, "\n".join(f"t{i} = x + {i}" for i in range(12)), namespace)
    assert where(namespace["first"].grad_fn) == (5, 1, "x = torch.ones(2, requires_grad=True)", None)
    assert where(namespace["t11"].grad_fn) == (6, 12, "t11 = x + 11", "t11")


def test_a_node_made_before_any_step_has_no_statement(monkeypatch):
    monkeypatch.setattr(made_by, "RECORD", made_by._Record())  # as in the notebook's Python: no step marked
    x = torch.ones(2, requires_grad=True)
    assert made_by.made_by((x * 2).grad_fn) is None
