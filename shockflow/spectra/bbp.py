"""Rank-one BBP transitions: thresholds, outlier positions and eigenvector overlaps (docs/theory.md §3).

**Rectangular (Benaych-Georges & Nadakuditi 2012, Example 3.1) [classical].**
W = θ u vᵀ + Z ∈ R^{N×M}, |u| = |v| = 1, Z with i.i.d. entries of variance 1/M, r = N/M.
As N, M → ∞ the top eigenvalue of X = W Wᵀ and the overlaps of its top left/right singular
vectors (ũ, ṽ) with (u, v) are

    θ ≤ r^{1/4}:  λ_top → (1 + √r)²,   (ũ·u)² → 0,   (ṽ·v)² → 0;
    θ > r^{1/4}:  λ_top → (1 + θ²)(r + θ²)/θ²,
                  (ũ·u)² → (θ⁴ − r)/(θ² (θ² + r))  = (1 − r/θ⁴)/(1 + r/θ²)   (docs/theory.md §3's q²),
                  (ṽ·v)² → (θ⁴ − r)/(θ² (θ² + 1)).

With entries of variance a/M instead of 1/M and spike √b u vᵀ, θ² = b/a and every eigenvalue
is multiplied by a: λ_iso = (b + r a)(b + a)/b, λ₊ = a(1 + √r)² (docs/theory.md §3).

**Spiked Wigner [classical].** H = θ u uᵀ + Z, Z symmetric with off-diagonal variance 1/N
(semicircle on [−2, 2]): for θ > 1 the top eigenvalue → θ + 1/θ and (ũ·u)² → 1 − 1/θ²;
for θ ≤ 1 it sticks to the edge 2 and the overlap vanishes.
"""

from __future__ import annotations

import numpy as np

from .marchenko_pastur import check_ratio

__all__ = ["rectangular_threshold", "rectangular_outlier", "rectangular_overlap",
           "rectangular_theta_from_outlier", "wigner_threshold", "wigner_outlier", "wigner_overlap"]


def _theta(theta) -> np.ndarray:
    t = np.asarray(theta, dtype=np.float64)
    if np.any(~np.isfinite(t)) or np.any(t < 0):
        raise ValueError("theta: expected finite non-negative signal strengths")
    return t


def _out(x):
    return float(x) if np.ndim(x) == 0 else x


def rectangular_threshold(ratio: float) -> float:
    """θ_c = r^{1/4}."""
    return check_ratio(ratio) ** 0.25


def rectangular_outlier(theta, ratio: float, scale: float = 1.0):
    """Top eigenvalue of W Wᵀ: scale·(1+θ²)(r+θ²)/θ² above threshold, scale·(1+√r)² below."""
    r = check_ratio(ratio)
    t = _theta(theta)
    with np.errstate(divide="ignore", invalid="ignore"):
        above = (1.0 + t**2) * (r + t**2) / t**2
    return _out(scale * np.where(t > r**0.25, above, (1.0 + np.sqrt(r)) ** 2))


def rectangular_overlap(theta, ratio: float, side: str = "left"):
    """Squared overlap of the top left (N-side, eigenvector of W Wᵀ) or right singular vector."""
    r = check_ratio(ratio)
    t = _theta(theta)
    if side not in ("left", "right"):
        raise ValueError(f"side: expected 'left' or 'right', found {side!r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        den = t**2 * (t**2 + (r if side == "left" else 1.0))
        q2 = (t**4 - r) / den
    return _out(np.where(t > r**0.25, q2, 0.0))


def rectangular_theta_from_outlier(lam, ratio: float, scale: float = 1.0):
    """Invert :func:`rectangular_outlier`: θ from an outlier λ > scale·(1+√r)² (nan at or below).

    λ/scale = (1+θ²)(r+θ²)/θ² is the quadratic θ⁴ − (λ/scale − 1 − r) θ² + r = 0 in θ²; the
    larger root is the one above threshold.
    """
    r = check_ratio(ratio)
    y = np.asarray(lam, dtype=np.float64) / scale
    c = y - 1.0 - r
    disc = c * c - 4.0 * r
    with np.errstate(invalid="ignore"):
        t2 = 0.5 * (c + np.sqrt(disc))
        th = np.sqrt(t2)
    return _out(np.where((y > (1 + np.sqrt(r)) ** 2) & (disc >= 0), th, np.nan))


def wigner_threshold() -> float:
    """θ_c = 1 for the spiked Wigner model."""
    return 1.0


def wigner_outlier(theta):
    """θ + 1/θ above threshold, the edge 2 below."""
    t = _theta(theta)
    with np.errstate(divide="ignore"):
        return _out(np.where(t > 1.0, t + 1.0 / t, 2.0))


def wigner_overlap(theta):
    """(ũ·u)² = 1 − 1/θ² above threshold, 0 below."""
    t = _theta(theta)
    with np.errstate(divide="ignore"):
        return _out(np.where(t > 1.0, 1.0 - 1.0 / t**2, 0.0))
