"""Hopf–Cole (viscous Burgers / viscous HJ) and Hopf–Lax (inviscid HJ): closed forms and mutual limits."""

import math

import numpy as np
import pytest

from solvers.errors import SolverInputError
from solvers.exact.hopf_cole import viscous_burgers, viscous_hj, viscous_hj_2d
from solvers.exact.hopf_lax import hopf_lax, hopf_lax_solution
from solvers.exact.viscous_shock import viscous_shock

A, C = 0.3, 0.2


def u0_sine(y):
    return A * np.sin(2 * np.pi * y) + C


def phi0_sine(y):  # antiderivative of u0_sine on the line (not periodic: C != 0)
    return -A * np.cos(2 * np.pi * y) / (2 * np.pi) + C * y


def potential_periodic(y):
    return -A * np.cos(2 * np.pi * y) / (2 * np.pi)


# ------------------------------------------------------------------------------ Hopf–Cole
@pytest.mark.parametrize("kappa,t", [(1.5, 0.7), (-1.0, 0.5)])
@pytest.mark.parametrize("nu", [1e-1, 1e-3])
def test_viscous_hj_quadratic_data_closed_form(kappa, t, nu):
    """Gaussian integral: φ = κx²/(2(1+κt)) + ν log(1+κt)."""
    x = np.linspace(-2, 2, 161)
    phi = viscous_hj(lambda y: kappa * y**2 / 2, x, t, nu)
    exact = kappa * x**2 / (2 * (1 + kappa * t)) + nu * math.log(1 + kappa * t)
    assert np.max(np.abs(phi - exact)) < 1e-9


def test_hopf_cole_reproduces_travelling_viscous_shock():
    nu = 0.05
    x = np.linspace(-3, 6, 301)
    u = viscous_burgers(lambda y: viscous_shock(1.0, -0.5, nu, y), x, 2.0, nu)
    assert np.max(np.abs(u - viscous_shock(1.0, -0.5, nu, x, 2.0))) < 1e-9
    # from a smoothed step of another width, the solution relaxes onto the viscous shock
    # (same mass, so same centre): the distance decays fast in t
    step = lambda y: 0.25 - 0.75 * np.tanh(y / 0.05)
    d = [np.max(np.abs(viscous_burgers(step, x, T, nu) - viscous_shock(1.0, -0.5, nu, x, T))) for T in (1.0, 4.0, 8.0)]
    assert d[0] > 1e-3 and d[1] < 1e-5 and d[2] < 1e-9, d


def test_burgers_is_x_derivative_of_hj_and_periodic_data_with_nonzero_mean():
    x = np.linspace(0, 1, 64, endpoint=False)
    t, nu, h = 0.8, 0.01, 1e-4
    u = viscous_burgers(u0_sine, x, t, nu, period=1.0)  # periodic cell, mean C != 0
    dphi = (viscous_hj(phi0_sine, x + h, t, nu, tol=1e-12) - viscous_hj(phi0_sine, x - h, t, nu, tol=1e-12)) / (2 * h)
    assert np.max(np.abs(u - dphi)) < 1e-6
    np.testing.assert_allclose(viscous_burgers(u0_sine, x + 1.0, t, nu, period=1.0), u, atol=1e-10)
    assert np.mean(u) == pytest.approx(C, abs=1e-10)  # mass conserved (trapezoid rule is exact-ish on a period)


def test_small_viscosity_is_stable_and_obeys_maximum_principle():
    x = np.linspace(0, 1, 512, endpoint=False)
    for nu in (1e-3, 1e-4):
        u = viscous_burgers(lambda y: np.sin(2 * np.pi * y) + 0.5, x, 1.0, nu, period=1.0)
        phi = viscous_hj(lambda y: np.cos(2 * np.pi * y), x, 1.0, nu, period=1.0)
        assert np.all(np.isfinite(u)) and np.all(np.isfinite(phi))
        assert u.min() >= -0.5 - 1e-12 and u.max() <= 1.5 + 1e-12
        assert np.mean(u) == pytest.approx(0.5, abs=1e-9)


def test_vanishing_viscosity_limit_is_hopf_lax_and_entropy_solution():
    """φ_ν − u_HL = O(ν) uniformly; u_ν → (x − y*(x))/t (the entropy solution) in L1 at O(ν)."""
    t = 1.0  # past the first shock time 1/(2πA) = 0.53
    x = np.linspace(0, 1, 2000, endpoint=False)
    hl = hopf_lax_solution(potential_periodic, x, t, period=1.0)
    p_entropy = (x - hl.argmin) / t
    errs_phi, errs_u = [], []
    for nu in (1e-2, 1e-3):
        errs_phi.append(np.max(np.abs(viscous_hj(potential_periodic, x, t, nu, period=1.0) - hl.value)))
        errs_u.append(np.mean(np.abs(viscous_burgers(lambda y: A * np.sin(2 * np.pi * y), x, t, nu, period=1.0) - p_entropy)))
    assert 8 < errs_phi[0] / errs_phi[1] < 12, errs_phi
    assert errs_u[0] / errs_u[1] > 7 and errs_u[1] < 5e-3, errs_u


