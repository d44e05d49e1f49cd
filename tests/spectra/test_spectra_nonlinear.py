"""Nonlinear extension: μ₁, μ₂ by quadrature, and a Monte Carlo gradient step that tests ε_o, ε_c."""

import math

import numpy as np
import pytest
from scipy.integrate import dblquad, quad

from shockflow.spectra.bbp import rectangular_overlap
from shockflow.spectra.nonlinear import (critical_step_nonlinear, gradient_one_step, mu_coefficients,
                                         mu_rank_one_teacher, optimal_step, projection_coefficients,
                                         relu_mu_exact)
from shockflow.spectra.teacher_student import initial_weights, make_teacher


def _phi(z):
    return math.exp(-z * z / 2) / math.sqrt(2 * math.pi)


def test_linear_activation_gives_one():
    assert mu_coefficients("linear", 1.7, 0.3, 0.1) == pytest.approx((1.0, 1.0), abs=1e-13)
    assert critical_step_nonlinear(1.0, 1.0, 1.0, 0.5) == pytest.approx(1 - 1 / (1 + 0.5**0.25))
    assert optimal_step(1.0) == 1.0


def test_tanh_against_adaptive_quadrature():
    s = 1.3
    tol = dict(epsabs=1e-14, epsrel=1e-14, limit=200)
    m1 = quad(lambda z: _phi(z) / math.cosh(s * z) ** 2, -12, 12, **tol)[0]
    m2 = quad(lambda z: _phi(z) * (1 / math.cosh(s * z) ** 4 - 2 * math.tanh(s * z) ** 2 / math.cosh(s * z) ** 2),
              -12, 12, **tol)[0]
    # analytic in a strip only: Gauss–Hermite error ~1e-11 at the default 240 nodes
    assert mu_coefficients("tanh", s * s) == pytest.approx((m1, m2), abs=1e-9)
    # correlated teacher: h = z1, h* = c z1 + d z2
    vh, vs, cv = 1.0, 0.5, 0.3
    c, d = cv, math.sqrt(vs - cv * cv)
    sech2 = lambda x: 1 / math.cosh(x) ** 2
    r1 = dblquad(lambda z2, z1: _phi(z1) * _phi(z2) * sech2(c * z1 + d * z2) * sech2(z1), -10, 10, -10, 10)[0]
    r2 = dblquad(lambda z2, z1: _phi(z1) * _phi(z2) * (sech2(z1) ** 2 + (math.tanh(z1) - math.tanh(c * z1 + d * z2))
                                                        * (-2 * math.tanh(z1) * sech2(z1))), -10, 10, -10, 10)[0]
    assert mu_coefficients("tanh", vh, vs, cv) == pytest.approx((r1, r2), abs=1e-7)


def test_relu_against_closed_form():
    # uncorrelated: the kinks pass through the nodes' symmetry centre, Gauss–Hermite is exact
    assert mu_coefficients("relu", 1.5, 0.4, 0.0) == pytest.approx(relu_mu_exact(1.5, 0.4, 0.0), abs=1e-12)
    # correlated: a kink oblique to the grid, first-order accurate quadrature
    assert mu_coefficients("relu", 1.0, 0.5, 0.3, order=120) == pytest.approx(relu_mu_exact(1.0, 0.5, 0.3), abs=5e-3)
    # and the closed form against sampling
    rng = np.random.default_rng(0)
    z = rng.standard_normal((2, 10**6))
    h, hs = z[0], 0.3 * z[0] + math.sqrt(0.5 - 0.09) * z[1]
    assert np.mean((hs > 0) & (h > 0)) == pytest.approx(relu_mu_exact(1.0, 0.5, 0.3)[0], abs=2e-3)
    assert mu_coefficients("relu", 1.0) == pytest.approx((0.25, 0.5))


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_monte_carlo_gradient_has_the_predicted_coefficients(activation):
    # the population gradient is μ₂ W − μ₁ W* (Stein); the finite-N values of μ (teacher
    # pre-activation variance u_i² ~ 1/N) are what a simulation sees. Noise on the projections:
    # sqrt(E g²/(n N)) ≈ 6e-4 for μ₂ and sqrt(E g²/n) ≤ 0.005 for μ₁ at n = 20000.
    N, M = 80, 160
    rng = np.random.default_rng(1)
    u, v = make_teacher(N, M, rng)
    W0 = initial_weights(N, M, 1.0, rng)
    G = gradient_one_step(W0, np.outer(u, v), activation, 20000, rng)
    m2, m1 = projection_coefficients(G, W0, np.outer(u, v))
    e1, e2 = mu_rank_one_teacher(activation, 1.0, N)
    assert m2 == pytest.approx(e2, abs=0.006)
    assert m1 == pytest.approx(e1, abs=0.015)


