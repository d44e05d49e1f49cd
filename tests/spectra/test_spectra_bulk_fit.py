"""Robust Marchenko–Pastur fits: recovery, robustness to outliers, refusals."""

import numpy as np
import pytest

from shockflow.spectra.bulk_fit import BulkFitError, fit_bulk
from shockflow.spectra.outliers import detect_outliers


def _spectrum(N, M, s2, seed=0, spikes=()):
    rng = np.random.default_rng(seed)
    W = rng.normal(0, np.sqrt(s2 / M), (N, M))
    for k, th in enumerate(spikes):
        u = np.eye(N)[k]
        v = np.eye(M)[k]
        W += th * np.sqrt(s2) * np.outer(u, v)
    return np.linalg.eigvalsh(W @ W.T)


def test_recovers_variance_with_known_ratio():
    fit = fit_bulk(_spectrum(400, 800, 2.5), ratio=0.5)
    assert fit.sigma2 == pytest.approx(2.5, rel=0.01)     # linear statistic: error O(1/N)
    assert fit.lambda_plus == pytest.approx(2.5 * (1 + np.sqrt(0.5)) ** 2, rel=0.01)


def test_recovers_ratio_when_unknown():
    for N, M in ((300, 1200), (400, 500)):
        fit = fit_bulk(_spectrum(N, M, 1.0, seed=2))
        assert fit.ratio_fitted
        assert fit.ratio == pytest.approx(N / M, rel=0.06)
        assert fit.sigma2 == pytest.approx(1.0, rel=0.03)


def test_rank_deficient_spectrum_fixes_ratio():
    fit = fit_bulk(_spectrum(300, 200, 1.0, seed=4))
    assert fit.ratio == pytest.approx(1.5, rel=1e-12)
    assert fit.sigma2 == pytest.approx(1.0, rel=0.02)


def test_outliers_do_not_bias_the_fit_and_are_found():
    clean = fit_bulk(_spectrum(400, 800, 1.0, seed=7), ratio=0.5)
    lam = _spectrum(400, 800, 1.0, seed=7, spikes=(3.0, 2.0, 1.5))
    spiked = fit_bulk(lam, ratio=0.5)
    assert spiked.sigma2 == pytest.approx(clean.sigma2, rel=0.01)
    found = detect_outliers(lam, spiked)
    # θ = 3, 2, 1.5 > r^{1/4} = 0.84: three outliers at (1+θ²)(r+θ²)/θ²
    assert found.count == 3
    pred = [(1 + t * t) * (0.5 + t * t) / (t * t) for t in (3.0, 2.0, 1.5)]
    assert np.allclose(found.values, pred, rtol=0.05)


def test_refusals():
    with pytest.raises(BulkFitError, match="at least"):
        fit_bulk(_spectrum(12, 24, 1.0), ratio=0.5)
    with pytest.raises(ValueError, match="ratio.*inconsistent"):
        fit_bulk(_spectrum(100, 200, 1.0), ratio=2.0)
    with pytest.raises(BulkFitError, match="not Marchenko"):
        rng = np.random.default_rng(0)
        fit_bulk(np.concatenate([np.full(100, 1.0), np.full(100, 9.0)]) + 0.01 * rng.random(200), ratio=0.5)
    with pytest.raises(ValueError, match="1-D"):
        fit_bulk(np.ones((3, 3)))
    with pytest.raises(BulkFitError, match="non-zero"):
        fit_bulk(np.zeros(50), ratio=0.5)
