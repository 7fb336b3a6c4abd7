"""Expression mode: calculus, autograd and a central difference side by side (kernel-side modules)."""

import math

import pytest

from gradrepl.kernel.symbolic.checks import check_expression as kernel_check, equivalent
from gradrepl.views.check import render_check, word_check
from gradrepl.views.remarks import worded_parse_error


def check_expression(expr: str, point: dict) -> dict:
    """The kernel's check, its notes worded as the session words them."""
    return word_check(kernel_check(expr, point))


def sig(v):
    return 1 / (1 + math.exp(-v))


# (expression, point, {variable: derivative written by hand with math})
TABLE = [
    ("x**3 - 2*x + 1", {"x": 1.5}, {"x": lambda x: 3 * x**2 - 2}),
    ("x^2 + 3x", {"x": -4}, {"x": lambda x: 2 * x + 3}),
    ("exp(2*x) * log(x)", {"x": 0.7}, {"x": lambda x: 2 * math.exp(2 * x) * math.log(x) + math.exp(2 * x) / x}),
    ("sin(x)**2 + cos(3*x)", {"x": 0.4}, {"x": lambda x: 2 * math.sin(x) * math.cos(x) - 3 * math.sin(3 * x)}),
    ("tan(x)", {"x": 0.3}, {"x": lambda x: 1 / math.cos(x) ** 2}),
    ("tanh(x)", {"x": -0.8}, {"x": lambda x: 1 - math.tanh(x) ** 2}),
    ("sigmoid(x)", {"x": 0.25}, {"x": lambda x: sig(x) * (1 - sig(x))}),
    ("tanh(sin(x)**2)", {"x": 1.1},
     {"x": lambda x: (1 - math.tanh(math.sin(x) ** 2) ** 2) * 2 * math.sin(x) * math.cos(x)}),
    ("sqrt(1 + x**2)", {"x": 2}, {"x": lambda x: x / math.sqrt(1 + x**2)}),
    ("x**x", {"x": 1.7}, {"x": lambda x: x**x * (math.log(x) + 1)}),
    ("atan(x) + asin(x/2)", {"x": 0.5}, {"x": lambda x: 1 / (1 + x**2) + 0.5 / math.sqrt(1 - x**2 / 4)}),
    ("relu(x) * x", {"x": 1.5}, {"x": lambda x: 2 * x}),
    ("x*y**2 + exp(x*y)", {"x": 0.5, "y": -1.5},
     {"x": lambda x, y: y**2 + y * math.exp(x * y), "y": lambda x, y: 2 * x * y + x * math.exp(x * y)}),
    ("sigmoid(w*x + b)", {"w": 0.3, "x": 2.0, "b": -0.1},
     {"w": lambda w, x, b: sig(w * x + b) * (1 - sig(w * x + b)) * x,
      "x": lambda w, x, b: sig(w * x + b) * (1 - sig(w * x + b)) * w,
      "b": lambda w, x, b: sig(w * x + b) * (1 - sig(w * x + b))}),
]


