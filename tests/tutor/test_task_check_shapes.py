"""A task check's verdict says a shape in the views' one notation (2×3, scalar), as every view does."""

from gradrepl.tutor.task_checks import Check, difference


def _state(shape: list[int]) -> dict:
    entry = {"kind": "tensor", "type": "Tensor", "shape": shape, "dtype": "torch.float32", "values": [0.0]}
    return {"order": ["w"], "entries": {"w": entry}}


def test_a_shape_difference_is_said_2x3_not_as_a_tuple():
    found = difference(Check(message="w as the solution has it", target="w", facts=("shape",)), _state([2, 3]),
                       _state([3]))
    assert found == "w has shape 2×3, not 3", found
    found = difference(Check(message="w", target="w", facts=("shape",)), _state([]), _state([3]))
    assert found == "w has shape scalar, not 3", found
