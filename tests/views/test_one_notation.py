"""Every diagnosis, remark and check template says shapes in the views' one notation (2×3, scalar):
filled with sample shapes the kernel sends as sizes, no words hold a list, a tuple or torch.Size."""

from __future__ import annotations

import re
import string

import pytest

from gradrepl.views import check, diagnosis, refusals, remarks
from gradrepl.views.tables import format_summary
from gradrepl.views.templates import filled

SHAPE = [2, 3]
# the sample shape as a list or tuple, torch.Size, or a shape written with brackets into a template
FORBIDDEN = re.compile(r"\[2,\s*3\]|\(2,\s*3\)|torch\.Size\(|shapes? [\[(]\d|sizes? [\[(]\d")


def _sample(template: str) -> dict:
    """Each field of the template a sample shape (a number where the template formats one)."""
    return {field: 2.5 if spec else SHAPE
            for _, field, spec, _ in string.Formatter().parse(template) if field}


def _tables():
    yield from (("diagnosis.ERRORS", diagnosis.ERRORS), ("diagnosis.WARNINGS", diagnosis.WARNINGS),
                ("refusals.REFUSALS", refusals.REFUSALS), ("remarks.REMARKS", remarks.REMARKS),
                ("remarks.REQUEST_ERRORS", remarks.REQUEST_ERRORS), ("remarks.PARSE_ERRORS", remarks.PARSE_ERRORS),
                ("check.PROBLEMS", check.PROBLEMS), ("check.NOTES", check.NOTES))


CASES = [(f"{table}:{code}", table, code) for table, entries in _tables() for code in entries]
CASES += [(f"diagnosis.CAUSE_WORDS:{code}", "diagnosis.CAUSE_WORDS", code) for code in diagnosis.CAUSE_WORDS]


@pytest.mark.parametrize("label,table,code", CASES, ids=[case[0] for case in CASES])
def test_every_template_says_a_shape_as_2x3(label, table, code):
    if table == "diagnosis.CAUSE_WORDS":
        template = diagnosis.CAUSE_WORDS[code]
        words = diagnosis.error_words(code, _sample(template))
    elif table == "check.PROBLEMS":
        template = check.PROBLEMS[code]
        words = check.problem_words(code, {**_sample(template), "shape": SHAPE})
    else:
        template = dict(_tables())[table][code]
        words = filled(dict(_tables())[table], code, _sample(template))
    assert words is not None, f"{label}: the sample names do not fit {template!r}"
    assert not FORBIDDEN.search(words), f"{label}: {words!r}"
    if "{" in template:
        assert "2×3" in words or "2.5" in words or "{what}" in template, f"{label}: {words!r}"


def test_a_shape_fills_as_2x3_and_an_empty_one_as_scalar():
    table = {"code": "{name} has shape {shape}"}
    assert filled(table, "code", {"name": "c", "shape": [2, 3]}) == "c has shape 2×3"
    assert filled(table, "code", {"name": "c", "shape": []}) == "c has shape scalar"
    assert check.problem_words("not_traced", {"shape": [4]}) is not None
    assert "a tensor of shape 4" in (check.problem_words("not_traced", {"shape": [4]}) or ""), \
        check.problem_words("not_traced", {"shape": [4]})


def test_a_summary_with_no_values_says_its_shape_as_2x3():
    assert format_summary({"shape": [2, "*"]}) == "shape 2×*"
    assert format_summary({"shape": [2, 3]}) == "shape 2×3"
