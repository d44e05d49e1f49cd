"""Spectral Burgers by characteristics: exact references, edges, outlier swallowing, Monte Carlo."""

import math

import numpy as np
import pytest

from shockflow.spectra.bbp import wigner_outlier
from shockflow.spectra.marchenko_pastur import mp_edges
from shockflow.spectra.spectral_burgers import (add_goe_noise, compare_with_monte_carlo,
                                                density_after_noise, edge_tw_scale,
                                                from_eigenvalues, from_marchenko_pastur,
                                                outlier_after_noise, point_mass,
                                                right_edge_after_noise, stieltjes_after_noise)


def test_semicircle_from_a_point_mass():
    # G0 = 1/z: G = (z − sqrt(z² − 4t))/(2t), density sqrt(4t − x²)/(2πt), edges ±2√t
    for t in (0.25, 1.0, 3.0):
        x = np.linspace(-2.5, 2.5, 21) * math.sqrt(t)
        exact = np.sqrt(np.clip(4 * t - x**2, 0, None)) / (2 * math.pi * t)
        err = np.abs(density_after_noise(point_mass(), x, t) - exact)
        edge = np.isclose(np.abs(x), 2 * math.sqrt(t))
        assert np.max(err[~edge]) < 1e-10
        assert np.max(err[edge]) < 1e-6      # at the edge ρ ~ √η with the solver's floor η ~ 1e-13
        assert right_edge_after_noise(point_mass(), t)["edge"] == pytest.approx(2 * math.sqrt(t), rel=1e-12)
        z = np.array([0.3 + 0.5j, 3.0 + 0.0j]) * math.sqrt(t)
        exact_G = (z - np.sqrt(z - 2 * math.sqrt(t)) * np.sqrt(z + 2 * math.sqrt(t))) / (2 * t)
        assert np.allclose(stieltjes_after_noise(point_mass(), z, t), exact_G, atol=1e-12)
    assert edge_tw_scale(point_mass(), 1.0, 1000)["tw_scale"] == pytest.approx(0.01, rel=1e-6)


def test_spike_follows_its_characteristic_and_is_swallowed():
    # empty bulk: outlier θ + t/θ while t < θ² (spiked Wigner θ + 1/θ at t = 1)
    for th in (1.5, 3.0):
        o = outlier_after_noise(th, point_mass(), 1.0)
        assert o["escaped"] and o["position"] == pytest.approx(wigner_outlier(th))
        assert o["swallow_time"] == pytest.approx(th * th)
    o = outlier_after_noise(0.8, point_mass(), 1.0)
    assert not o["escaped"] and o["position"] == pytest.approx(2.0)


def test_marchenko_pastur_initial_data_consistency():
    # the analytic MP transform and a large sample's empirical transform predict the same edge,
    # and the evolved density has unit mass
    mp = from_marchenko_pastur(0.5, 1.0)
    rng = np.random.default_rng(0)
    G = rng.standard_normal((600, 1200)) / math.sqrt(1200)
    emp = from_eigenvalues(np.linalg.eigvalsh(G @ G.T))
    t = 0.3
    e1, e2 = right_edge_after_noise(mp, t)["edge"], right_edge_after_noise(emp, t)["edge"]
    assert e1 == pytest.approx(e2, rel=0.01)
    lo, hi = mp_edges(0.5)
    x = np.linspace(lo - 2, hi + 2, 4001)
    mass = np.trapezoid(density_after_noise(mp, x, t), x)
    assert mass == pytest.approx(1.0, abs=2e-3)


def test_prediction_against_monte_carlo():
    # X0 = W0 W0ᵀ (N = 200, M = 400) plus GOE noise t = 0.3, 30 samples. Eigenvalue rigidity makes
    # the CDF error O(log N / N); the top eigenvalue's mean sits a TW shift (N A)^{-2/3}·TW1_MEAN
    # below the edge, with standard deviation (N A)^{-2/3}·1.27.
    rng = np.random.default_rng(4)
    W = rng.standard_normal((200, 400)) / math.sqrt(400)
    r = compare_with_monte_carlo(np.linalg.eigvalsh(W @ W.T), 0.3, 30, seed=5)
    assert r["ks_distance"] < 0.01
    assert r["density_l1"] < 0.06
    se = r["mc_top_std"] / math.sqrt(30)
    assert abs(r["mc_top_mean"] - r["top_predicted_mean"]) < 4 * se + 0.2 * r["edge_tw_scale"]
    assert r["mc_top_std"] == pytest.approx(1.268 * r["edge_tw_scale"], rel=0.35)


def test_outlier_escape_and_swallowing_in_monte_carlo():
    # bulk MP(r = 1/2) spectrum of N = 300 plus a spike λ_s = 4; the swallow time is
    # t_s = −1/G_b'(λ_s); below it the top eigenvalue is λ_s + t G_b(λ_s), above it the edge
    rng = np.random.default_rng(6)
    W = rng.standard_normal((299, 598)) / math.sqrt(598)
    bulk = np.linalg.eigvalsh(W @ W.T)
    init = from_eigenvalues(bulk)
    o = outlier_after_noise(4.0, init, 0.1)
    ts = o["swallow_time"]
    for t in (0.3 * ts, 1.6 * ts):
        o = outlier_after_noise(4.0, init, t)
        tops = np.array([add_goe_noise(np.append(bulk, 4.0), t, rng)[-1] for _ in range(16)])
        se = tops.std(ddof=1) / 4.0          # an escaped outlier fluctuates by O(sqrt(t/N))
        if o["escaped"]:
            assert abs(tops.mean() - o["position"]) < 4 * se
            assert o["position"] > o["bulk_edge"] + 10 * se
        else:                                # swallowed: at the edge, up to the TW shift
            assert tops.mean() == pytest.approx(o["bulk_edge"], rel=0.02)


def test_bad_input():
    with pytest.raises(ValueError, match="t:"):
        density_after_noise(point_mass(), [0.0], -1.0)
    with pytest.raises(ValueError, match="spike"):
        outlier_after_noise(0.5, from_eigenvalues([0.0, 1.0]), 0.1)
    with pytest.raises(ValueError, match="X0"):
        add_goe_noise(np.ones((2, 3)), 0.1, np.random.default_rng(0))


@pytest.mark.slow
def test_prediction_against_monte_carlo_N800():
    # N = 800: CDF (KS) error O(log N / N), histogram L1 dominated by counting noise of 20·800
    # eigenvalues in 40 bins; the TW-corrected mean top eigenvalue within 4 standard errors
    rng = np.random.default_rng(8)
    W = rng.standard_normal((800, 1600)) / math.sqrt(1600)
    r = compare_with_monte_carlo(np.linalg.eigvalsh(W @ W.T), 0.3, 20, seed=9)
    print({k: v for k, v in r.items() if k not in ("x", "density")})
    assert r["ks_distance"] < 0.004
    assert r["density_l1"] < 0.03
    se = r["mc_top_std"] / math.sqrt(20)
    assert abs(r["mc_top_mean"] - r["top_predicted_mean"]) < 4 * se + 0.2 * r["edge_tw_scale"]
    assert abs(r["mc_top_mean"] / r["edge_right"] - 1) < 0.01
