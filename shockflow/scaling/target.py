"""Targets of the quadratic-network scaling study (docs/theory.md §4) and the data they generate.

The teacher is the trace model itself,

    y = Tr[S* Z] + √Δ ξ,      Z = (x xᵀ − I)/√d,   x ~ N(0, I_d),   ξ ~ N(0, 1),

with a symmetric positive semi-definite S* = V diag(s) Vᵀ. For a power-law target the
eigenvalues are s_i = c i^{-γ} (i = 1..d). Convention (ours, **[model]**): c is chosen so the
noiseless target has unit variance, E[(Tr[S* Z])²] = 2‖S*‖_F²/d = 1, i.e.

    c = √(d / (2 Σ_{i≤d} i^{-2γ})),

which is docs/theory.md §4's s_i ≈ √d i^{-γ} up to the d-independent factor 1/√(2 ζ(2γ)) when γ > 1/2.
The best rank-p approximation then leaves the width-limited error 2 Σ_{i>p} s_i² / d
(:func:`rank_floor`), ~ p^{-(2γ-1)} / ((2γ-1) ζ(2γ)).

γ ≤ 1/2 is refused: Σ i^{-2γ} diverges with d and the target has no d → ∞ limit.
Because x is isotropic, the error of every rotation-equivariant estimator does not depend on
the eigenbasis V; it is drawn Haar-random from the seed anyway (``basis="identity"`` skips it).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["Target", "power_law_eigenvalues", "make_target", "rank_floor", "sample_data", "haar_orthogonal"]


def _check_dim(d) -> int:
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"d: expected a positive integer, found {d!r}")
    return int(d)


def _check_gamma(gamma) -> float:
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not np.isfinite(gamma):
        raise ValueError(f"gamma: expected a finite real number > 1/2, found {gamma!r}")
    if gamma <= 0.5:
        raise ValueError(f"gamma: expected gamma > 1/2 (for gamma <= 1/2 the power-law target s_i ∝ i^-gamma "
                         f"is not normalisable as d → ∞), found {gamma}")
    return float(gamma)


def _check_noise(noise) -> float:
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real) or not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise: expected a finite label-noise variance Δ >= 0, found {noise!r}")
    return float(noise)


def power_law_eigenvalues(d: int, gamma: float) -> np.ndarray:
    """s_i = c i^{-γ}, i = 1..d, with c such that 2 Σ s_i² / d = 1 (unit target variance)."""
    d = _check_dim(d)
    gamma = _check_gamma(gamma)
    s = np.arange(1, d + 1, dtype=np.float64) ** (-gamma)
    return s * np.sqrt(d / (2.0 * np.sum(s * s)))


def haar_orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-distributed d × d orthogonal matrix (QR of a Gaussian matrix with the sign fix)."""
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


@dataclass(frozen=True, eq=False)
class Target:
    """S* = V diag(eigenvalues) Vᵀ (eigenvalues sorted decreasing, ≥ 0) and the noise variance Δ.

    ``gamma`` is the power-law exponent, or None for a user spectrum.
    """

    eigenvalues: np.ndarray
    basis: np.ndarray
    noise: float = 0.0
    gamma: float | None = None

    @property
    def d(self) -> int:
        return int(self.basis.shape[0])

    @property
    def matrix(self) -> np.ndarray:
        """S* (d × d, symmetric PSD)."""
        V = self.basis
        return (V * self.eigenvalues) @ V.T

    @property
    def signal_variance(self) -> float:
        """E[(Tr[S* Z])²] = 2 ‖S*‖_F² / d."""
        return float(2.0 * np.sum(self.eigenvalues ** 2) / self.d)

    def spec(self) -> dict:
        return {"d": self.d, "gamma": self.gamma, "noise": self.noise,
                "signal_variance": self.signal_variance}


def make_target(d: int, gamma: float | None = None, *, spectrum=None, noise: float = 0.0, seed: int = 0,
                basis: str = "haar") -> Target:
    """A power-law target (``gamma``) or a user spectrum (``spectrum``, length ≤ d, zero-padded).

    A user spectrum is used as given (no normalisation); it must be finite and ≥ 0 because the
    learned S = WᵀW/√(p d) is positive semi-definite. ``basis``: "haar" (seeded) or "identity".
    """
    d = _check_dim(d)
    noise = _check_noise(noise)
    if (gamma is None) == (spectrum is None):
        raise ValueError("make_target: give exactly one of gamma (power law) or spectrum (user eigenvalues), "
                         f"found gamma={gamma!r}, spectrum={'None' if spectrum is None else 'array'}")
    if gamma is not None:
        s = power_law_eigenvalues(d, gamma)
        gamma = float(gamma)
    else:
        s = np.asarray(spectrum, dtype=np.float64).ravel()
        if s.size == 0 or s.size > d:
            raise ValueError(f"spectrum: expected 1..{d} eigenvalues (d = {d}), found {s.size}")
        if not np.all(np.isfinite(s)) or np.any(s < 0):
            raise ValueError("spectrum: expected finite eigenvalues >= 0 (the model's S is PSD), "
                             f"found min {np.min(s)!r}")
        s = np.sort(np.concatenate([s, np.zeros(d - s.size)]))[::-1].copy()
    if basis not in ("haar", "identity"):
        raise ValueError(f"basis: unknown value {basis!r}; valid values: haar, identity")
    V = haar_orthogonal(d, np.random.default_rng([int(seed), 7919])) if basis == "haar" else np.eye(d)
    s.setflags(write=False)
    V.setflags(write=False)
    return Target(eigenvalues=s, basis=V, noise=noise, gamma=gamma)


def rank_floor(target: Target, p: int) -> float:
    """The width-limited error 2 Σ_{i>p} s_i² / d: the least test error of any rank-≤p S ⪰ 0
    (Eckart–Young on the PSD target)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1:
        raise ValueError(f"p: expected a width >= 1, found {p!r}")
    s = target.eigenvalues
    return float(2.0 * np.sum(s[int(p):] ** 2) / target.d)


def sample_data(target: Target, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n Gaussian inputs X (n, d) and labels y = Tr[S* Z_μ] + √Δ ξ_μ (computed without forming Z_μ:
    Tr[S* Z] = (‖diag(√s) Vᵀ x‖² − Tr S*)/√d)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n: expected a positive number of samples, found {n!r}")
    rng = np.random.default_rng([int(seed), 104729])
    d = target.d
    X = rng.standard_normal((int(n), d))
    U = (X @ target.basis) * np.sqrt(target.eigenvalues)
    y = (np.sum(U * U, axis=1) - np.sum(target.eigenvalues)) / np.sqrt(d)
    if target.noise > 0:
        y = y + np.sqrt(target.noise) * rng.standard_normal(int(n))
    return X, y
