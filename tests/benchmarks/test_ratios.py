"""The statistics of the benchmark tables: pair-by-pair ratios, median and spread, run order, interpolation."""

import math

import pytest

from benchmarks.ratios import interpolate_loglog, pairwise_ratios, rotated, summarise


def test_summary_is_median_and_range():
    s = summarise([3.0, 1.0, 2.0, 10.0])
    assert (s.median, s.low, s.high, s.count) == (2.5, 1.0, 10.0, 4)
    assert summarise([5]).median == 5.0


def test_summary_rejects_empty_and_non_finite():
    with pytest.raises(ValueError, match="values"):
        summarise([])
    with pytest.raises(ValueError, match="finite"):
        summarise([1.0, math.nan])


def test_ratios_are_formed_within_each_repeat():
    # a machine that slows down by 2x in repeat 1 affects both tools: the pairwise ratio stays 4,
    # while a ratio of medians of the same numbers would not be exactly 4 here
    shockflow = [8.0, 4.0, 8.0]
    other = [2.0, 1.0, 2.0]
    assert pairwise_ratios(shockflow, other) == [4.0, 4.0, 4.0]
    with pytest.raises(ValueError, match="one value per repeat"):
        pairwise_ratios([1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="positive"):
        pairwise_ratios([1.0], [0.0])


def test_run_order_rotates_through_every_position():
    order = ["a", "b", "c"]
    firsts = {rotated(order, r)[0] for r in range(3)}
    assert firsts == set(order)
    assert rotated(order, 4) == ["b", "c", "a"]
    assert rotated([], 3) == []


def test_loglog_interpolation_is_exact_for_power_laws():
    errors = [1e-1, 1e-2, 1e-3]
    times = [e ** -1.5 for e in errors]  # time ~ error^(-3/2)
    assert interpolate_loglog(errors, times, 3e-3) == pytest.approx((3e-3) ** -1.5, rel=1e-12)
    assert interpolate_loglog(errors, times, 1e-4) is None  # outside the measured range
