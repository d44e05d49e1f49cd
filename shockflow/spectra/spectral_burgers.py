"""Spectral Burgers: the Stieltjes transform under additive free Gaussian noise (docs/theory.md §1, last
paragraph; docs/theory.md §3).

X_t = X₀ + √t H, H a GOE matrix normalised to the semicircle on [−2, 2] (off-diagonal variance
1/N): this is Dyson Brownian motion at time t. The Stieltjes transform G(z, t) = ∫ρ_t(λ)/(z − λ)dλ
of the limiting spectrum solves the complex inviscid Burgers equation

    ∂_t G + G ∂_z G = 0,      G(z, 0) = G₀(z),

whose characteristics are straight lines z = w + t G₀(w) carrying G = G₀(w) (the
subordination relation G(z, t) = G₀(z − t G) of free probability) [classical].

Solution here: for each z = x + iη, Newton's method on F(w) = w + t G₀(w) − z, continued from
η = large (where w ≈ z) down to η → 0⁺ along a geometric ladder, so that the root followed is the
one connected to infinity (Im w ≥ Im z). The density is ρ_t(x) = −Im G(x + i0⁺, t)/π.

Edges = focusing of characteristics. On the real axis outside the support G is real and the
characteristics x = w + t G₀(w) of real Burgers cross first where ∂x/∂w = 1 + t G₀'(w) = 0, i.e.
t ∫ρ₀(λ)/(w − λ)² dλ = 1; the edge is x_edge = w* + t G₀(w*) (the "shock" of the real problem is
the spectral edge).

Outliers. A separated eigenvalue λ_s of X₀ (weight 1/N → 0 in G₀) moves along its own
characteristic: it stays an outlier at λ_s + t G_b(λ_s) (G_b the bulk's transform) while
t < t_s = 1/∫ρ_b(λ)/(λ_s − λ)² dλ = −1/G_b'(λ_s), and is swallowed by the bulk at t_s, when its
foot λ_s becomes the focusing point w* of the edge characteristic. For an empty bulk
(G_b = 1/w) this gives the spiked-Wigner law: outlier λ_s + t/λ_s for λ_s > √t.

This is the spectral side of the BBP transition of docs/theory.md §3 run in reverse: noise of strength t
swallows a signal of strength θ exactly when the spike's characteristic is caught by the edge
characteristic. (The real-axis problem has a pole at every eigenvalue, so the grid solvers of
``solvers/`` are not used: the characteristic solution is exact and cheaper.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.optimize import brentq

from .marchenko_pastur import mp_edges, mp_stieltjes

__all__ = ["InitialSpectrum", "from_eigenvalues", "from_marchenko_pastur", "point_mass",
           "stieltjes_after_noise", "density_after_noise", "right_edge_after_noise",
           "left_edge_after_noise", "edge_tw_scale", "outlier_after_noise", "swallow_time", "add_goe_noise",
           "compare_with_monte_carlo", "cdf_from_density"]


@dataclass(frozen=True)
class InitialSpectrum:
    """G₀ and G₀' as callables of complex z, and the support [lo, hi] of ρ₀."""

    G: Callable
    dG: Callable
    lo: float
    hi: float
    name: str = ""


def from_eigenvalues(eigenvalues) -> InitialSpectrum:
    """The empirical spectral measure (1/N) Σ δ_{λ_i}: G₀ = mean 1/(z − λ_i), G₀' = −mean 1/(z − λ_i)²."""
    lam = np.asarray(eigenvalues, dtype=np.float64).ravel()
    if lam.size < 1 or not np.all(np.isfinite(lam)):
        raise ValueError("eigenvalues: expected a non-empty array of finite eigenvalues")

    def G(z):
        z = np.asarray(z, dtype=np.complex128)
        return np.mean(1.0 / (z[..., None] - lam), axis=-1)

    def dG(z):
        z = np.asarray(z, dtype=np.complex128)
        return -np.mean(1.0 / (z[..., None] - lam) ** 2, axis=-1)

    return InitialSpectrum(G, dG, float(lam.min()), float(lam.max()), f"empirical({lam.size})")


