"""Marchenko–Pastur law: normalisation, CDF, quantiles, Stieltjes transform, against sampling."""

import numpy as np
import pytest
from scipy.integrate import quad

from shockflow.spectra.marchenko_pastur import (mp_cdf, mp_density, mp_edges, mp_quantile,
                                                mp_stieltjes)


@pytest.mark.parametrize("r, s2", [(0.5, 1.0), (1.0, 0.7), (2.0, 1.3)])
def test_density_mass_and_cdf_against_quadrature(r, s2):
    lo, hi = mp_edges(r, s2)
    mass = quad(lambda x: mp_density(x, r, s2), lo, hi, limit=200)[0]
    atom = max(0.0, 1 - 1 / r)
    assert mass == pytest.approx(1 - atom, abs=1e-8)
    for x in np.linspace(lo, hi, 7)[1:-1]:
        ref = atom + quad(lambda y: mp_density(y, r, s2), lo, x, limit=200)[0]
        assert mp_cdf(x, r, s2) == pytest.approx(ref, abs=1e-9)
    assert mp_cdf(hi * 1.01, r, s2) == pytest.approx(1.0, abs=1e-12)


def test_quantile_inverts_cdf():
    p = np.linspace(0.01, 0.99, 25)
    for r in (0.3, 1.0, 2.5):
        atom = max(0.0, 1 - 1 / r)
        q = mp_quantile(p, r, 2.0)
        assert np.allclose((mp_cdf(q, r, 2.0) - atom) / (1 - atom), p, atol=1e-12)


@pytest.mark.parametrize("r", [0.4, 2.0])
def test_stieltjes_against_integral(r):
    lo, hi = mp_edges(r, 1.0)
    atom = max(0.0, 1 - 1 / r)
    for z in (3.5 + 0.7j, -0.4 + 0.2j, hi + 1.0 + 0j):
        re = quad(lambda x: (mp_density(x, r) * (1 / (z - x))).real, lo, hi, limit=200)[0]
        im = quad(lambda x: (mp_density(x, r) * (1 / (z - x))).imag, lo, hi, limit=200)[0]
        assert mp_stieltjes(z, r) == pytest.approx(re + 1j * im + atom / z, abs=1e-8)


def test_wishart_sample_follows_the_law():
    # eigenvalue rigidity: one sample at N = 400 is within O(log N / N) of the law in KS distance
    rng = np.random.default_rng(3)
    N, M, s2 = 400, 800, 1.7
    W = rng.normal(0, np.sqrt(s2 / M), (N, M))
    lam = np.sort(np.linalg.eigvalsh(W @ W.T))
    F = mp_cdf(lam, N / M, s2)
    ks = np.max(np.abs(F - np.arange(1, N + 1) / N))
    assert ks < 0.02


def test_bad_ratio_and_variance():
    with pytest.raises(ValueError, match="ratio"):
        mp_edges(-1.0)
    with pytest.raises(ValueError, match="sigma2"):
        mp_edges(0.5, 0.0)
    with pytest.raises(ValueError, match="quantile"):
        mp_quantile([1.2], 0.5)
