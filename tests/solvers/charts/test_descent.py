"""The discrete descent kernel (solvers.charts.descent) against its NumPy reference and closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from solvers.charts.descent import descent_paths, descent_paths_reference, first_departure

RATES = np.geomspace(0.02, 1.2, 150)


def _double_well(r, s=5.0):
    return -(s - r ** 2 / 2) * r


@pytest.mark.parametrize("optimizer, mu", [("gd", 0.0), ("momentum", 0.9), ("nesterov", 0.8)])
@pytest.mark.parametrize("mirrored", [False, True])
def test_kernel_matches_the_numpy_reference_on_a_tabulated_force(optimizer, mu, mirrored):
    lo, hi = (0.0, 12.0) if mirrored else (-12.0, 12.0)
    nodes = np.linspace(0.0 if mirrored else lo, hi, 3001)
    table = _double_well(nodes)
    profile = np.r_[np.linspace(0.1, 1.0, 50), np.ones(900), np.linspace(1.0, 0.2, 50)]   # warm-up and decay
    x0 = 1e-3 if mirrored else -1e-3
    alive, peak = descent_paths(nodes, table, x0, RATES, profile, optimizer, mu, lo, hi, mirrored)
    ref_alive, ref_peak = descent_paths_reference(lambda p: np.interp(p, nodes, table), x0, RATES, profile,
                                                  optimizer, mu, lo, hi, mirrored)
    assert 0 < alive.sum() < alive.size                 # both stable and unstable rates on the ladder
    np.testing.assert_array_equal(alive, ref_alive)
    np.testing.assert_array_equal(peak, ref_peak)        # np.interp's arithmetic: bitwise


@pytest.mark.parametrize("optimizer, mu", [("gd", 0.0), ("momentum", 0.9), ("nesterov", 0.5)])
@pytest.mark.parametrize("mirrored", [False, True])
def test_stopping_on_an_exact_cycle_changes_nothing(optimizer, mu, mirrored):
    # a constant schedule (from the first step, or after a warm-up): stable paths settle on an exact fixed point or
    # cycle long before the end and stop there; alive and peak must be bitwise those of the reference, which runs
    # every step
    lo, hi = (0.0, 12.0) if mirrored else (-12.0, 12.0)
    nodes = np.linspace(0.0 if mirrored else lo, hi, 3001)
    table = _double_well(nodes)
    x0 = 1e-3 if mirrored else -1e-3
    for profile in (np.ones(20000), np.r_[np.linspace(0.1, 1.0, 100), np.ones(19900)]):
        alive, peak = descent_paths(nodes, table, x0, RATES, profile, optimizer, mu, lo, hi, mirrored)
        ref_alive, ref_peak = descent_paths_reference(lambda p: np.interp(p, nodes, table), x0, RATES, profile,
                                                      optimizer, mu, lo, hi, mirrored)
        assert 0 < alive.sum() < alive.size
        np.testing.assert_array_equal(alive, ref_alive)
        np.testing.assert_array_equal(peak, ref_peak)
        # the stable paths stopped early (most of them long before the end), the departing ones where they left
        _, _, ran = descent_paths(nodes, table, x0, RATES, profile, optimizer, mu, lo, hi, mirrored, steps_run=True)
        assert np.median(ran[alive]) < 0.5 * profile.size
        varying = profile.copy()
        varying[-1] *= 1.0 + 1e-15        # never constant before the last step: every stable path runs to the end
        again = descent_paths(nodes, table, x0, RATES, varying, optimizer, mu, lo, hi, mirrored, steps_run=True)
        assert np.all(again[2][again[0]] == profile.size)


@pytest.mark.parametrize("optimizer, mu", [("gd", 0.0), ("momentum", 0.9)])
def test_first_departure_is_the_first_rate_that_leaves(optimizer, mu):
    nodes = np.linspace(0.0, 12.0, 3001)
    table = _double_well(nodes)
    profile = np.r_[np.linspace(0.1, 1.0, 50), np.ones(1950)]
    alive, _ = descent_paths(nodes, table, 1e-3, RATES, profile, optimizer, mu, 0.0, 12.0, True)
    first = int(np.argmin(alive))
    assert not alive.all() and first > 0
    assert first_departure(nodes, table, 1e-3, RATES, profile, optimizer, mu, 0.0, 12.0, True) == first
    for stop in (0, first, first + 1, RATES.size + 5):
        expect = min(first, stop, RATES.size)
        assert first_departure(nodes, table, 1e-3, RATES, profile, optimizer, mu, 0.0, 12.0, True, stop=stop) == expect
    stable = RATES[:first]
    assert first_departure(nodes, table, 1e-3, stable, profile, optimizer, mu, 0.0, 12.0, True) == stable.size


def test_gradient_descent_on_a_quadratic_is_the_geometric_sequence():
    # f = κ x: x_t = (1 − ηκ)^t x0 exactly, so the farthest point from x0 is max_t |(1 − ηκ)^t − 1| x0; past
    # ηκ = 2 the path grows geometrically and leaves
    kappa, steps = 3.0, 40
    nodes = np.linspace(-100.0, 100.0, 11)              # linear: the table is exact
    rates = np.array([0.1, 0.5, 0.65, 0.7]) / kappa * 2   # ηκ = 0.2, 1.0, 1.3, 1.4
    alive, peak = descent_paths(nodes, kappa * nodes, 1.0, rates, np.ones(steps), "gd", 0.0,
                                -100.0, 100.0)
    assert alive.all()
    t = np.arange(1, steps + 1)
    expected = [np.max(np.abs((1 - r * kappa) ** t - 1)) for r in rates]
    np.testing.assert_allclose(peak, expected, rtol=1e-12)
    alive, _ = descent_paths(nodes, kappa * nodes, 1.0, np.array([2.2 / kappa]), np.ones(steps), "gd", 0.0,
                             -100.0, 100.0)
    assert not alive[0]                                   # |1 − 2.2| ^ 40 = 1470 > 100


def test_bad_optimizer_and_table_are_refused():
    with pytest.raises(ValueError, match="optimizer"):
        descent_paths(np.linspace(0, 1, 3), np.zeros(3), 0.5, RATES, np.ones(3), "adam", 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="table"):
        descent_paths(np.zeros(1), np.zeros(1), 0.5, RATES, np.ones(3), "gd", 0.0, 0.0, 1.0)
