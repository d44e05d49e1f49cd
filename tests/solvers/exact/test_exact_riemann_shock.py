"""Riemann problem (convex flux) and the travelling viscous shock: exact properties."""

import math

import numba
import numpy as np
import pytest

from solvers.errors import SolverInputError
from solvers.exact.riemann import rankine_hugoniot_speed, riemann
from solvers.exact.viscous_shock import viscous_shock, viscous_shock_derivatives, viscous_shock_width


@numba.njit  # not cached: a test module is not a stable import path for the cache
def _exp_scalar(q):
    return math.exp(q)


class ExpFlux:
    """f(q) = exp(q): convex, f' = exp, (f')^{-1} = log; f and df are Numba scalar functions."""

    f = staticmethod(_exp_scalar)
    df = staticmethod(_exp_scalar)
    q_min = -np.inf


class QuarticFlux:
    """f(q) = q**4/4 + q**2/2 (convex, sonic point 0), NumPy callables."""

    f = staticmethod(lambda q: q**4 / 4 + q**2 / 2)
    df = staticmethod(lambda q: q**3 + q)
    q_min = 0.0


def _burgers_flux(q):
    return 0.5 * q * q


def test_burgers_shock_moves_with_rankine_hugoniot_speed():
    x = np.linspace(-1, 2, 3001)
    q = riemann("burgers", 2.0, -0.5, x, t=0.8, x0=0.1)
    s = 0.75
    assert np.all(q[x < 0.1 + s * 0.8 - 1e-12] == 2.0)
    assert np.all(q[x > 0.1 + s * 0.8 + 1e-12] == -0.5)
    assert rankine_hugoniot_speed("burgers", 2.0, -0.5) == pytest.approx(0.75, rel=1e-15)


def test_burgers_rarefaction_is_linear_fan_through_sonic_point():
    x = np.linspace(-2, 2, 401)
    t = 0.5
    q = riemann("burgers", -1.0, 1.5, x, t)
    expected = np.clip(x / t, -1.0, 1.5)
    np.testing.assert_allclose(q, expected, atol=1e-15)


def test_general_convex_flux_fan_matches_inverse_derivative_numba_scalar_callables():
    x = np.linspace(-1, 3, 801)
    t = 0.7
    qL, qR = -1.0, 1.0
    q = riemann(ExpFlux(), qL, qR, x, t)
    xi = x / t
    expected = np.where(xi <= math.exp(qL), qL, np.where(xi >= math.exp(qR), qR, np.log(np.maximum(xi, 1e-300))))
    np.testing.assert_allclose(q, expected, atol=1e-13)


@pytest.mark.parametrize("flux,qL,qR", [("burgers", 1.5, -0.3), ("burgers", -0.7, 1.2), (QuarticFlux(), 1.0, -0.6),
                                        (QuarticFlux(), -0.8, 0.9), (ExpFlux(), 0.5, -1.0)])
def test_riemann_solution_conserves_mass_over_a_box(flux, qL, qR):
    """d/dt ∫_a^b q dx = f(q(a)) − f(q(b)) while waves stay inside [a, b]."""
    f = {"burgers": _burgers_flux}.get(flux, getattr(flux, "f", None))
    df = {"burgers": lambda q: q}.get(flux, getattr(flux, "df", None))
    a, b, t = -3.0, 3.0, 0.6
    # the solution is smooth between the shock / fan edges: composite Gauss–Legendre there
    edges = [rankine_hugoniot_speed(flux, qL, qR) * t] if qL > qR else [float(df(qL)) * t, float(df(qR)) * t]
    breaks = np.array([a, *edges, b])
    nodes, weights = np.polynomial.legendre.leggauss(20)
    pieces = np.linspace(0, 1, 9)
    lo = (breaks[:-1, None] + np.diff(breaks)[:, None] * pieces[None, :-1]).ravel()
    hi = (breaks[:-1, None] + np.diff(breaks)[:, None] * pieces[None, 1:]).ravel()
    pts = 0.5 * (lo + hi)[:, None] + 0.5 * (hi - lo)[:, None] * nodes[None, :]
    mass = float(np.sum(riemann(flux, qL, qR, pts, t) * weights[None, :] * 0.5 * (hi - lo)[:, None]))
    initial = qL * (0 - a) + qR * (b - 0)
    assert mass - initial == pytest.approx(t * (f(qL) - f(qR)), abs=1e-9)


