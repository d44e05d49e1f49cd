"""Inputs with a power-law covariance spectrum, λ_k ∝ k^{-a}, and a linear target.

x = Σ_k sqrt(λ_k) g_k e_k with g ~ N(0, I), λ_k = k^{-a} (k = 1..d), in the coordinate basis
(``rotate=True`` applies a seeded random orthogonal rotation). The target is linear,
y = w*·x + σ ξ with teacher coefficients w*_k = k^{-b/2}·(random sign) (``target_exponent = b``,
so the per-mode signal power λ_k w*_k² decays like k^{-(a+b)}, the source/capacity
convention of spectral scaling laws). Pass ``teacher_weights`` to choose w* yourself.
"""

from __future__ import annotations

import numpy as np

from .dataset import Dataset

__all__ = ["power_law_covariance", "power_law_spectrum"]


def power_law_spectrum(d: int, exponent: float) -> np.ndarray:
    """λ_k = k^{-exponent}, k = 1..d."""
    return np.arange(1, int(d) + 1, dtype=np.float64) ** (-float(exponent))


def power_law_covariance(n: int, d: int, exponent: float, *, target_exponent: float = 1.0,
                         teacher_weights: np.ndarray | None = None, noise: float = 0.0,
                         rotate: bool = False, seed: int = 0) -> Dataset:
    """n samples x ∈ R^d with covariance spectrum k^{-exponent} and linear targets (see module doc)."""
    if int(n) != n or n < 1:
        raise ValueError(f"power_law_covariance: n must be a positive integer, got {n!r}")
    if int(d) != d or d < 1:
        raise ValueError(f"power_law_covariance: d must be a positive integer, got {d!r}")
    if not exponent >= 0:
        raise ValueError(f"power_law_covariance: exponent must be >= 0, got {exponent!r}")
    if not noise >= 0:
        raise ValueError(f"power_law_covariance: noise must be >= 0, got {noise!r}")
    rng = np.random.default_rng(seed)
    lam = power_law_spectrum(d, exponent)
    X = rng.standard_normal((int(n), int(d))) * np.sqrt(lam)
    if teacher_weights is None:
        signs = rng.choice([-1.0, 1.0], size=int(d))
        w = signs * np.arange(1, int(d) + 1, dtype=np.float64) ** (-float(target_exponent) / 2)
    else:
        w = np.asarray(teacher_weights, dtype=np.float64)
        if w.shape != (d,):
            raise ValueError(f"power_law_covariance: teacher_weights must have shape ({d},), got {w.shape}")
    y = X @ w
    if rotate:
        Q, R = np.linalg.qr(rng.standard_normal((int(d), int(d))))
        Q = Q * np.sign(np.diag(R))
        X = X @ Q.T
    if noise > 0:
        y = y + noise * rng.standard_normal(y.shape)
    spec = {"name": "power_law_covariance", "n": int(n), "d": int(d), "exponent": float(exponent),
            "target_exponent": None if teacher_weights is not None else float(target_exponent),
            "noise": float(noise), "rotate": bool(rotate), "seed": int(seed),
            "teacher_weights": None if teacher_weights is None else w.tolist()}
    return Dataset(X, y, spec)
