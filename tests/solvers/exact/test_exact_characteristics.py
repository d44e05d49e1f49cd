"""Smooth Burgers solution by characteristics and first shock times (docs/theory.md §1, §5)."""

import math

import numpy as np
import pytest

from solvers.errors import SolverInputError
from solvers.exact.characteristics import (burgers_smooth, burgers_smooth_slope, characteristic_foot, first_shock,
                                           first_shock_time)

A, C = 0.3, 0.2
T_STAR = 1 / (2 * np.pi * A)


def u0(x):
    return A * np.sin(2 * np.pi * x) + C


def du0(x):
    return 2 * np.pi * A * np.cos(2 * np.pi * x)


def u0_cell_only(x):
    assert np.all((x >= 0) & (x < 1)), "u0 evaluated outside the periodic cell"
    return u0(x)


def test_characteristic_solution_satisfies_implicit_equation_and_pde():
    x = np.linspace(0, 1, 257)
    t = 0.9 * T_STAR
    u = burgers_smooth(u0, du0, x, t)
    np.testing.assert_allclose(u, u0(x - u * t), atol=2e-15)
    res = []
    for h in (2e-4, 1e-4):
        ut = (burgers_smooth(u0, du0, x, t + h) - burgers_smooth(u0, du0, x, t - h)) / (2 * h)
        ux = (burgers_smooth(u0, du0, x + h, t) - burgers_smooth(u0, du0, x - h, t)) / (2 * h)
        res.append(np.max(np.abs(ut + u * ux)))
    assert res[1] < 0.3 * res[0] and res[1] < 1e-3, res  # second-order residual -> 0


def test_periodic_cell_wrapping_derivative_free_newton_and_slope():
    x = np.linspace(0, 1, 101, endpoint=False)
    t = 0.7 * T_STAR
    ref = burgers_smooth(u0, du0, x, t)
    np.testing.assert_allclose(burgers_smooth(u0_cell_only, None, x, t, period=1.0), ref, atol=1e-14)
    np.testing.assert_allclose(burgers_smooth(u0_cell_only, None, x, t, period=(0.0, 1.0)), ref, atol=1e-14)
    h = 1e-5
    fd = (burgers_smooth(u0, du0, x + h, t) - burgers_smooth(u0, du0, x - h, t)) / (2 * h)
    np.testing.assert_allclose(burgers_smooth_slope(u0, du0, x, t), fd, rtol=1e-6, atol=1e-6)
    # the steepest slope is -2πA/(1 - t/t*), attained at the shock point x = 0.5 + C t
    slope = burgers_smooth_slope(u0, du0, np.array([0.5 + C * t]), t)[0]
    assert slope == pytest.approx(-2 * np.pi * A / (1 - t / T_STAR), rel=1e-12)


def test_characteristics_past_the_shock_are_refused():
    with pytest.raises(SolverInputError, match="past the first shock time"):
        characteristic_foot(u0, np.linspace(0, 1, 101), 1.5 * T_STAR, du0)


def test_first_shock_time_of_sine_data_callable_and_samples():
    assert first_shock_time(u0, period=1.0) == pytest.approx(T_STAR, rel=1e-10)
    assert first_shock_time(u0, derivative=du0, domain=(0, 1), samples=17) == pytest.approx(T_STAR, rel=1e-10)
    onset = first_shock(u0, domain=(0, 1))
    assert onset.position[0] == pytest.approx(0.5 + C * T_STAR, abs=1e-6)
    x = np.linspace(0, 1, 32, endpoint=False)
    assert first_shock_time(u0(x), x, period=1.0) == pytest.approx(T_STAR, rel=1e-12)  # spectral
    assert first_shock_time(np.sin(2 * np.pi * x) * 0 + 1.0, x, period=1.0) == math.inf


def test_first_shock_time_nonperiodic_samples_converge_at_fourth_order_or_better():
    g = lambda x: np.tanh(3 * x) * np.exp(-x**2)  # min g' attained at x = 0 only after refinement
    exact = first_shock_time(g, domain=(-0.7, 1.3), samples=20001)
    errs = []
    for n in (41, 81, 161):
        x = np.linspace(-0.7, 1.3, n)
        errs.append(abs(first_shock_time(-g(x), x) - first_shock_time(lambda s: -g(s), domain=(-0.7, 1.3))))
    exact_neg = first_shock_time(lambda s: -g(s), domain=(-0.7, 1.3), samples=20001)
    assert exact > 0 and exact_neg > 0
    assert errs[2] < 1e-5 and errs[1] / errs[2] > 7, errs


def test_potential_data_cos_and_focusing_quadratic():
    assert first_shock_time(np.cos, data="potential", domain=(-3, 3)) == pytest.approx(1.0, rel=1e-9)
    assert first_shock(np.cos, data="potential", domain=(-3, 3)).foot[0] == pytest.approx(0.0, abs=1e-5)
    kappa = 2.5
    assert first_shock_time(lambda x: -kappa * x**2 / 2, data="potential", domain=(-1, 1)) == pytest.approx(1 / kappa, rel=1e-8)
    assert first_shock_time(lambda x: x**2, data="potential", domain=(-1, 1)) == math.inf  # convex: no shock


def test_potential_data_2d_lambda_min_of_hessian():
    M = np.array([[1.0, 2.0], [2.0, -0.5]])
    lam = np.linalg.eigvalsh(M)[0]
    xs, ys = np.linspace(-1, 1, 21), np.linspace(-2, 1, 31)
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    q = 0.5 * (M[0, 0] * X**2 + 2 * M[0, 1] * X * Y + M[1, 1] * Y**2)
    assert first_shock_time(q, (xs, ys), data="potential") == pytest.approx(-1 / lam, rel=1e-10)
    f = lambda X, Y: 0.5 * (M[0, 0] * X**2 + 2 * M[0, 1] * X * Y + M[1, 1] * Y**2)
    assert first_shock_time(f, (xs, ys), data="potential") == pytest.approx(-1 / lam, rel=1e-6)
    xp = np.linspace(0, 1, 24, endpoint=False)
    X, Y = np.meshgrid(xp, xp, indexing="ij")
    q = np.cos(2 * np.pi * X) * np.cos(2 * np.pi * Y) / (4 * np.pi**2)
    assert first_shock_time(q, (xp, xp), data="potential", period=1.0) == pytest.approx(1.0, rel=1e-10)


def test_first_shock_time_from_slope_values():
    x = np.linspace(0, 1, 40, endpoint=False)
    assert first_shock_time(du0(x), data="slope") == pytest.approx(T_STAR, rel=1e-15)  # a sample sits at x = 0.5
    xs = np.linspace(0.013, 1.013, 41)
    coarse = first_shock_time(du0(xs), data="slope")
    refined = first_shock_time(du0(xs), xs, data="slope")
    assert abs(refined - T_STAR) < 0.05 * abs(coarse - T_STAR)  # parabolic refinement beats the sampled minimum
    assert first_shock_time(du0, data="slope", period=1.0, samples=33) == pytest.approx(T_STAR, rel=1e-10)


def test_first_shock_time_input_errors():
    with pytest.raises(SolverInputError, match="data: unknown value 'pressure'"):
        first_shock_time(u0, domain=(0, 1), data="pressure")
    with pytest.raises(SolverInputError, match="x: sampled u0 needs its coordinates"):
        first_shock_time(np.zeros(10))
    with pytest.raises(SolverInputError, match="uniformly spaced"):
        first_shock_time(np.zeros(4), np.array([0, 1, 3, 4.0]))