def from_marchenko_pastur(ratio: float, sigma2: float = 1.0) -> InitialSpectrum:
    """MP(r, σ²) of :mod:`.marchenko_pastur` (r ≤ 1); G₀' by a complex central difference."""
    if ratio > 1:
        raise ValueError(f"ratio: from_marchenko_pastur needs r <= 1 (no atom), found {ratio}")
    lo, hi = mp_edges(ratio, sigma2)

    def G(z):
        return mp_stieltjes(z, ratio, sigma2)

    def dG(z):
        z = np.asarray(z, dtype=np.complex128)
        h = 1e-5 * np.maximum(1.0, np.abs(z))
        return (G(z + h) - G(z - h)) / (2.0 * h)

    return InitialSpectrum(G, dG, lo, hi, f"MP(r={ratio:g}, sigma2={sigma2:g})")


def point_mass(at: float = 0.0) -> InitialSpectrum:
    """ρ₀ = δ_at (X₀ = at·I): the evolution is the semicircle of radius 2√t around ``at``."""
    return InitialSpectrum(lambda z: 1.0 / (np.asarray(z, np.complex128) - at),
                           lambda z: -1.0 / (np.asarray(z, np.complex128) - at) ** 2,
                           float(at), float(at), f"delta({at:g})")


def _check_t(t) -> float:
    t = float(t)
    if not (np.isfinite(t) and t >= 0):
        raise ValueError(f"t: expected a finite noise time t >= 0, found {t}")
    return t


def stieltjes_after_noise(init: InitialSpectrum, z, t: float, rungs: int = 30) -> np.ndarray:
    """G(z, t) for z in the closed upper half plane (Im z = 0 means the limit η → 0⁺), by Newton on
    the characteristic foot w with continuation in Im z (module docstring)."""
    t = _check_t(t)
    z = np.atleast_1d(np.asarray(z, dtype=np.complex128))
    shape = z.shape
    z = z.ravel()
    if t == 0.0:
        return init.G(z + 1e-300j).reshape(shape)
    centre = 0.5 * (init.lo + init.hi)
    span = max(init.hi - init.lo, 1e-12) + 4.0 * math.sqrt(t) + float(np.max(np.abs(z.real - centre)))
    eta_target = np.maximum(z.imag, 1e-13 * span)
    top = 10.0 * span
    w = z.real + 1j * top
    for k in range(rungs + 1):
        eta = np.maximum(top * (eta_target / top) ** (k / rungs), eta_target)
        zk = z.real + 1j * eta
        active = np.arange(z.size)
        for _ in range(40):
            wa = w[active]
            step = (wa + t * init.G(wa) - zk[active]) / (1.0 + t * init.dG(wa))
            new = wa - step
            # keep the root connected to infinity: Im w >= Im z; halve steps that leave it
            for _ in range(30):
                bad = new.imag < 0.5 * eta[active]
                if not np.any(bad):
                    break
                step = np.where(bad, 0.5 * step, step)
                new = wa - step
            new = np.where(new.imag < 0.5 * eta[active], wa.real + 1j * eta[active], new)
            w[active] = new
            moving = np.abs(step) > 1e-14 * (1.0 + np.abs(new))
            active = active[moving]
            if active.size == 0:
                break
    G = init.G(w)
    if not np.all(np.isfinite(G)):
        raise FloatingPointError("stieltjes_after_noise: the characteristic solve produced NaN/inf")
    return G.reshape(shape)


def density_after_noise(init: InitialSpectrum, x, t: float) -> np.ndarray:
    """ρ_t(x) = −Im G(x + i0⁺, t)/π."""
    x = np.asarray(x, dtype=np.float64)
    return np.clip(-stieltjes_after_noise(init, x.astype(np.complex128), t).imag / np.pi, 0.0, None)


