"""A hostile object left in the namespace costs the panel one failure, not one per step.

After each step the kernel reads the namespace (guard.bounded, 5 s). An object whose
reading hangs or raises is skipped from then on, until that name holds another object,
and the step that found it says so once. Judged from the replies of a real kernel:
the notes of each step, and the rows of the other tensors.
"""

from __future__ import annotations

from gradrepl.kernel.guard import TOUCH_SECONDS

SLOW_TENSOR = (
    "import time\n"
    "class Slow(torch.Tensor):\n"
    "    @classmethod\n"
    "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
    "        time.sleep(600)\n"
    "h = torch.Tensor._make_subclass(Slow, torch.zeros(2))\n"
    "w = torch.ones(2, requires_grad=True)"
)
RAISING_DICT = (
    "class Locked(dict):\n"
    "    def __getitem__(self, key):\n"
    "        raise KeyError(key)\n"
    "d = Locked(a=torch.ones(1))\n"
    "w = torch.ones(2, requires_grad=True)"
)


def overtime_notes(result) -> list[str]:
    """Notes that say a read of the namespace was given up on (the old words or the new)."""
    return [note for note in result.notes if "panel was not updated" in note or "panel skips" in note]


async def test_an_object_whose_reading_hangs_costs_one_timeout_then_is_skipped(session):
    found = await session.execute(SLOW_TENSOR)
    assert found.error is None, found.error
    skips = [note for note in found.notes if note.startswith("panel skips h:")]
    assert len(skips) == 1 and f"over {TOUCH_SECONDS:g} s" in skips[0], found.notes
    assert "w" in session.tensors, "the rest of the panel is read in the same step"
    for n in range(3):
        later = await session.execute(f"w.grad = torch.full((2,), {n + 1}.0)\n{n}")
        assert later.error is None and later.result == str(n), later
        assert overtime_notes(later) == [], later.notes
        assert session.tensors["w"]["grad"]["values"] == [n + 1.0, n + 1.0], "the panel still follows w"
    assert "h" not in session.tensors
    # A new object under the name is read again: here a plain tensor, shown at once.
    replaced = await session.execute("h = torch.arange(3.0)")
    assert overtime_notes(replaced) == [], replaced.notes
    assert session.tensors["h"]["shape"] == [3]


async def test_an_object_whose_reading_raises_is_skipped_and_the_panel_goes_on(session):
    found = await session.execute(RAISING_DICT)
    assert found.error is None, found.error
    skips = [note for note in found.notes if note.startswith("panel skips d:")]
    assert len(skips) == 1 and "KeyError" in skips[0], found.notes
    for n in range(3):
        later = await session.execute(f"w.grad = torch.full((2,), {n + 1}.0)")
        assert overtime_notes(later) == [], later.notes
        assert session.tensors["w"]["grad"]["values"] == [n + 1.0, n + 1.0]
    fixed = await session.execute("d = {'a': torch.ones(1)}")
    assert overtime_notes(fixed) == [], fixed.notes
    assert "d['a']" in session.tensors


async def test_a_namespace_key_that_is_no_name_leaves_the_panel_alone(session):
    """globals()[123] = ... once broke every later step's walk, and the panel 'skipped' innocent names."""
    first = await session.execute("w = torch.zeros(2, requires_grad=True)\nglobals()[123] = torch.ones(1)")
    assert first.error is None and not [note for note in first.notes if "panel" in note], first.notes
    for n in range(2):
        later = await session.execute(f"w.grad = torch.full((2,), {n + 1}.0)\nv{n} = torch.ones(3)")
        assert not [note for note in later.notes if "panel" in note], later.notes
        assert session.tensors["w"]["grad"]["values"] == [n + 1.0, n + 1.0] and f"v{n}" in session.tensors
