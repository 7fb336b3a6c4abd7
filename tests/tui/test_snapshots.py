"""What the learner sees, pixel for pixel, with fixed content (no kernel timing in the frame).

The app's own handlers render real StepResult values fed as the messages a kernel worker posts;
start_kernel=False keeps a wall-clock dependent kernel out of the picture.
"""

from __future__ import annotations

from gradrepl.history import History
from gradrepl.protocol.messages import ErrorInfo, StepResult
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.code_input import CodeInput
from gradrepl.tui.messages import DetailsLoaded, KernelReady, KernelStateChanged, StepFinished, StepStarted

SANDBOX = {"rlimits": {"active": True, "detail": "AS, NOFILE"}, "landlock": {"active": True, "detail": "ABI 7"},
           "netns": {"active": False, "detail": "unshare refused"}}


def scalar(v):
    return {"shape": [], "values": v, "norm": abs(v)}


def tensor_row(name, value, grad=None, grad_fn=None, leaf=True):
    return {"name": name, "shape": [], "dtype": "torch.float32", "device": "cpu", "requires_grad": True,
            "is_leaf": leaf, "grad_fn": grad_fn, "retains_grad": False, "version": 0, "changed": True,
            "grad": None if grad is None else scalar(grad), "value": scalar(value)}


STEPS = [
    StepResult(1, "x = torch.tensor(2.0, requires_grad=True)", duration_ms=1.5,
               tensors=[tensor_row("x", 2.0)]),
    StepResult(2, "y = x ** 2 + 3 * x", duration_ms=0.8,
               tensors=[tensor_row("y", 10.0, grad_fn="AddBackward0", leaf=False)]),
    StepResult(3, "y.backward()", duration_ms=2.0, tensors=[tensor_row("x", 2.0, grad=7.0)]),
    StepResult(4, "print('नमस्ते, autograd')", stdout="नमस्ते, autograd\n", duration_ms=0.3),
    StepResult(5, "y.grad.item()", duration_ms=0.4,
               error=ErrorInfo("AttributeError", "'NoneType' object has no attribute 'item'",
                               "y is not a leaf, so autograd did not keep y.grad; call y.retain_grad() first.")),
]

GRAPH = {"graph": {
    "nodes": [{"id": 1, "grad_fn": "AddBackward0", "shapes": [[]], "leaf": None, "saved": []},
              {"id": 2, "grad_fn": "PowBackward0", "shapes": [[]], "leaf": None,
               "saved": [{"name": "self", "shape": [], "freed": True}]},
              {"id": 3, "grad_fn": "MulBackward0", "shapes": [[]], "leaf": None,
               "saved": [{"name": "other", "shape": [], "freed": True}]},
              {"id": 4, "grad_fn": "AccumulateGrad", "shapes": [[]], "leaf": "x", "saved": []}],
    "edges": [[1, 2], [1, 3], [2, 4], [3, 4]]}}


def fixed_app() -> GradReplApp:
    return GradReplApp(start_kernel=False, history=History(None))


async def play_steps(pilot) -> None:
    app = pilot.app
    app.query_one(CodeInput).cursor_blink = False
    app.post_message(KernelStateChanged("idle"))
    app.post_message(KernelReady(SANDBOX))
    for step in STEPS:
        app.post_message(StepStarted(step.source))
        app.post_message(StepFinished(step))
    await pilot.pause()


def test_console_and_panel_after_first_backward(snap_compare):
    assert snap_compare(fixed_app(), terminal_size=(130, 32), run_before=play_steps)


def test_narrow_terminal_puts_panel_below(snap_compare):
    assert snap_compare(fixed_app(), terminal_size=(80, 24), run_before=play_steps)


def test_details_show_graph_and_why_grad_is_none(snap_compare):
    async def open_details(pilot):
        await play_steps(pilot)
        app = pilot.app
        await app.show_details("y")
        app.post_message(DetailsLoaded("y", STEPS[1].tensors[0], GRAPH, None, []))
        await pilot.pause()

    assert snap_compare(fixed_app(), terminal_size=(130, 40), run_before=open_details)