def _edge_foot(init: InitialSpectrum, t: float, side: int) -> float:
    """The real foot w* outside the support with 1 + t G₀'(w*) = 0 on the given side (+1 right)."""
    if t == 0.0:
        return init.hi if side > 0 else init.lo
    base = init.hi if side > 0 else init.lo

    def f(d):
        return 1.0 + t * init.dG(np.complex128(base + side * d)).real

    width = max(init.hi - init.lo, 1e-12)
    d_lo = 1e-14 * (1.0 + abs(base)) + 1e-14 * width
    d_hi = width + 2.0 * math.sqrt(t) + 1.0
    while f(d_hi) <= 0:
        d_hi *= 2.0
    if f(d_lo) >= 0:       # G₀' bounded at the edge and already small: the edge does not focus
        return base + side * d_lo
    return base + side * brentq(f, d_lo, d_hi, xtol=1e-15 * (1 + abs(base)), rtol=1e-15, maxiter=500)


def right_edge_after_noise(init: InitialSpectrum, t: float) -> dict:
    """Right edge of the support at time t: {"edge", "foot"} with edge = w* + t G₀(w*)."""
    t = _check_t(t)
    w = _edge_foot(init, t, +1)
    return {"edge": float(w + t * init.G(np.complex128(w)).real), "foot": float(w)}


def edge_tw_scale(init: InitialSpectrum, t: float, N: int) -> dict:
    """Square-root amplitude and Tracy–Widom scale of the right edge at time t.

    Near the focusing foot w*, z(w) = w + t G₀(w) ≈ E + ½ t G₀''(w*) (w − w*)², so
    ρ_t(x) ≈ (A/π) √(E − x) with A = √(2 / (t³ G₀''(w*))), and mapping this edge onto the GOE
    edge ((1/π)√(2 − x), fluctuations N^{-2/3}) gives the scale (N A)^{-2/3}: the top eigenvalue
    of an N×N sample is ≈ E + (N A)^{-2/3} TW₁ (mean shift TW1_MEAN · scale).
    """
    t = _check_t(t)
    if t == 0.0:
        raise ValueError("t: the edge scale needs noise, t > 0")
    e = right_edge_after_noise(init, t)
    w = e["foot"]
    h = 1e-4 * max(1.0, abs(w), math.sqrt(t))
    d2 = float(((init.dG(np.complex128(w + h)) - init.dG(np.complex128(w - h))) / (2 * h)).real)
    if not d2 > 0:
        raise FloatingPointError(f"edge_tw_scale: G0''(w*) = {d2} is not positive at the foot w* = {w}")
    A = math.sqrt(2.0 / (t**3 * d2))
    return {"edge": e["edge"], "amplitude": A, "tw_scale": (N * A) ** (-2.0 / 3.0)}


def left_edge_after_noise(init: InitialSpectrum, t: float) -> dict:
    t = _check_t(t)
    w = _edge_foot(init, t, -1)
    return {"edge": float(w + t * init.G(np.complex128(w)).real), "foot": float(w)}


def swallow_time(spike: float, bulk: InitialSpectrum) -> float:
    """t_s = −1/G_b'(λ_s): the noise time at which the spike's characteristic reaches the edge."""
    if not spike > bulk.hi:
        raise ValueError(f"spike: expected an eigenvalue above the bulk edge {bulk.hi:g}, found {spike}")
    return float(-1.0 / bulk.dG(np.complex128(spike)).real)


def outlier_after_noise(spike: float, bulk: InitialSpectrum, t: float) -> dict:
    """Where a spike λ_s above the bulk sits after noise t (N → ∞): escaped (outlier at
    λ_s + t G_b(λ_s)) while t < t_s, swallowed (top eigenvalue at the bulk edge) after."""
    t = _check_t(t)
    ts = swallow_time(spike, bulk)
    edge = right_edge_after_noise(bulk, t)["edge"]
    escaped = t < ts
    pos = float(spike + t * bulk.G(np.complex128(spike)).real) if escaped else edge
    return {"escaped": bool(escaped), "position": pos, "swallow_time": ts, "bulk_edge": edge}