def _one_step_setup(activation, N=150, M=300, seed=2, n=20000):
    rng = np.random.default_rng(seed)
    u, v = make_teacher(N, M, rng)
    W0 = initial_weights(N, M, 1.0, rng)
    G = gradient_one_step(W0, np.outer(u, v), activation, n, rng)
    return u, v, W0, G, mu_rank_one_teacher(activation, 1.0, N)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_optimal_step_maximises_the_signal_to_bulk_ratio(activation):
    # After W' = W0 − εG the bulk variance is a = (1 − εμ₂)² σ_W² + ε² c (c: Monte Carlo noise of
    # the gradient) and the spike b = ε² μ₁², so 1/θ² = a/b = (σ_W/μ₁)² (1/ε − μ₂)² + c/μ₁² is a
    # parabola in 1/ε with its vertex at 1/ε_o = μ₂ whatever the noise. θ² is measured from the
    # spectrum alone (a = mean of the non-top eigenvalues, b from the BBP outlier relation).
    # ε_o = 5.50 (tanh), 2.04 (ReLU at N = 150); the linear model would give 1.
    from shockflow.spectra.bbp import rectangular_theta_from_outlier

    u, v, W0, G, (m1, m2) = _one_step_setup(activation)
    eo = optimal_step(m2)
    x = np.linspace(0.8, 1.2, 9) / eo                 # 1/ε
    inv_theta2 = []
    for xi in x:
        W1 = W0 - G / xi
        lam = np.linalg.eigvalsh(W1 @ W1.T)
        a = lam[:-1].mean()
        inv_theta2.append(1.0 / rectangular_theta_from_outlier(lam[-1], 0.5, scale=a) ** 2)
    c2, c1, _ = np.polyfit(x, inv_theta2, 2)
    assert -c1 / (2 * c2) == pytest.approx(m2, rel=0.03)
    # and the linear model's ε_o = 1 is far from it
    assert abs(eo - 1.0) > 0.5


def _surrogate_check(activation, N, M, n, seed, q2_tol):
    u, v, W0, G, (m1, m2) = _one_step_setup(activation, N, M, seed, n)
    ec = critical_step_nonlinear(m1, m2, 1.0, N / M)
    # Stein, row by row: the exact population gradient is μ₂ᵢ wᵢ − μ₁ᵢ w*ᵢ with μ's of row i's own
    # (|wᵢ|², uᵢ², wᵢ·w*ᵢ); their spread over rows is an O(M^{-1/2}) correction to the averaged
    # surrogate (≈4% on the bulk edge for tanh at M = 100), so the rows' own μ's are used here.
    mus = np.array([mu_coefficients(activation, W0[i] @ W0[i], u[i] ** 2, u[i] * (W0[i] @ v), order=80)
                    for i in range(N)])
    for f in (0.8, 1.0, 1.4, 2.0):
        e = f * ec
        got = np.linalg.eigh((W0 - e * G) @ (W0 - e * G).T)
        Ws = (1 - e * mus[:, 1:2]) * W0 + e * (mus[:, 0] * u)[:, None] * v[None, :]
        sur = np.linalg.eigh(Ws @ Ws.T)
        assert got[0][-1] == pytest.approx(sur[0][-1], rel=0.03), f
        assert (got[1][:, -1] @ u) ** 2 == pytest.approx((sur[1][:, -1] @ u) ** 2, abs=q2_tol), f
    return u, W0, G, m1, m2, ec


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_one_step_spectrum_is_the_mu_surrogate(activation):
    # ε_c = 1/(μ₂ + μ₁/(σ_W r^{1/4})) rests on W' ≈ (1 − εμ₂) W0 + εμ₁ W*: the top eigenvalue and
    # q² of the Monte Carlo step must equal those of this surrogate on the same W0 (finite-size
    # effects near threshold are common to both). The sample covariance adds a multiplicative
    # noise W0(Σ̂ − I) of relative size ~ε√(M/n) to the bulk, so n = 1000 M here (3% on the edge).
    _surrogate_check(activation, 50, 100, 100_000, 3, 0.06)


@pytest.mark.slow
@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_one_step_nonlinear_threshold_N200(activation):
    # N = 200, n = 2000 M: surrogate agreement, then the asymptotic BBP overlap at 2 ε_c, where the
    # linear model (μ = 1, ε_c = 0.457) would predict a different phase
    u, W0, G, m1, m2, ec = _surrogate_check(activation, 200, 400, 800_000, 4, 0.05)
    e = 2.0 * ec
    th = e * m1 / abs(1 - e * m2)
    got = np.linalg.eigh((W0 - e * G) @ (W0 - e * G).T)[1][:, -1]
    assert (got @ u) ** 2 == pytest.approx(rectangular_overlap(th, 0.5), abs=0.05)


def test_bad_input():
    with pytest.raises(ValueError, match="activation"):
        mu_coefficients("gelu", 1.0)
    with pytest.raises(ValueError, match="var_h"):
        mu_coefficients("tanh", 0.0)
    with pytest.raises(ValueError, match="cov"):
        mu_coefficients("tanh", 1.0, 0.1, 0.9)
    with pytest.raises(ValueError, match="W0, Wstar"):
        gradient_one_step(np.ones((3, 4)), np.ones((3, 5)), "tanh", 10, np.random.default_rng(0))
