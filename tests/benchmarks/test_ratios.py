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


def test_time_at_equal_error_takes_the_cheapest_run_at_least_as_accurate():
    """Interpolated on a scheme's curve where the error lies on it; a coarser-than-needed accurate run counts too."""
    from benchmarks.accuracy import time_at_equal_error

    def rec(tool, scheme, n, error, wall, stepping=None):
        return {"problem": "p", "tool": tool, "scheme": scheme, "n": n, "l1_error": error, "wall_s": wall,
                "stepping_s": stepping}

    records = [
        rec("shockflow", "first", 100, 1e-2, 0.01), rec("shockflow", "first", 200, 5e-3, 0.04),
        rec("shockflow", "second", 100, 1e-4, 0.03), rec("shockflow", "second", 200, 2.5e-5, 0.12),
        rec("other", "x", 50, 7.071067811865475e-3, 1.0, 0.5),  # on the first-order curve: 0.02 s there
        rec("other", "x", 400, 1e-3, 2.0),  # only the second-order coarse run (0.03 s) is as accurate
        rec("other", "x", 800, 1e-6, 3.0),  # nobody reaches it: no point
    ]
    points = time_at_equal_error(records, "p", "other")["points"]
    assert [p["n"] for p in points] == [50, 400]
    assert points[0]["shockflow_s"] == pytest.approx(0.02) and points[0]["shockflow_scheme"] == "first"
    assert points[0]["speedup"] == pytest.approx(50.0) and points[0]["speedup_stepping_only"] == pytest.approx(25.0)
    assert points[1]["shockflow_s"] == 0.03 and points[1]["shockflow_scheme"] == "second"
