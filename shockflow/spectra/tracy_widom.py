"""The Tracy–Widom scale of the top edge (docs/theory.md §3, random-matrix toolkit).

For a real Gaussian W ∈ R^{N×M} with entries of variance σ²/M (β = 1), Johnstone (2001):

    (λ_max(W Wᵀ) − μ_{N,M}) / s_{N,M}  →  TW₁,
    μ_{N,M} = (σ²/M) (√(N−½) + √(M−½))²,
    s_{N,M} = (σ²/M) (√(N−½) + √(M−½)) (1/√(N−½) + 1/√(M−½))^{1/3}        (s ~ N^{-2/3}),

with Ma's (2012) half-integer shifts, which make the TW approximation accurate to O(N^{-2/3})
(Johnstone's original uses √(N) and √(M−1)); the formula is symmetric in N and M because
λ_max(W Wᵀ) = λ_max(Wᵀ W).

For a spiked Wigner matrix normalised to the semicircle on [−2, 2] (off-diagonal variance 1/N)
the top eigenvalue is 2 + N^{−2/3} TW₁.

TW₁ constants (Tracy & Widom 1996; Bornemann 2010, high-precision quadrature of the
Painlevé II / Fredholm determinant): mean −1.2065335745820, standard deviation
1.2679791398, and the upper quantiles below.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TW1_MEAN", "TW1_STD", "tw1_quantile", "wishart_edge_location", "wishart_edge_scale",
           "wigner_edge_scale"]

TW1_MEAN = -1.2065335745820
TW1_STD = 1.2679791398

# upper quantiles of TW1, P(TW1 <= q) = level (Bornemann 2010, Table; Johnstone 2001, Table 1)
_TW1_QUANTILES = {0.90: 0.4501, 0.95: 0.9793, 0.975: 1.4537, 0.99: 2.0234, 0.995: 2.4224, 0.999: 3.2724}


def tw1_quantile(level: float) -> float:
    """Upper quantile of TW₁ at ``level`` (one of 0.90, 0.95, 0.975, 0.99, 0.995, 0.999)."""
    for key, value in _TW1_QUANTILES.items():
        if abs(float(level) - key) < 1e-12:
            return value
    raise ValueError(f"level: tabulated TW1 levels are {sorted(_TW1_QUANTILES)}, found {level!r}")


def _check_dims(N, M) -> tuple[int, int]:
    for name, v in (("N", N), ("M", M)):
        if isinstance(v, bool) or int(v) != v or v < 2:
            raise ValueError(f"{name}: expected an integer >= 2, found {v!r}")
    return int(N), int(M)


def wishart_edge_location(N: int, M: int, sigma2: float = 1.0) -> float:
    """The TW centring μ_{N,M} (σ²/M normalisation); tends to λ₊ = σ²(1+√r)²."""
    N, M = _check_dims(N, M)
    return sigma2 / M * (np.sqrt(N - 0.5) + np.sqrt(M - 0.5)) ** 2


def wishart_edge_scale(N: int, M: int, sigma2: float = 1.0) -> float:
    """The TW scale s_{N,M} of λ_max(W Wᵀ) (σ²/M normalisation), of order N^{-2/3}."""
    N, M = _check_dims(N, M)
    a, b = np.sqrt(N - 0.5), np.sqrt(M - 0.5)
    return sigma2 / M * (a + b) * (1.0 / a + 1.0 / b) ** (1.0 / 3.0)


def wigner_edge_scale(N: int) -> float:
    """N^{-2/3}: the TW scale of the top eigenvalue of a Wigner matrix with edge 2."""
    if isinstance(N, bool) or int(N) != N or N < 2:
        raise ValueError(f"N: expected an integer >= 2, found {N!r}")
    return float(N) ** (-2.0 / 3.0)
