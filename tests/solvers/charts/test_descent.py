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


# -- trapping sets: a path inside one is stopped as staying (first_departure) ---------------------------------------
@pytest.mark.parametrize("optimizer, mu", [("gd", 0.0), ("momentum", 0.9), ("momentum", 0.5), ("nesterov", 0.9)])
@pytest.mark.parametrize("mirrored", [False, True])
def test_trapping_sets_change_no_first_departure_and_cut_the_steps(optimizer, mu, mirrored):
    # the ladder of overshoot_rate (ratio 1.01 over a factor 100 below a bound) on the double well: the first rate that
    # leaves, and every stop before it, are those of the exhaustive run (no trapping), which runs to a cycle or the end
    lo, hi = (0.0, 16.0) if mirrored else (-16.0, 16.0)
    nodes = np.linspace(lo, hi, 6401)
    table = _double_well(nodes)
    x0 = 1e-3 if mirrored else -1e-3
    rates = 0.2 * 1.01 ** -np.arange(463, 0, -1.0)
    for profile in (np.ones(3000), np.r_[np.linspace(0.1, 1.0, 100), np.ones(2900)]):
        args = (nodes, table, x0, rates, profile, optimizer, mu, lo, hi, mirrored)
        exhaustive, ran_all = first_departure(*args, traps=False, steps_run=True)
        first, ran = first_departure(*args, steps_run=True)
        assert first == exhaustive
        alive, _ = descent_paths(nodes, table, x0, rates[:first + 1], profile, optimizer, mu, lo, hi, mirrored)
        assert alive[:first].all() and (first == rates.size or not alive[first])
        for stop in (first // 2, first):
            assert first_departure(*args, stop=stop) == min(stop, exhaustive)
        if profile[0] == 1.0:   # a constant schedule: trapped from the start
            assert ran.sum() < ran_all.sum() / 3


def _ellipse_iterates(optimizer, mu, eta, x_star, force, P, radius, starts, steps=400):
    """The update rule in NumPy from states ``starts (k, 2)`` of deviation ``(x − x*, v)``: the largest P-norm seen."""
    e, v = starts[:, 0].copy(), starts[:, 1].copy()
    worst = 0.0
    for _ in range(steps):
        g = force(x_star + e)
        if optimizer == "gd":
            e = e - eta * g
        else:
            v = mu * v + g
            e = e - eta * (g + mu * v if optimizer == "nesterov" else v)
        worst = max(worst, float(np.max(np.sqrt(P[0, 0] * e * e + 2 * P[0, 1] * e * v + P[1, 1] * v * v))))
    return worst


@pytest.mark.parametrize("optimizer, mu", [("momentum", 0.9), ("momentum", 0.5), ("nesterov", 0.9), ("gd", 0.0)])
def test_a_certified_ellipse_is_never_left_and_the_monotone_interval_maps_into_itself(optimizer, mu):
    from solvers.charts.descent import GD, _monotone_interval, _rule, _trap, trapping_wells

    s = 5.0
    nodes = np.linspace(0.0, 16.0, 6401)
    table = _double_well(nodes, s)
    wells, cells, slopes = trapping_wells(nodes, table, 0.0, 16.0, True)
    assert wells.shape[0] == 1
    x_star = wells[0, 0]
    assert abs(x_star - np.sqrt(2 * s)) < (nodes[1] - nodes[0]) ** 2        # the zero of the tabulated force
    r, k_lo, k_hi = wells[0, 2 + 3 * 12: 5 + 3 * 12]                          # a small radius: the slope brackets 2s
    h = nodes[1] - nodes[0]
    assert k_lo <= 2 * s <= k_hi and k_hi - k_lo <= 4 * h * 3 * x_star       # f' = 3x²/2 − s: f'' = 3x, cells of h
    force = lambda x: np.interp(x, nodes, table)                              # noqa: E731
    rng = np.random.default_rng(3)
    bound = 2 * (1 + mu) / (2 * s) if optimizer == "momentum" else \
        2 * (1 + mu) / ((1 + 2 * mu) * 2 * s) if optimizer == "nesterov" else 2 / (2 * s)
    certified = 0
    for eta in bound * np.geomspace(0.01, 0.999, 25):
        p, q, t, level = _trap(eta, mu, _rule(optimizer), wells[0])
        if level > 0:
            certified += 1
            P = np.array([[p, q], [q, t]])
            R = 2 * np.sqrt(level)                     # the invariant radius (the stop level is half of it)
            angle = rng.uniform(0, 2 * np.pi, 400)
            L = np.linalg.cholesky(np.linalg.inv(P))
            z = (L @ np.stack([np.cos(angle), np.sin(angle)])).T * R * rng.uniform(0.5, 1.0, (400, 1))
            if optimizer == "gd":
                z[:, 1] = 0.0
                z[:, 0] = rng.uniform(-R, R, 400)
            assert _ellipse_iterates(optimizer, mu, eta, x_star, force, P, R, z) <= R * (1 + 1e-9)
        if _rule(optimizer) == GD:
            a, b = _monotone_interval(eta, nodes, table, cells[0], slopes[0], np.abs(table).max(), 0.0, 16.0, True)
            if eta * 2 * s <= 0.99:                    # ηκ < 1 at the minimum: a nondecreasing map on a wide interval
                assert a < 0.01 and b > x_star
            if a < b:
                x = np.linspace(a, b, 20001)
                image = x - eta * force(x)
                assert image.min() >= a and image.max() <= b
    assert certified >= 20                             # most rates below the bound have a trap
