"""The kernel's task_state op reads a task's state truthfully whatever the learner's code patched.

Each test runs learner code that lies (patched torch readers, rebound builtins,
tensor subclasses, torch modes left on, a faked autograd entry) in a real
kernel, then reads the state through the op, as the frontend does, and checks
the plain data it got back.
"""

from gradrepl.tutor.task_checks import target_steps
from gradrepl.views.remarks import task_read_words


def targets(*texts: str) -> list:
    return [[text, target_steps(text)] for text in texts]


async def start_and_end(session, setup: str, attempt: str, *names: str) -> tuple[dict, dict]:
    result = await session.execute(setup)
    assert result.error is None, result.error
    start = await session.task_state(targets(*names), True)
    result = await session.execute(attempt)
    assert result.error is None, result.error
    return start, await session.task_state(targets(*names), False, start["token"])


async def test_patched_torch_readers_and_builtins_change_nothing_read(session):
    _, end = await start_and_end(session, "x = torch.tensor([1.0, 2.0], requires_grad=True)", """
import builtins
torch.Tensor.tolist = lambda self, *a, **k: [12.0, 12.0]
torch.Tensor.item = lambda self: 12.0
torch.Tensor.grad = property(lambda self: torch.tensor([12.0, 12.0]))
torch.Tensor.requires_grad = property(lambda self: False)
torch.Tensor.is_leaf = property(lambda self: False)
torch.allclose = lambda *a, **k: True
builtins.enumerate = lambda obj: iter(())
builtins.issubclass = lambda a, b: False
""", "x", "x.grad")
    x = end["entries"]["x"]
    assert x["values"] == [1.0, 2.0] and x["requires_grad"] is True and x["is_leaf"] is True
    assert x["grad"] is None and end["entries"]["x.grad"]["kind"] == "value"
    assert x["identity"] == "start:x"


async def test_a_tensor_subclass_is_named_and_not_believed(session):
    _, end = await start_and_end(session, "x = torch.zeros(2)", """
class Liar(torch.Tensor):
    def tolist(self, *a, **k):
        return [12.0, 12.0]
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return torch.tensor([12.0, 12.0])
x = torch.Tensor._make_subclass(Liar, torch.zeros(2), True)
""", "x")
    x = end["entries"]["x"]
    assert x["type"] == "__main__.Liar" and x["unreadable"]["code"] == "tensor_subclass" and "values" not in x
    assert "subclass of torch.Tensor" in task_read_words(x["unreadable"])  # the kernel sent a code, views word it
    assert x["identity"] == "new:x"


async def test_a_torch_mode_left_on_makes_the_state_unreadable(session):
    for mode in ("torch.overrides.TorchFunctionMode", "torch.utils._python_dispatch.TorchDispatchMode"):
        await session.restart()
        method = "__torch_function__" if "Function" in mode else "__torch_dispatch__"
        _, end = await start_and_end(session, "import torch.utils._python_dispatch\nx = torch.zeros(2)", f"""
class Agree({mode}):
    def {method}(self, func, types, args=(), kwargs=None):
        return torch.tensor([12.0, 12.0])
Agree().__enter__()
""", "x")
        assert end["unreadable"] == {"code": "torch_mode_active", "names": {}} and end["entries"] == {}, (mode, end)
        assert "torch mode" in task_read_words(end["unreadable"])


