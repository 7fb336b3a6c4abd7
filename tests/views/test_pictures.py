"""The pictures drawn with text characters (views/pictures.py, plot.py, graph_drawing.py, trace_pictures.py):
what a learner reads in them without colour."""

from __future__ import annotations

from gradrepl.views.graph_drawing import graph_drawing_text, graph_picture, layers_of
from gradrepl.views.pictures import bar, heat_strip, plot, sparkline
from gradrepl.views.plot import history_plot_text, series_plot_text, sparkline_words
from gradrepl.views.trace_pictures import grad_bars, trace_pictures_text

# y = x ** 2 + 3 * x, after y.backward(): x is used twice (a DAG, not a tree)
SQUARE = {"root": "y", "kind": "graph", "truncated": False, "freed": True, "nodes": [
    {"id": 1, "grad_fn": "AddBackward0", "shapes": [[]], "leaf": None, "saved": [], "saved_bytes": 0},
    {"id": 2, "grad_fn": "PowBackward0", "shapes": [[]], "leaf": None,
     "saved": [{"name": "self", "shape": [], "freed": True}], "saved_bytes": 0},
    {"id": 3, "grad_fn": "MulBackward0", "shapes": [[]], "leaf": None,
     "saved": [{"name": "other", "shape": [], "freed": True}], "saved_bytes": 0},
    {"id": 4, "grad_fn": "AccumulateGrad", "shapes": [[]], "leaf": "x", "saved": [], "saved_bytes": 0}],
    "edges": [[1, 2], [1, 3], [2, 4], [3, 4]]}
# loss = F.mse_loss(model(x), y) for nn.Linear(3, 1): the bias's edge skips the TBackward0 layer
LINEAR = {"root": "loss", "kind": "graph", "truncated": False, "freed": False, "nodes": [
    {"id": 0, "grad_fn": "MseLossBackward0", "shapes": [[]], "leaf": None, "saved": [
        {"name": "self", "shape": [8, 1], "freed": False}, {"name": "target", "shape": [8, 1], "freed": False,
                                                          "tensor": "y"}], "saved_bytes": 64},
    {"id": 1, "grad_fn": "AddmmBackward0", "shapes": [[8, 1]], "leaf": None, "saved": [
        {"name": "mat1", "shape": [8, 3], "freed": False, "tensor": "x"}], "saved_bytes": 96},
    {"id": 2, "grad_fn": "AccumulateGrad", "shapes": [[1]], "leaf": "model.bias", "saved": [], "saved_bytes": 0},
    {"id": 3, "grad_fn": "TBackward0", "shapes": [[3, 1]], "leaf": None, "saved": [], "saved_bytes": 0},
    {"id": 4, "grad_fn": "AccumulateGrad", "shapes": [[1, 3]], "leaf": "model.weight", "saved": [], "saved_bytes": 0}],
    "edges": [[0, 1], [1, 2], [1, 3], [3, 4]]}


def test_a_sparkline_is_as_tall_as_each_value_and_squeezes_to_its_width():
    assert sparkline([3, 2, 1, 0]) == "█▆▃▁"
    assert sparkline([1, 1, 1]) == "▄▄▄"  # no change: the middle height, not the floor
    assert sparkline([0, float("nan"), 1]) == "▁·█"  # a nan is a dot, not a height
    assert len(sparkline(list(range(100)), 10)) == 10


def test_a_bar_is_its_fraction_of_the_width_in_eighths_and_any_gradient_shows():
    assert bar(1.0, 10) == "█" * 10
    assert bar(0.5, 10) == "█" * 5 + " " * 5
    assert bar(0.33, 10).rstrip() == "███▎"
    assert bar(1e-6, 10).rstrip() == "▏"
    assert bar(0.0, 10) == " " * 10


def test_a_heat_strip_shades_each_value_by_its_size_rows_parted():
    assert heat_strip([0.0, 0.5, -1.0, 0.25]) == " ▒█░"  # the sign does not matter, the size does
    assert heat_strip([[1.0, 0.0], [-0.1, 0.5]]) == "█ ┊░▒"


