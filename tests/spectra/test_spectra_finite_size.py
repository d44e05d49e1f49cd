"""Finite-size scaling of the BBP transition: Binder cumulant, crossings, replica overlap."""

import numpy as np
import pytest

from shockflow.spectra.finite_size import (binder_crossings, binder_cumulant, binder_curves,
                                           crossing, replica_overlap, sample_overlaps,
                                           top_eigenpair_diag_rank2, wishart_singular_values)
from shockflow.spectra.marchenko_pastur import mp_cdf
from shockflow.spectra.teacher_student import critical_step


def test_binder_limits():
    rng = np.random.default_rng(0)
    q = rng.standard_normal(200_000) / 10.0          # disordered: Gaussian q → U4 = 0
    assert binder_cumulant(q**2)[0] == pytest.approx(0.0, abs=0.02)
    assert binder_cumulant(np.full(50, 0.7))[0] == pytest.approx(2 / 3, abs=1e-12)   # ordered
    u4, err = binder_cumulant(q[:500] ** 2, n_boot=200)
    assert 0 < err < 0.2
    with pytest.raises(ValueError, match="q2_samples"):
        binder_cumulant([0.1])


def test_bidiagonal_singular_values_follow_marchenko_pastur():
    rng = np.random.default_rng(1)
    N, M = 300, 600
    s = wishart_singular_values(N, M, rng)
    lam = np.sort(s**2 / M)
    assert np.max(np.abs(mp_cdf(lam, 0.5) - np.arange(1, N + 1) / N)) < 0.02


def test_diag_rank2_eigenpair_against_numpy_reference():
    rng = np.random.default_rng(7)
    for N, scale in ((5, 1.0), (60, 0.05), (300, 0.3), (300, 3.0)):
        s = np.sort(rng.random(N))[::-1]
        U = rng.standard_normal((N, 2)) * scale
        b = rng.random() * 2
        C = np.array([[b, np.sqrt(b)], [np.sqrt(b), 0.0]])
        lam, x = top_eigenpair_diag_rank2(s, U, C)
        L, V = np.linalg.eigh(np.diag(s) + U @ C @ U.T)
        assert lam == pytest.approx(L[-1], abs=1e-13 * max(1, abs(L[-1])))
        assert abs(x @ V[:, -1]) == pytest.approx(1.0, abs=1e-10)


def test_reduced_sampler_matches_dense_sampler():
    # same law: compare means of q² and of λ_top over 100 runs each (4 standard errors)
    for eps in (0.4, 0.6):
        d = sample_overlaps(64, 128, eps, 1, 1.0, 100, seed=1, method="dense")
        r = sample_overlaps(64, 128, eps, 1, 1.0, 100, seed=2, method="reduced")
        se = np.hypot(d["q2"].std(), r["q2"].std()) / np.sqrt(100)
        assert abs(d["q2"].mean() - r["q2"].mean()) < 4 * se + 1e-3
        se = np.hypot(d["top_eigenvalue"].std(), r["top_eigenvalue"].std()) / np.sqrt(100)
        assert abs(d["top_eigenvalue"].mean() - r["top_eigenvalue"].mean()) < 4 * se


def test_crossing_of_lines():
    x = np.linspace(0, 1, 11)
    assert crossing(x, 2 * x, 0.5 + x) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="crossing"):
        crossing(x, x, x + 1)


def test_binder_crossing_small_sizes():
    # N = 64 and 128 (M = 2N), σ_W = 1, t = 1: ε_c = 0.4568, 250 initialisations per point.
    # The crossing's statistical error at these sizes is ≈ 2% (seeds 3, 4, 5 gave +2.5%, +0.2%,
    # −0.2%); 6% leaves three standard errors (the 5% goal at N ≥ 128 is the slow test).
    ec = critical_step(1, 1.0, 0.5)
    c = binder_curves([64, 128], ec * np.linspace(0.85, 1.15, 5), 1, 1.0, 0.5, 250, seed=3)
    x = binder_crossings(c)
    assert np.all(np.abs(x / ec - 1) < 0.06), x / ec
    # the order parameter rises through the transition at every size
    assert np.all(np.diff(c["q2_mean"], axis=1) > -0.02)


@pytest.mark.slow
def test_binder_crossing_fss_goal():
    # N = 128 … 1024, M = 2N, 600 initialisations per point: every pair crossing within 5% of ε_c
    ec = critical_step(1, 1.0, 0.5)
    c = binder_curves([128, 256, 512, 1024], ec * np.linspace(0.8, 1.2, 9), 1, 1.0, 0.5, 600, seed=1)
    x = binder_crossings(c)
    print("crossings / eps_c - 1:", x / ec - 1)
    assert np.all(np.abs(x / ec - 1) < 0.05), x / ec


def test_replica_overlap():
    ec = critical_step(1, 1.0, 0.5)
    # ordered: replicas agree through the teacher, |u_a·u_b| → q²; ~N^{-1/2} fluctuations
    ordered = replica_overlap(150, 300, 0.75, 1, 1.0, 6, seed=1)
    assert ordered["mean"] == pytest.approx(ordered["theory_q2"], abs=0.05)
    # disordered: independent random directions, |u_a·u_b| ~ sqrt(2/(πN)) = 0.065
    dis = replica_overlap(150, 300, 0.5 * ec, 1, 1.0, 6, seed=2)
    assert dis["theory_q2"] == 0.0
    assert dis["mean"] < 0.2