def add_goe_noise(X0, t: float, rng: np.random.Generator) -> np.ndarray:
    """Eigenvalues of X0 + √t H, H GOE with semicircle on [−2, 2] (off-diagonal variance 1/N,
    diagonal 2/N). ``X0`` is a symmetric matrix or a 1-D spectrum (taken as diag; GOE is
    rotation invariant so only the spectrum of X0 matters)."""
    X0 = np.asarray(X0, dtype=np.float64)
    if X0.ndim == 1:
        X0 = np.diag(X0)
    if X0.ndim != 2 or X0.shape[0] != X0.shape[1]:
        raise ValueError(f"X0: expected a square symmetric matrix or a 1-D spectrum, found shape {X0.shape}")
    N = X0.shape[0]
    A = rng.standard_normal((N, N))
    H = (A + A.T) / math.sqrt(2.0 * N)
    return np.linalg.eigvalsh(X0 + math.sqrt(_check_t(t)) * H)


def cdf_from_density(x: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """Cumulative trapezoid integral of ρ on the grid x, normalised to end at 1."""
    c = np.concatenate([[0.0], np.cumsum(0.5 * (rho[1:] + rho[:-1]) * np.diff(x))])
    return c / c[-1]


def compare_with_monte_carlo(eigenvalues0, t: float, n_samples: int, seed: int = 0,
                             n_grid: int = 1200, n_bins: int = 40) -> dict:
    """Predicted (characteristics, from the spectrum of X₀) versus Monte Carlo X₀ + √t H.

    Returns the predicted right/left edges, the Monte Carlo mean top/bottom eigenvalue, the KS
    distance between the pooled Monte Carlo eigenvalue CDF and the predicted CDF, and the L1
    distance between the Monte Carlo histogram (``n_bins`` bins) and the predicted density.
    """
    lam0 = np.sort(np.asarray(eigenvalues0, dtype=np.float64))
    init = from_eigenvalues(lam0)
    R, L = right_edge_after_noise(init, t)["edge"], left_edge_after_noise(init, t)["edge"]
    rng = np.random.default_rng(seed)
    mc = np.array([add_goe_noise(lam0, t, rng) for _ in range(int(n_samples))])
    pad = 0.02 * (R - L)
    x = np.linspace(L - pad, R + pad, n_grid)
    rho = density_after_noise(init, x, t)
    F = cdf_from_density(x, rho)
    pooled = np.sort(mc.ravel())
    Fp = np.interp(pooled, x, F)
    emp_hi = np.arange(1, pooled.size + 1) / pooled.size
    ks = float(max(np.max(np.abs(Fp - emp_hi)), np.max(np.abs(Fp - (emp_hi - 1.0 / pooled.size)))))
    bins = np.linspace(L, R, n_bins + 1)
    hist, _ = np.histogram(pooled, bins=bins, density=False)
    hist = hist / (pooled.size * np.diff(bins))
    pred = np.diff(np.interp(bins, x, F)) / np.diff(bins)
    l1 = float(np.sum(np.abs(hist - pred) * np.diff(bins)))
    from .tracy_widom import TW1_MEAN

    tw = edge_tw_scale(init, t, lam0.size)
    return {"t": float(t), "N": int(lam0.size), "n_samples": int(n_samples),
            "edge_right": R, "edge_tw_scale": tw["tw_scale"],
            "top_predicted_mean": R + TW1_MEAN * tw["tw_scale"], "edge_left": L, "mc_top_mean": float(mc[:, -1].mean()),
            "mc_top_std": float(mc[:, -1].std(ddof=1)) if n_samples > 1 else float("nan"),
            "mc_bottom_mean": float(mc[:, 0].mean()),
            "ks_distance": ks, "density_l1": l1, "x": x, "density": rho}