def test_viscous_hj_2d_separable_satisfies_pde():
    a = lambda s: np.cos(2 * np.pi * s) / 8
    b = lambda s: np.sin(2 * np.pi * s) ** 2 / 10
    nu, t = 0.02, 0.4
    xs, ys = np.linspace(0.1, 0.9, 9), np.linspace(0.05, 0.95, 10)
    res = []
    for h in (1e-2, 5e-3):
        f = lambda dx, dy, dt: viscous_hj_2d((a, b), xs + dx, ys + dy, t + dt, nu, period=1.0, tol=1e-12)
        p0 = f(0, 0, 0)
        pt = (f(0, 0, h) - f(0, 0, -h)) / (2 * h)
        px = (f(h, 0, 0) - f(-h, 0, 0)) / (2 * h)
        py = (f(0, h, 0) - f(0, -h, 0)) / (2 * h)
        lap = (f(h, 0, 0) + f(-h, 0, 0) + f(0, h, 0) + f(0, -h, 0) - 4 * p0) / h**2
        res.append(np.max(np.abs(pt + 0.5 * (px**2 + py**2) - nu * lap)))
    assert math.log2(res[0] / res[1]) == pytest.approx(2.0, abs=0.2), res


def test_viscous_hj_2d_general_data_quadratic_closed_form_and_separable_agreement():
    """φ = ½ xᵀ M (I + tM)⁻¹ x + ν log det(I + tM) for u0 = ½ xᵀ M x (non-separable M)."""
    M = np.array([[1.0, 0.6], [0.6, 2.0]])
    t, nu = 0.5, 0.05
    xs, ys = np.linspace(-1, 1, 7), np.linspace(-0.5, 1, 6)
    phi = viscous_hj_2d(lambda P, Q: 0.5 * (M[0, 0] * P**2 + 2 * M[0, 1] * P * Q + M[1, 1] * Q**2), xs, ys, t, nu,
                        tol=1e-10)
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    K = M @ np.linalg.inv(np.eye(2) + t * M)
    exact = 0.5 * (K[0, 0] * X**2 + 2 * K[0, 1] * X * Y + K[1, 1] * Y**2) + nu * math.log(np.linalg.det(np.eye(2) + t * M))
    assert np.max(np.abs(phi - exact)) < 1e-9
    a = lambda s: np.cos(2 * np.pi * s) / 8
    b = lambda s: np.sin(2 * np.pi * s) ** 2 / 10
    grid = np.linspace(0, 1, 6, endpoint=False)
    general = viscous_hj_2d(lambda P, Q: a(P) + b(Q), grid, grid, 0.4, 0.02, period=1.0, tol=1e-10)
    np.testing.assert_allclose(general, viscous_hj_2d((a, b), grid, grid, 0.4, 0.02, period=1.0), atol=1e-9)


def test_hopf_cole_input_errors():
    with pytest.raises(SolverInputError, match="nu: expected a finite number > 0"):
        viscous_burgers(np.sin, np.zeros(3), 1.0, 0.0)
    with pytest.raises(SolverInputError, match="u0: expected a vectorised callable"):
        viscous_hj(np.zeros(3), np.zeros(3), 1.0, 0.1)


# ------------------------------------------------------------------------------ Hopf–Lax
@pytest.mark.parametrize("kappa", [1.5, -1.5])
def test_hopf_lax_quadratic_data_closed_form_value_and_proximal_point(kappa):
    x = np.linspace(-2, 2, 201)
    t = 0.6 if kappa > 0 else 0.95 / abs(kappa)  # close to the blow-up at 1/|κ| for κ < 0
    r = hopf_lax_solution(lambda y: kappa * y**2 / 2, x, t)
    np.testing.assert_allclose(r.value, kappa * x**2 / (2 * (1 + kappa * t)), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(r.argmin, x / (1 + kappa * t), atol=1e-8)


def test_hopf_lax_blows_up_for_concave_quadratic_at_one_over_kappa():
    kappa = 2.0
    with pytest.raises(SolverInputError, match="not attained"):
        hopf_lax(lambda y: -kappa * y**2 / 2, np.array([0.3]), 1.0 / kappa + 1e-3)


def test_hopf_lax_speed_factor_rescales_time():
    x = np.linspace(-1, 1, 51)
    np.testing.assert_allclose(hopf_lax(np.cos, x, 0.7, a=2.0), hopf_lax(np.cos, x, 1.4), atol=1e-14)


def test_hopf_lax_two_minimisers_appear_at_first_shock_time():
    """u0 = cos: γ* = 1 at x = 0 (docs/theory.md §1). Before: one minimiser; after: two symmetric ones."""
    before = hopf_lax_solution(np.cos, np.array([0.0]), 0.9, period=2 * np.pi)
    after = hopf_lax_solution(np.cos, np.array([0.0]), 1.2, period=2 * np.pi)
    assert before.argmin[0] == pytest.approx(0.0, abs=1e-8) and before.gap[0] == math.inf
    assert after.gap[0] < 1e-12
    assert abs(after.argmin[0]) == pytest.approx(abs(after.other_argmin[0]), abs=1e-8) and abs(after.argmin[0]) > 0.5
    y = abs(after.argmin[0])
    assert y + 1.2 * (-np.sin(y)) == pytest.approx(0.0, abs=1e-8)  # stationarity: x = y + t u0'(y) with x = 0


def test_hopf_lax_2d_rotated_quadratic_closed_form():
    M = np.array([[2.0, 0.5], [0.5, 1.0]])
    t = 0.7
    X, Y = np.meshgrid(np.linspace(-1, 1, 12), np.linspace(-1, 1, 11), indexing="ij")
    f = lambda p, q: 0.5 * (M[0, 0] * p**2 + 2 * M[0, 1] * p * q + M[1, 1] * q**2)
    r = hopf_lax_solution(f, (X, Y), t, candidates=81)
    K = M @ np.linalg.inv(np.eye(2) + t * M)
    exact = 0.5 * (K[0, 0] * X**2 + 2 * K[0, 1] * X * Y + K[1, 1] * Y**2)
    np.testing.assert_allclose(r.value, exact, atol=1e-10)
    P = np.linalg.inv(np.eye(2) + t * M)
    np.testing.assert_allclose(r.argmin[..., 0], P[0, 0] * X + P[0, 1] * Y, atol=1e-6)
