"""Switch-on times: the exact t*(ρ) inverts the logistic, its ε-form agrees, the ln(1/ε) term dominates
as ε → 0, the measured crossing recovers t* from a sampled curve, and the docs/theory.md §1 escape reading
γ* ln(d_exit/d_0) — computed from the flat-coordinate loss alone — reproduces t*(1/2) up to O(ε)."""

import numpy as np
import pytest

from shockflow.nqf.lotka_volterra import orthogonal_features_solution
from shockflow.nqf.switch_on import (
    escape_time_prediction, flat_mode_loss, leading_switch_on_time, measured_switch_on, switch_on_time,
    switch_on_time_eps,
)


@pytest.mark.parametrize("a", [1.0, 2.0])
@pytest.mark.parametrize("rho", [0.1, 0.5, 0.9])
def test_exact_time_inverts_the_logistic(a, rho):
    zeta, C, z0 = np.array([2.0, 0.7]), np.array([0.5, 3.0]), np.array([1e-5, 1e-3])
    t = switch_on_time(zeta, C, z0, rho, a)
    z = zeta * z0 / (C * z0 + (zeta - C * z0) * np.exp(-a * zeta * t))
    assert np.allclose(z, rho * zeta / C, rtol=1e-12)
    c, eps = z0 / 1e-4, 1e-4
    assert np.allclose(switch_on_time_eps(zeta, C, c, eps, rho, a), t, rtol=1e-12)


def test_leading_term_dominates_as_eps_vanishes():
    eps = np.array([1e-4, 1e-8, 1e-16, 1e-64])
    ratio = switch_on_time_eps(1.3, 0.4, 2.0, eps, 0.5) / leading_switch_on_time(1.3, eps)
    assert np.all(np.diff(np.abs(ratio - 1)) < 0) and abs(ratio[-1] - 1) < 0.01
    # gaps between successive modes grow like ln(1/ε)
    gaps = switch_on_time_eps(0.5, 1.0, 1.0, eps) - switch_on_time_eps(1.0, 1.0, 1.0, eps)
    assert np.allclose(np.diff(gaps) / np.diff(np.log(1 / eps)), 1.0, rtol=1e-3)


def test_measured_crossing_recovers_the_exact_time():
    r, C, z0 = np.array([2.0, 1.0, 0.5]), np.full(3, 0.5), np.full(3, 1e-6)
    t = np.linspace(0, 40, 2001)
    z = orthogonal_features_solution(t, r, C, z0)
    tm = measured_switch_on(t, z, r / C, 0.5)
    assert np.allclose(tm, switch_on_time(r, C, z0), rtol=1e-3)
    assert np.isnan(measured_switch_on(t[:10], z[:10], r / C)).all()


def test_escape_reading_matches_switch_on():
    """One mode, L̄(r) = (1/m)Σ(λ r² − y)²: γ* = −1/L̄''(0) = 2/r_k and d_exit = √z∞, so
    γ* ln(d_exit/d_0) = (1/r_k) ln(z∞/z0), which differs from t*(1/2) by −(1/r_k) ln(1 − C z0/r_k)."""
    rng = np.random.default_rng(0)
    lam = rng.uniform(0.2, 1.0, 20)
    y = rng.uniform(0.5, 1.5, 20)
    r = 8 / 20 * lam @ y
    C = 8 / 20 * lam @ lam
    for z0 in (1e-8, 1e-4, 1e-2):
        esc = escape_time_prediction(lam, y, z0)
        assert esc.gamma_star == pytest.approx(2 / r, rel=1e-6)
        assert esc.d_exit == pytest.approx(np.sqrt(r / C), rel=1e-6)
        exact = switch_on_time(r, C, z0)
        assert esc.time - exact == pytest.approx(-np.log(1 - C * z0 / r) / r, rel=1e-4, abs=1e-6 * exact)
    assert flat_mode_loss(lam, y)(0.0) == pytest.approx(np.mean(y ** 2))
    with pytest.raises(ValueError, match="not unstable"):
        escape_time_prediction(lam, -y, 1e-4)


def test_bad_fraction_is_refused():
    with pytest.raises(ValueError, match="rho: expected a fraction in \\(0, 1\\)"):
        switch_on_time(1.0, 1.0, 1e-3, rho=1.0)
    with pytest.raises(ValueError, match="ζ > C z0"):
        switch_on_time(1.0, 1.0, 2.0)