def test_riemann_rejects_bad_flux_and_time():
    with pytest.raises(SolverInputError, match="flux: unknown flux name 'burger'"):
        riemann("burger", 1.0, 0.0, np.zeros(3), 1.0)
    with pytest.raises(SolverInputError, match="without df"):
        riemann(type("F", (), {"f": staticmethod(abs)})(), 1.0, 0.0, np.zeros(3), 1.0)
    with pytest.raises(SolverInputError, match="t: expected a time >= 0"):
        riemann("burgers", 1.0, 0.0, np.zeros(3), -1.0)


def _residual(h, uL=1.3, uR=-0.4, nu=0.05):
    x = np.linspace(-0.5, 0.5, 201)
    t = 0.3
    u = lambda xx, tt: viscous_shock(uL, uR, nu, xx, tt, x0=0.1)
    u0 = u(x, t)
    ut = (u(x, t + h) - u(x, t - h)) / (2 * h)
    ux = (u(x + h, t) - u(x - h, t)) / (2 * h)
    uxx = (u(x + h, t) - 2 * u0 + u(x - h, t)) / h**2
    return np.max(np.abs(ut + u0 * ux - nu * uxx))


def test_viscous_shock_satisfies_burgers_with_second_order_fd_residual():
    r = [_residual(h) for h in (4e-3, 2e-3, 1e-3)]
    orders = [math.log2(r[i] / r[i + 1]) for i in range(2)]
    assert all(abs(p - 2.0) < 0.05 for p in orders), (r, orders)
    assert r[-1] < 1e-3
    # exact derivatives satisfy the PDE to round-off
    ut, ux, uxx = viscous_shock_derivatives(1.3, -0.4, 0.05, np.linspace(-1, 1, 101), 0.3, 0.1)
    u = viscous_shock(1.3, -0.4, 0.05, np.linspace(-1, 1, 101), 0.3, 0.1)
    assert np.max(np.abs(ut + u * ux - 0.05 * uxx)) < 1e-12


def test_viscous_shock_width_and_small_viscosity_limit():
    uL, uR, nu = 1.0, -1.0, 1e-6
    x = np.linspace(-1, 1, 2001)
    u = viscous_shock(uL, uR, nu, x)
    assert np.all(np.isfinite(u))
    np.testing.assert_array_equal(u, riemann("burgers", uL, uR, x, 0.0) * (x != 0))  # sharp limit, u(0) = 0
    _, ux, _ = viscous_shock_derivatives(uL, uR, 0.01, np.linspace(-0.1, 0.1, 20001))
    assert (uL - uR) / np.max(np.abs(ux)) == pytest.approx(viscous_shock_width(uL, uR, 0.01), rel=1e-6)
    with pytest.raises(SolverInputError, match="u_left > u_right"):
        viscous_shock(-1.0, 1.0, 0.1, x)


def test_riemann_accepts_the_solver_convex_flux_object():
    flux_functions = pytest.importorskip("solvers.conservation.flux_functions")
    exp_flux = flux_functions.ConvexFlux.from_functions("exp", _exp_scalar, _exp_scalar, -30.0)  # already compiled
    x = np.linspace(-3, 3, 301)
    for qL, qR in ((1.0, -0.6), (-0.8, 0.9)):
        np.testing.assert_allclose(riemann(exp_flux, qL, qR, x, 0.8), riemann(ExpFlux(), qL, qR, x, 0.8), atol=1e-13)
    np.testing.assert_allclose(riemann(flux_functions.BURGERS, -1.0, 1.5, x, 0.5), riemann("burgers", -1.0, 1.5, x, 0.5),
                               atol=1e-13)
