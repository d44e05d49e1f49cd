"""Tracy–Widom edge scale against Wishart sampling; outlier false-alarm rate at the TW margin."""

import numpy as np
import pytest

from shockflow.spectra.bulk_fit import fit_bulk
from shockflow.spectra.outliers import detect_outliers
from shockflow.spectra.tracy_widom import (TW1_MEAN, TW1_STD, tw1_quantile, wigner_edge_scale,
                                           wishart_edge_location, wishart_edge_scale)


def test_scale_limits():
    # μ → λ₊ = (1+√r)² and s·N^{2/3} → (1+√r)^{4/3} √r for σ² = 1 (s·M^{2/3} → (1+√r)^{4/3} r^{-1/6})
    N, M = 10**6, 2 * 10**6
    r = N / M
    assert wishart_edge_location(N, M) == pytest.approx((1 + np.sqrt(r)) ** 2, rel=1e-5)
    lim = (1 + np.sqrt(r)) ** (4 / 3) * np.sqrt(r)
    assert wishart_edge_scale(N, M) * N ** (2 / 3) == pytest.approx(lim, rel=1e-5)
    assert wigner_edge_scale(1000) == pytest.approx(0.01)


def test_standardised_top_eigenvalue_is_tw1():
    # 400 samples: standard error of the mean 1.27/20 = 0.063, of the std about 0.05
    rng = np.random.default_rng(11)
    N, M, s2 = 40, 80, 2.0
    mu, s = wishart_edge_location(N, M, s2), wishart_edge_scale(N, M, s2)
    z = []
    for _ in range(400):
        W = rng.normal(0, np.sqrt(s2 / M), (N, M))
        z.append((np.linalg.eigvalsh(W @ W.T)[-1] - mu) / s)
    z = np.array(z)
    assert abs(z.mean() - TW1_MEAN) < 3 * TW1_STD / np.sqrt(z.size)
    assert z.std(ddof=1) == pytest.approx(TW1_STD, rel=0.15)
    assert np.mean(z > tw1_quantile(0.95)) == pytest.approx(0.05, abs=0.035)


def test_outlier_false_alarm_rate_with_fitted_bulk():
    # pure noise, level 0.95: about 5% of spectra show a (false) outlier, whatever N
    rng = np.random.default_rng(5)
    for N in (50, 200):
        M = 2 * N
        hits = 0
        n = 100
        for _ in range(n):
            W = rng.normal(0, 1 / np.sqrt(M), (N, M))
            lam = np.linalg.eigvalsh(W @ W.T)
            hits += detect_outliers(lam, fit_bulk(lam, ratio=0.5), level=0.95).count > 0
        # binomial(100, 0.05): 5 ± 2.2; the fitted σ² adds a little spread
        assert hits <= 13, (N, hits)


def test_unknown_level():
    with pytest.raises(ValueError, match="level"):
        tw1_quantile(0.42)
