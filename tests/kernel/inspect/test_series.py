"""A list's or tensor's numbers as data for %plot (kernel/inspect/series.py), read without growing a graph."""

from __future__ import annotations

import math

import torch

from gradrepl.kernel.inspect.series import MAX_POINTS, series_of
from gradrepl.views.remarks import request_error


def test_a_list_of_numbers_and_of_one_number_tensors_is_read_as_is():
    assert series_of([3, 2.5, True]) == {"length": 3, "values": [3.0, 2.5, 1.0], "every": 1}
    w = torch.ones(2, requires_grad=True)
    kept = [(w * 2).sum(), (w * 3).sum()]  # losses kept without .item()
    assert series_of(kept)["values"] == [4.0, 6.0]


def test_a_long_series_is_squeezed_into_bucket_means_and_nan_is_a_gap():
    series = series_of(torch.arange(2000.0))
    assert series["length"] == 2000 and series["every"] == 4 and len(series["values"]) == 500 <= MAX_POINTS
    assert series["values"][0] == 1.5  # mean of 0, 1, 2, 3
    assert series_of([1.0, math.nan])["values"] == [1.0, None]


def test_what_is_no_sequence_of_numbers_says_what_it_is_as_a_code_the_views_word():
    def words(value):
        found = series_of(value)
        assert set(found) == {"code", "names"}, found  # data, never a sentence from the kernel
        return request_error(found["code"], {"name": "v", **found["names"]})

    assert words({"a": 1}) == "v is a dict, not a list of numbers or a tensor"
    assert words([]) == "v is empty: nothing to plot yet"
    assert words([1.0, "x"]).startswith("v holds a str")
    assert "cannot be plotted" in words(torch.ones(2, dtype=torch.complex64))