async def test_backward_passes_are_logged_and_a_grad_set_by_hand_is_told_apart(session):
    _, end = await start_and_end(session, "w = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                                 "v = torch.tensor([3.0], requires_grad=True)", """
y = (w * 3).sum()
y.backward(retain_graph=True)
y.backward()
v.grad = torch.tensor([6.0])
(v * 2).sum().backward()
v.grad.data = torch.tensor([6.0])
same = w
""", "w", "v", "y", "same")
    w, v, y = end["entries"]["w"], end["entries"]["v"], end["entries"]["y"]
    assert w["backward"] == 2 and w["grad_by_backward"] is True and w["grad"]["values"] == [6.0, 6.0]
    assert y["root"] == 2 and y["grad_fn"] == "SumBackward0"
    # .grad.data swapped after the pass: the values are read as they are, and not believed to be backward's.
    assert v["backward"] == 1 and v["grad_by_backward"] is False and v["grad"]["values"] == [6.0]
    assert end["entries"]["same"]["identity"] == "start:w"


async def test_a_faked_autograd_entry_runs_no_pass_and_logs_none(session):
    _, end = await start_and_end(session, "w = torch.tensor([1.0], requires_grad=True)", """
import torch.autograd.variable
class Engine:
    def run_backward(self, *a, **k):
        return ()
torch.autograd.variable.Variable._execution_engine = Engine()
torch.autograd._engine_run_backward = lambda *a, **k: ()
(w * 2).sum().backward()
""", "w")
    assert end["entries"]["w"]["backward"] == 0 and end["entries"]["w"]["grad"] is None


async def test_a_module_is_read_from_its_own_tables_whatever_its_methods_say(session):
    _, end = await start_and_end(session, "model = nn.Sequential(nn.Linear(2, 1))", """
class Frozen(nn.Linear):
    def parameters(self, recurse=True):
        return iter(())
    def named_parameters(self, *a, **k):
        return iter(())
model[0] = Frozen(2, 1)
nn.Module.__getattr__ = lambda self, name: None
""", "model", "model[0].weight")
    entries = end["entries"]
    assert entries["model[0]"]["type"] == "__main__.Frozen" and entries["model[0]"]["identity"] == "new:model[0]"
    assert entries["model[0].weight"]["kind"] == "tensor" and entries["model[0].weight"]["requires_grad"] is True
    assert entries["model[0]"]["parameters"] == ["weight", "bias"]


async def test_a_kernel_restarted_since_the_start_says_the_task_did_not_start_there(session):
    await session.execute("w = torch.ones(1)")
    start = await session.task_state(targets("w"), True)
    await session.restart()
    await session.execute("w = torch.ones(1)")
    end = await session.task_state(targets("w"), False, start["token"])
    assert end["started"] is False


async def test_a_retained_non_leaf_target_is_logged_like_a_leaf(session):
    # The engine writes h.grad only while h retains it: a .grad set after backward is told apart.
    for attempt, by_backward in [("h = x * 3\nh.retain_grad()\n(h ** 2).backward()", True),
                                 ("h = x * 3\n(h ** 2).backward()\nh.retain_grad()\nh.grad = 2 * h.detach()", False)]:
        await session.restart()
        _, end = await start_and_end(session, "x = torch.tensor(2.0, requires_grad=True)", attempt, "h")
        h = end["entries"]["h"]
        assert h["grad"]["values"] == 12.0 and h["grad_by_backward"] is by_backward, (attempt, h)


def test_the_reply_schema_caps_are_the_readers_own():
    from gradrepl.protocol import reply_schema
    from gradrepl.kernel.inspect import backward_log, reads

    assert (reply_schema.TASK_ENTRIES, reply_schema.TASK_VALUES, reply_schema.TASK_NUMBERS) == (
        reads.ENTRY_CAP, reads.VALUE_CAP, backward_log.LOG_NUMBERS)


async def test_a_namespace_too_big_to_send_is_read_truncated_not_a_broken_protocol(session):
    restarts = session.client.restarts
    start, end = await start_and_end(session, "layers = nn.ModuleList([nn.Sequential(*[nn.Linear(1, 1) for _ in range(20)])"
                                     " for _ in range(200)])\n"
                                     "globals()['n' * 5000] = 1\nlong = 'x' * 100000",
                                     "pass", "long", "layers")
    assert end["truncated"] and len(end["entries"]) <= 2048 and session.client.restarts == restarts
    assert len(end["entries"]["long"]["value"]) == 1000 and not any(len(n) > 1000 for n in start["names"])


async def test_missing_and_unreadable_paths_are_codes(session):
    _, end = await start_and_end(session, "x = torch.zeros(2)\nn = 3", "del x", "x", "n.real", "n[0]")
    entries = end["entries"]
    assert entries["x"] == {"kind": "missing", "code": "not_defined", "names": {"name": "x"}}
    assert entries["n.real"]["code"] == "no_attributes" and entries["n[0]"]["code"] == "not_indexed"
    assert task_read_words(entries["x"]) == "x is not defined"
    assert task_read_words(entries["n[0]"]) == "a value of type int is not read by index"