@pytest.mark.parametrize("expr, point, derivatives", TABLE, ids=[row[0] for row in TABLE])
def test_three_derivatives_agree_with_the_hand_derivative(expr, point, derivatives):
    result = check_expression(expr, point)
    assert result["agree"] is True
    assert set(result["grads"]) == set(derivatives)
    for var, hand in derivatives.items():
        expected = hand(*point.values())
        g = result["grads"][var]
        assert g["status"] == "agree"
        assert math.isclose(g["symbolic_value"], expected, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(g["autograd"], expected, rel_tol=1e-7, abs_tol=1e-9)
        assert math.isclose(g["numeric"], expected, rel_tol=1e-5, abs_tol=1e-6)


def test_the_seed_example_y_equals_x_squared_plus_3x_at_2_has_slope_7():
    result = check_expression("x**2 + 3*x", {"x": 2})
    assert result["value"] == 10
    g = result["grads"]["x"]
    assert g["symbolic"] == "2*x + 3"
    assert g["symbolic_value"] == 7 and g["autograd"] == 7
    assert abs(g["numeric"] - 7) < 1e-6


def test_json_shape_matches_the_issue():
    result = check_expression("x*y", {"x": 2, "y": 3})
    assert {"expr", "point", "agree", "grads"} <= set(result)
    assert result["point"] == {"x": 2.0, "y": 3.0}
    for g in result["grads"].values():
        assert {"symbolic", "symbolic_value", "autograd", "numeric", "agree"} <= set(g)
    assert result["grads"]["x"]["symbolic"] == "y" and result["grads"]["y"]["symbolic"] == "x"


@pytest.mark.parametrize("expr, at, words", [
    ("abs(x)", 0.0, "corner"),
    ("abs(x - 1) * 3", 1.0, "corner"),
    ("sqrt(x)", 0.0, "infinite or undefined"),
    ("log(x)", -1.0, "not a finite real number"),
    ("1/x", 0.0, "not a finite real number"),
])
def test_points_without_a_derivative_are_reported_as_such_not_as_disagreement(expr, at, words):
    result = check_expression(expr, {"x": at})
    g = result["grads"]["x"]
    assert g["status"] == "undefined" and g["agree"] is None and g["exists"] is False
    assert words in g["note"]
    assert result["agree"] is True  # nothing disagrees


def test_relu_at_zero_has_slope_zero_like_autograd():
    g = check_expression("relu(x)", {"x": 0.0})["grads"]["x"]
    assert g["status"] == "agree"
    assert g["symbolic_value"] == 0 and g["autograd"] == 0
    assert "corner" in g["note"]


def test_float64_overflow_in_autograd_is_a_disagreement_with_an_explanation():
    result = check_expression("exp(x)/(exp(x) + 1)", {"x": 800})
    assert result["agree"] is False
    g = result["grads"]["x"]
    assert g["status"] == "disagree" and g["autograd"] is None
    assert "overflow" in g["note"]


@pytest.mark.parametrize("point, words", [
    ({"x": 1}, "no value for y"),
    ({"x": 1, "y": 2, "z": 3}, "does not use z"),
    ({"x": 1, "y": float("nan")}, "finite number"),
])
def test_the_point_must_give_exactly_the_variables(point, words):
    result = check_expression("x*y", point)
    assert words in result["error"]["message"]


def test_bad_input_comes_back_as_an_error_value_with_a_column_never_an_exception():
    for text in ["x +* 2", "x.__class__", "import os", "x if x else 1", "f'{x}'", "x @ y", "\x00", "(" * 200]:
        result = check_expression(text, {"x": 1})
        assert set(result) == {"error"}, text
        assert result["error"]["message"]


def test_render_is_an_aligned_table_with_words_for_the_notes():
    text = render_check(check_expression("abs(x) + y**2", {"x": 0, "y": 3}))
    lines = text.splitlines()
    header = next(line for line in lines if "autograd" in line and "symbolic" in line)
    row_y = next(line for line in lines if line.startswith("d/dy"))
    column = header.index("autograd")
    assert row_y[column:].split()[0] == "6"          # autograd's value sits under its header
    assert "no derivative here" in text and "corner" in text
    assert render_check({"error": {"message": "not allowed: lambda", "column": 3}}) == \
        "error: not allowed: lambda (column 3)"


@pytest.mark.parametrize("answer, key, same", [
    ("2x + 3", "3 + x*2", True),
    ("2*x + 2", "2*x + 3", False),
    ("sigmoid(x)*(1 - sigmoid(x))", "exp(-x)/(1 + exp(-x))^2", True),
    ("cos(x)**2 - sin(x)**2", "cos(2x)", True),
    ("1/x", "log(x)", False),
    ("2*y", "2*x", False),
])
def test_equivalent_compares_functions_not_text(answer, key, same):
    assert equivalent(answer, key) == {"equivalent": same}


def test_equivalent_reports_an_unparseable_answer_with_its_column():
    raw = equivalent("2*x +", "2*x")
    assert raw == {"error": {"code": "ends_early", "names": {}, "column": 6}}  # data: the views word it
    assert worded_parse_error(raw["error"]) == {"message": "the expression ends too early", "column": 6}


def test_an_answer_key_that_does_not_parse_says_so_with_the_keys_own_error():
    raw = equivalent("2*x", "sin(x")
    assert worded_parse_error(raw["error"])["message"].startswith("the answer key does not parse: ")
