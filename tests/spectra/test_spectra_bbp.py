"""Rank-one BBP formulas: continuity at threshold, inversion, and random-matrix sampling."""

import numpy as np
import pytest

from shockflow.spectra.bbp import (rectangular_outlier, rectangular_overlap,
                                   rectangular_theta_from_outlier, rectangular_threshold,
                                   wigner_outlier, wigner_overlap)


def test_continuity_at_threshold_and_inverse():
    for r in (0.25, 0.5, 1.0, 2.0):
        tc = rectangular_threshold(r)
        assert rectangular_outlier(tc * (1 + 1e-9), r) == pytest.approx((1 + np.sqrt(r)) ** 2, rel=1e-6)
        assert rectangular_overlap(tc * (1 + 1e-9), r) == pytest.approx(0.0, abs=1e-7)
        th = np.array([1.2, 2.0, 5.0]) * tc
        lam = rectangular_outlier(th, r, scale=0.3)
        assert np.allclose(rectangular_theta_from_outlier(lam, r, scale=0.3), th, rtol=1e-10)
    # docs/theory.md §3 form: λ_iso = (b + r a)(b + a)/b with θ² = b/a
    a, b, r = 0.2, 0.9, 0.5
    assert rectangular_outlier(np.sqrt(b / a), r, scale=a) == pytest.approx((b + r * a) * (b + a) / b)


def test_rectangular_sampling_left_and_right_overlaps():
    # N = 300: per sample the outlier fluctuates by ≈ 3% and the overlaps by ≈ 0.03 (O(N^{-1/2}));
    # the mean of 4 samples is checked at about 3 standard errors
    rng = np.random.default_rng(1)
    N, M, th = 300, 600, 1.5
    r = N / M
    u, v = np.eye(N)[0], np.eye(M)[0]
    got = []
    for _ in range(4):
        W = th * np.outer(u, v) + rng.normal(0, 1 / np.sqrt(M), (N, M))
        U, S, Vt = np.linalg.svd(W, full_matrices=False)
        got.append((S[0] ** 2, U[0, 0] ** 2, Vt[0, 0] ** 2))
    lam, ql, qr = np.mean(got, axis=0)
    assert lam == pytest.approx(rectangular_outlier(th, r), rel=0.045)
    assert ql == pytest.approx(rectangular_overlap(th, r, "left"), abs=0.045)
    assert qr == pytest.approx(rectangular_overlap(th, r, "right"), abs=0.045)


def test_spiked_wigner_sampling():
    rng = np.random.default_rng(2)
    N = 600
    A = rng.standard_normal((N, N))
    Z = (A + A.T) / np.sqrt(2 * N)
    for th in (0.6, 2.0):
        H = Z + th * np.outer(np.eye(N)[0], np.eye(N)[0])
        lam, vec = np.linalg.eigh(H)
        assert lam[-1] == pytest.approx(wigner_outlier(th), abs=0.05)
        assert vec[0, -1] ** 2 == pytest.approx(wigner_overlap(th), abs=0.05)


def test_bad_theta():
    with pytest.raises(ValueError, match="theta"):
        rectangular_outlier(-1.0, 0.5)
    with pytest.raises(ValueError, match="side"):
        rectangular_overlap(2.0, 0.5, side="top")
