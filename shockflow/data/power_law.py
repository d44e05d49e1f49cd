"""Inputs with a power-law covariance spectrum, λ_k ∝ k^{-a}, and a linear target.

x = Σ_k sqrt(λ_k) g_k e_k with g ~ N(0, I), λ_k = k^{-a} (k = 1..d), in the coordinate basis
(``rotate=True`` applies a seeded random orthogonal rotation). The target is linear,
y = w*·x + σ ξ with teacher coefficients w*_k = k^{-b/2}·(random sign) (``target_exponent = b``,
so the per-mode signal power λ_k w*_k² decays like k^{-(a+b)}, the source/capacity
convention of spectral scaling laws). Pass ``teacher_weights`` to choose w* yourself.

Correlated inputs: ``correlation = ρ`` makes the inputs equicorrelated, covariance
``D^{1/2} ((1 − ρ) I + ρ 11ᵀ) D^{1/2}`` with ``D = diag(λ)`` (``−1/(d − 1) < ρ < 1``);
``covariance`` gives the whole ``d × d`` population covariance instead (symmetric positive definite;
the spectrum and ``correlation`` are then not used).  Either makes the modes of a diagonal network
couple through the data (docs/theory.md §6, "Coupled modes").
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
                         rotate: bool = False, correlation: float = 0.0, covariance=None,
                         seed: int = 0) -> Dataset:
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
    factor = _covariance_factor(int(d), float(exponent), float(correlation), covariance)
    X = rng.standard_normal((int(n), int(d))) @ factor.T
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
            "correlation": float(correlation),
            "covariance": None if covariance is None else np.asarray(covariance, dtype=np.float64).tolist(),
            "teacher_weights": None if teacher_weights is None else w.tolist()}
    return Dataset(X, y, spec)


def _covariance_factor(d: int, exponent: float, correlation: float, covariance) -> np.ndarray:
    """``F`` with ``F Fᵀ`` the population covariance (module docstring)."""
    if covariance is not None:
        C = np.asarray(covariance, dtype=np.float64)
        if C.shape != (d, d) or not np.all(np.isfinite(C)):
            raise ValueError(f"power_law_covariance: covariance must be a finite {d} x {d} matrix, got shape {C.shape}")
        if not np.allclose(C, C.T, rtol=1e-12, atol=1e-12 * np.abs(C).max()):
            raise ValueError("power_law_covariance: covariance must be symmetric")
        try:
            return np.linalg.cholesky(C)
        except np.linalg.LinAlgError:
            raise ValueError("power_law_covariance: covariance must be positive definite") from None
    if not (np.isfinite(correlation) and (d == 1 or -1.0 / (d - 1) < correlation) and correlation < 1.0):
        raise ValueError(f"power_law_covariance: correlation must lie in (-1/(d-1), 1), got {correlation!r}")
    root = np.sqrt(power_law_spectrum(d, exponent))
    if correlation == 0.0:
        return np.diag(root)
    C = (1.0 - correlation) * np.eye(d) + correlation * np.ones((d, d))
    return root[:, None] * np.linalg.cholesky(C)