def test_a_plot_has_its_largest_and_smallest_values_on_its_axis_and_the_first_and_last_labels_under_it():
    lines = plot([4.0, 3.0, 2.0, 1.0], ("3", "6"), width=30, height=4)
    assert lines[0].startswith("4 ┤█") and lines[3].startswith("1 ┤")
    assert lines[4].lstrip().startswith("└─") and lines[5].split() == ["3", "6"]
    columns = [line.split("┤", 1)[1].ljust(16) for line in lines[:4]]
    heights = [sum(row[index] != " " for row in columns) for index in range(0, 16, 4)]
    assert heights == sorted(heights, reverse=True) and heights[0] == 4 and heights[-1] == 1, columns
    assert all(len(line) <= 30 for line in lines)


def test_history_plot_names_its_steps_and_says_a_loop_in_one_step_leaves_one_point():
    text = history_plot_text("loss", [(3, 2.5), (4, 1.0), (7, 0.25)], width=58)
    assert text.splitlines()[0] == "loss by step (steps 3 to 7, last 0.25)"
    assert "2.5 ┤" in text and "0.25 ┤" in text and "(step)" in text
    assert "losses.append(loss.item())" in text
    assert sparkline_words([(3, 2.5), (4, 1.0), (7, 0.25)]) == "█▃▁  2.5 → 0.25 over steps 3–7"
    assert sparkline_words([(3, 2.5)]) == ""  # one point is no line


def test_series_plot_says_how_many_numbers_each_column_averages():
    text = series_plot_text("losses", {"length": 1000, "values": [1 / (1 + i) for i in range(500)], "every": 2}, 70)
    assert text.splitlines()[0].startswith("losses: 1000 numbers, each column the mean of 2 (first 1,")
    assert "999" in text.splitlines()[-1] and all(len(line) <= 70 for line in text.splitlines()[1:])


def test_the_graph_is_boxes_in_layers_with_the_leaves_at_the_bottom_and_arrows_into_each_node():
    assert layers_of(SQUARE) == [[1], [2, 3], [4]]
    assert layers_of(LINEAR) == [[0], [1], [3], [2, 4]]  # both leaves at the bottom
    text = graph_drawing_text(LINEAR, 80)
    lines = text.splitlines()
    assert lines[0] == "loss: backward runs down the ▼ arrows to the leaves"
    assert all(len(line) <= 80 for line in lines)
    boxes = [index for index, line in enumerate(lines) if "AccumulateGrad" in line]
    assert len(boxes) == 1 and "MseLossBackward0" in lines[2]  # the root on top, both leaves on the last row
    assert "leaf model.weight" in lines[boxes[0] + 1] and "leaf model.bias" in lines[boxes[0] + 1]
    assert "saved target  8×1  is y" in text and "holds 64 B" in text  # beside the box
    mse = next(line for line in lines if "MseLossBackward0" in line)
    assert mse.index("saved") > mse.index("│ MseLossBackward0 │")
    assert "\n".join(lines[1:]).count("▼") == 4  # one arrow into each node but the root


def test_a_node_reached_twice_is_one_box_with_two_arrows_joining_above_it():
    lines = graph_picture(SQUARE, None)
    assert sum("AccumulateGrad" in line for line in lines) == 1
    below = lines.index(next(line for line in lines if "PowBackward0" in line))
    channel = lines[below + 3: below + 6]
    assert any("┘" in line or "└" in line for line in channel), lines
    assert lines[-1].strip().startswith("└") and lines[-4].count("▼") == 0


def test_the_picture_puts_the_saved_words_inside_the_boxes_then_falls_back_to_the_tree():
    wide = graph_drawing_text(SQUARE, None)
    assert "│ PowBackward0 │  saved self (freed)" in wide
    narrow = graph_drawing_text(SQUARE, 56)
    assert "│ saved self (freed) │" in narrow and all(len(line) <= 56 for line in narrow.splitlines()[:-1])
    tree = graph_drawing_text(SQUARE, 30)
    assert tree.splitlines()[:2] == ["y", "└─ AddBackward0  → scalar"]  # the indented tree
    assert "freed the saved tensors" in tree.splitlines()[-1]


