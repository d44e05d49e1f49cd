"""The Marchenko–Pastur law of W Wᵀ for a Gaussian W (docs/theory.md §3, random-matrix toolkit).

Convention (the one used throughout ``shockflow.spectra``): W ∈ R^{N×M} has i.i.d. entries of
mean 0 and variance σ²/M, aspect ratio r = N/M, and we study the N eigenvalues of X = W Wᵀ.
As N, M → ∞ with r fixed their empirical distribution tends to

    ρ(λ) = sqrt((λ₊ − λ)(λ − λ₋)) / (2π σ² r λ)   on [λ₋, λ₊],   λ± = σ² (1 ± √r)²,

plus an atom of mass 1 − 1/r at λ = 0 when r > 1 (W Wᵀ then has rank M < N).
Its Stieltjes transform G(z) = ∫ ρ(λ)/(z − λ) dλ (with the atom) is

    G(z) = (z − σ²(1 − r) − sqrt(z − λ₋) sqrt(z − λ₊)) / (2 σ² r z),

the branch of the square root behaving like z at infinity (principal roots of each factor).
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["mp_edges", "mp_density", "mp_cdf", "mp_quantile", "mp_stieltjes", "mp_atom",
           "check_ratio", "check_variance"]

_GL_X, _GL_W = np.polynomial.legendre.leggauss(64)


def check_ratio(r, name: str = "ratio") -> float:
    """Return r as a float if it is a finite positive number, else raise naming ``name``."""
    try:
        r = float(r)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a positive aspect ratio N/M, found {r!r}") from None
    if not np.isfinite(r) or r <= 0:
        raise ValueError(f"{name}: expected a finite positive aspect ratio N/M, found {r}")
    return r


def check_variance(s2, name: str = "sigma2") -> float:
    """Return σ² as a float if it is finite and positive, else raise naming ``name``."""
    try:
        s2 = float(s2)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a positive variance, found {s2!r}") from None
    if not np.isfinite(s2) or s2 <= 0:
        raise ValueError(f"{name}: expected a finite positive variance, found {s2}")
    return s2


def mp_edges(ratio: float, sigma2: float = 1.0) -> tuple[float, float]:
    """(λ₋, λ₊) = σ²(1 ∓ √r)² of the continuous part."""
    r, s2 = check_ratio(ratio), check_variance(sigma2)
    return s2 * (1.0 - np.sqrt(r)) ** 2, s2 * (1.0 + np.sqrt(r)) ** 2


def mp_atom(ratio: float) -> float:
    """Mass of the atom at zero: max(0, 1 − 1/r)."""
    r = check_ratio(ratio)
    return max(0.0, 1.0 - 1.0 / r)


def mp_density(x, ratio: float, sigma2: float = 1.0) -> np.ndarray:
    """Density of the continuous part at ``x`` (zero outside [λ₋, λ₊]; the atom is not included)."""
    lo, hi = mp_edges(ratio, sigma2)
    r, s2 = float(ratio), float(sigma2)
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.sqrt(np.clip((hi - x) * (x - lo), 0.0, None)) / (2.0 * np.pi * s2 * r * x)
    return np.where((x > lo) & (x < hi), rho, 0.0)


def mp_cdf(x, ratio: float, sigma2: float = 1.0) -> np.ndarray:
    """P(λ ≤ x), atom included.

    The continuous part is integrated in the angle λ = c − d cos φ (c, d the centre and half
    width of the support), where the integrand d² sin²φ / (2πσ² r (c − d cos φ)) is smooth even at
    r = 1, by 64-point Gauss–Legendre: exact to round-off.
    """
    lo, hi = mp_edges(ratio, sigma2)
    r, s2 = float(ratio), float(sigma2)
    x = np.asarray(x, dtype=np.float64)
    c, d = 0.5 * (lo + hi), 0.5 * (hi - lo)
    phi_x = np.arccos(np.clip((c - np.clip(x, lo, hi)) / d, -1.0, 1.0))  # in [0, π]
    # ∫_0^{φx} f(φ) dφ with nodes mapped to [0, φx]
    phi = 0.5 * phi_x[..., None] * (_GL_X + 1.0)
    f = d * d * np.sin(phi) ** 2 / (2.0 * np.pi * s2 * r * (c - d * np.cos(phi)))
    cont = 0.5 * phi_x * np.sum(f * _GL_W, axis=-1)
    atom = mp_atom(r)
    return np.where(x < 0.0, 0.0, atom + cont)


def _angle_integrand(phi, c, d, ratio):
    """d² sin²φ / (2π r (c − d cos φ)); at r = 1 (c = d) its φ → 0 limit 2d/(2π r) where 0/0."""
    den = c - d * np.cos(phi)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = d * d * np.sin(phi) ** 2 / den
    return np.where(den > 0, f, 2.0 * d) / (2.0 * np.pi * ratio)


def _cdf_in_angle(phi, ratio):
    """Continuous-part CDF (unit variance, total mass 1 − atom) and its φ-derivative."""
    lo, hi = mp_edges(ratio, 1.0)
    c, d = 0.5 * (lo + hi), 0.5 * (hi - lo)
    nodes = 0.5 * phi[..., None] * (_GL_X + 1.0)
    F = 0.5 * phi * np.sum(_angle_integrand(nodes, c, d, ratio) * _GL_W, axis=-1)
    return F, _angle_integrand(phi, c, d, ratio)


@functools.lru_cache(maxsize=64)
def _angle_table(ratio: float):
    phi = np.linspace(0.0, np.pi, 2049)
    F, _ = _cdf_in_angle(phi, ratio)
    return phi, F / F[-1]


def mp_quantile(p, ratio: float, sigma2: float = 1.0) -> np.ndarray:
    """Quantiles of the *continuous part* normalised to mass one (the atom removed).

    ``p`` in [0, 1]. Solved in the angle λ = c − d cos φ, where the CDF is smooth: a tabulated
    inverse (2049 angles) gives the start, three Newton steps on the Gauss–Legendre CDF polish it
    to round-off.
    """
    r, s2 = check_ratio(ratio), check_variance(sigma2)
    p = np.asarray(p, dtype=np.float64)
    if np.any((p < 0) | (p > 1)) or not np.all(np.isfinite(p)):
        raise ValueError("p: quantile levels must lie in [0, 1]")
    phi_t, F_t = _angle_table(r)
    phi = np.interp(p, F_t, phi_t)
    mass = 1.0 - mp_atom(r)
    for _ in range(3):
        F, f = _cdf_in_angle(phi, r)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(f > 1e-14, (F / mass - p) / (f / mass), 0.0)
        phi = np.clip(phi - step, 0.0, np.pi)
    lo, hi = mp_edges(r, 1.0)
    return s2 * (0.5 * (lo + hi) - 0.5 * (hi - lo) * np.cos(phi))


def mp_stieltjes(z, ratio: float, sigma2: float = 1.0) -> np.ndarray:
    """G(z) = ∫ ρ(λ)/(z − λ) dλ (atom included), for z off the support."""
    lo, hi = mp_edges(ratio, sigma2)
    r, s2 = float(ratio), float(sigma2)
    z = np.asarray(z, dtype=np.complex128)
    root = np.sqrt(z - lo) * np.sqrt(z - hi)
    return (z - s2 * (1.0 - r) - root) / (2.0 * s2 * r * z)
