"""The safe parser: what it accepts, what it refuses, and that refused text never runs."""

import math

import pytest
import sympy

from gradrepl.kernel.symbolic.expr import MAX_LENGTH, ExprError, parse, relu, sigmoid, symbol
from gradrepl.views.remarks import parse_error_words

x, y = symbol("x"), symbol("y")


@pytest.mark.parametrize("text, expected", [
    ("x**2 + 3*x", x**2 + 3 * x),
    ("x^2 + 3x", x**2 + 3 * x),                      # friendly: ^ is power, 3x is 3*x
    ("2(x + 1)", 2 * (x + 1)),
    ("-x**2", -(x**2)),
    ("x/y - y", x / y - y),
    ("0.1*x", sympy.Rational(1, 10) * x),            # decimals stay exact
    ("1e5x", 100000 * x),                            # 1e5 is one number, then times x
    ("sin(x)*cos(y) + tan(x)", sympy.sin(x) * sympy.cos(y) + sympy.tan(x)),
    ("exp(log(y)) + sqrt(x)", y + sympy.sqrt(x)),
    ("abs(x)", sympy.Abs(x)),
    ("tanh(x) + sinh(x) + cosh(x)", sympy.tanh(x) + sympy.sinh(x) + sympy.cosh(x)),
    ("asin(x) + acos(x) + atan(x)", sympy.asin(x) + sympy.acos(x) + sympy.atan(x)),
    ("sigmoid(x) * relu(y)", sigmoid(x) * relu(y)),
    ("log(x, 2)", sympy.log(x) / sympy.log(2)),
    ("x**x", x**x),
    ("pi*x", sympy.pi * x),
    ("  x +\n 1", x + 1),
])
def test_accepted_expressions_build_the_expected_sympy_tree(text, expected):
    assert parse(text).expr == expected


def test_variables_are_real_symbols_in_order_of_first_appearance():
    parsed = parse("y*x + x2y")
    assert [str(v) for v in parsed.variables] == ["y", "x", "x2y"]
    assert all(v.is_real for v in parsed.variables)


@pytest.mark.parametrize("text, words, column", [
    ("x.real", "attribute access ('.real')", 2),
    ("__import__('os').system('ls')", "attribute access ('.system')", 17),
    ("x[0]", "subscripts", 2),
    ("lambda: 1", "lambda", 1),
    ("[i for i in x]", "comprehensions", 1),
    ("'text'", "strings", 1),
    ("sin(x=1)", "keyword arguments", 7),
    ("open('f')", "unknown function 'open'", 1),
    ("x(x + 1)", "unknown function 'x'", 1),
    ("x // 2", "'//'", 3),
    ("x < 1", "comparisons", 1),
    ("x + ", "ends too early", 4),
    ("sin(x", "was never closed", 4),
    ("x y", "cannot parse", 3),
    ("sin", "is a function", 1),
    ("_secret", "names starting with '_'", 1),
    ("x/0", "division by zero", 2),
    ("True", "the constant True", 1),
    ("", "empty", 1),
])
def test_refusals_name_the_problem_and_its_column(text, words, column):
    with pytest.raises(ExprError) as info:
        parse(text)
    assert words in parse_error_words(info.value.to_json())  # the kernel sends the code, the views word it
    assert info.value.column == column
    assert info.value.to_json() == {"code": info.value.code, "names": info.value.names, "column": column}


def test_columns_point_into_the_text_as_typed_not_the_rewritten_text():
    # '3x' and '^' are rewritten before parsing; the column must still match what the learner typed.
    with pytest.raises(ExprError) as info:
        parse("3x^2 + x.imag")
    assert info.value.column == "3x^2 + x.imag".index(".") + 1


@pytest.mark.parametrize("text", ["2**2**2**30", "x**100000", "(9**999)**999", "10**10**10"])
def test_huge_powers_are_refused_instead_of_computed(text):
    with pytest.raises(ExprError) as info:
        parse(text)
    assert "too large" in parse_error_words(info.value.to_json())


def test_overlong_input_is_refused():
    with pytest.raises(ExprError) as info:
        parse("x+" * MAX_LENGTH + "x")
    assert "too long" in parse_error_words(info.value.to_json())


@pytest.mark.parametrize("template", [
    "__import__('os').system('touch {path}')",
    "open('{path}', 'w')",
    "exec(\"open('{path}', 'w')\")",
    "eval(\"open('{path}', 'w')\")",
    "(lambda: open('{path}', 'w'))()",
    "[open('{path}', 'w') for _ in (1,)]",
    "().__class__.__base__.__subclasses__()",
    "x + open('{path}', 'w').write('pwned')",
    "sin(open('{path}', 'w'))",
])
def test_injection_attempts_are_refused_and_nothing_runs(template, tmp_path, monkeypatch):
    import sympy.parsing.sympy_parser as sympy_parser

    def no_parse_expr(*args, **kwargs):
        raise AssertionError("learner text reached sympy's parse_expr")

    monkeypatch.setattr(sympy_parser, "parse_expr", no_parse_expr)
    marker = tmp_path / "created"
    with pytest.raises(ExprError):
        parse(template.format(path=marker))
    assert not marker.exists()


def test_parsed_expressions_are_plain_sympy_with_finite_numbers():
    parsed = parse("1e300*x + 2.5")
    value = float(parsed.expr.subs(parsed.variables[0], 1))
    assert math.isclose(value, 1e300)