TRACE = {"root": "loss", "capped": False, "note": None, "preview": True, "nodes": [
    {"order": 1, "id": "a", "name": "SumBackward0", "next": ["b"], "grad_outputs": [{"shape": [], "values": 1.0}],
     "grad_inputs": [{"shape": [2, 2], "values": [[1.0, 1.0], [1.0, 1.0]]}]},
    {"order": 2, "id": "b", "name": "MulBackward0", "next": ["c"],
     "grad_outputs": [{"shape": [2, 2], "values": [[1.0, 1.0], [1.0, 1.0]]}],
     "grad_inputs": [{"shape": [2, 2], "values": [[0.0, 2.0], [4.0, -4.0]]}]},
    {"order": 3, "id": "c", "name": "AccumulateGrad", "leaf": "w", "next": [],
     "grad_outputs": [{"shape": [2, 2], "values": [[0.0, 2.0], [4.0, -4.0]]}], "grad_inputs": None},
    {"order": None, "id": "d", "name": "AccumulateGrad", "leaf": "b", "next": [], "grad_outputs": None,
     "grad_inputs": None}]}


def test_trace_bars_are_each_gradients_size_against_the_largest_and_heat_strips_show_the_weight_and_its_grad():
    bars = grad_bars(TRACE["nodes"])
    assert set(bars) == {"a", "b", "c"}  # a node no gradient reached has no bar
    assert bars["c"] == "  ██████████ 6"  # norm of [[0, 2], [4, -4]]
    assert bars["b"] == "  ███▍       2" and bars["a"].startswith("  █▋ ")
    text = trace_pictures_text(TRACE, {"w": {"value": {"shape": [2, 2], "values": [[1.0, -1.0], [0.5, 0.0]]}}})
    assert "   3 AccumulateGrad → w  ██████████ 6" in text
    assert "  w  value ▕██┊▒ ▏  grad ▕ ▒┊██▏" in text


def test_a_line_crossing_another_parents_track_goes_straight_through_and_joins_are_drawn_as_joins():
    from gradrepl.views.graph_drawing import cell_character

    assert cell_character({"A": {"u", "d"}, "B": {"l", "r"}}) == "│"  # A's drop crosses B's track: no join
    assert cell_character({"B": {"l", "r", "d"}, ("to", 4): {"u", "d"}}) == "┼"  # B's track meets a line to 4
    assert cell_character({"B": {"u", "r"}}) == "└"
    # loss = a * b + a: a's two parents' lines join above its one box (one ▼ into each node but the root)
    graph = {"root": "loss", "kind": "graph", "truncated": False, "freed": False, "nodes": [
        {"id": 0, "grad_fn": "AddBackward0", "shapes": [[]], "leaf": None, "saved": [], "saved_bytes": 0},
        {"id": 1, "grad_fn": "MulBackward0", "shapes": [[]], "leaf": None, "saved": [], "saved_bytes": 0},
        {"id": 2, "grad_fn": "AccumulateGrad", "shapes": [[]], "leaf": "a", "saved": [], "saved_bytes": 0},
        {"id": 3, "grad_fn": "AccumulateGrad", "shapes": [[]], "leaf": "b", "saved": [], "saved_bytes": 0}],
        "edges": [[0, 1], [0, 2], [1, 2], [1, 3]]}
    rows = graph_picture(graph, None)
    assert sum(line.count("▼") for line in rows) == 3 and sum("AccumulateGrad" in line for line in rows) == 1
    assert any("├┘" in line for line in rows), rows  # the line skipping Mul's layer joins Mul's line to a
    text = "\n".join(rows)
    assert "leaf a" in text and "leaf b" in text and text.index("MulBackward0") < text.index("leaf a")
