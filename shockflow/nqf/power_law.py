"""Power-law loss decay from many logistic modes (docs/theory.md §2, "Power law").

Modes k = 1..K with ζ_k = c_ζ k^{-α2}, value V_k = c_w k^{-α1} (V_k = r_k²/(8 C_kk), the loss the mode
removes), z_k(∞) = ζ_k/C_k, z_k(0) = ε c_k k^{-β}. The excess loss E(t) = Σ_k V_k (1 − z_k/z_k∞)² in the
rescaled time τ = t/ln(1/ε) tends to Σ_k V_k 1[τ < 1/(aζ_k)] = Θ(τ^{-(α1−1)/α2}) as ε → 0.

Finite ε (our derivation; docs/theory.md's formula is its β = 0 case): mode k switches on at
t_k = (1/(aζ_k)) ln(z_k∞/z_k(0)); E(t_K) ≈ Σ_{k>K} V_k ∝ K^{1−α1} and

    d ln t_k / d ln k = α2 + (β − (α1 − α2)) / ln(z_k∞/z_k(0)),

so the local slope is −(α1 − 1)/(α2 + (β − α1 + α2)/ln(z_k∞/z_k(0))); with β = 0 and c_k = 1 this is
docs/theory.md's (α1 − 1)/(α2 − (α1 − α2)/ln(ζ_k/(C_k ε))). For β = α1 − α2 the finite-ε correction vanishes.

Sample-wise version: ζ_μ = (8/m) λ_μ,max y_μ ∝ μ^{-γ2}, per-sample loss y_μ² ∝ μ^{-2γ1}:
L(τ) = Θ(τ^{-(2γ1−1)/γ2}).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["asymptotic_exponent", "samplewise_exponent", "finite_eps_slope", "ModeSpectrum", "power_law_modes",
           "excess_loss", "PowerLawFit", "fit_power_law", "switch_on_window"]


def asymptotic_exponent(alpha1: float, alpha2: float) -> float:
    """(α1 − 1)/α2 (needs α1 > 1, α2 > 0)."""
    if not (alpha1 > 1 and alpha2 > 0):
        raise ValueError(f"alpha1: expected alpha1 > 1 and alpha2 > 0, found alpha1 = {alpha1}, alpha2 = {alpha2}")
    return (alpha1 - 1.0) / alpha2


def samplewise_exponent(gamma1: float, gamma2: float) -> float:
    """(2γ1 − 1)/γ2 (needs γ1 > 1/2, γ2 > 0)."""
    if not (gamma1 > 0.5 and gamma2 > 0):
        raise ValueError(f"gamma1: expected gamma1 > 1/2 and gamma2 > 0, found gamma1 = {gamma1}, gamma2 = {gamma2}")
    return (2 * gamma1 - 1.0) / gamma2


def finite_eps_slope(alpha1: float, alpha2: float, log_ratio, beta: float = 0.0):
    """(α1 − 1)/(α2 + (β − α1 + α2)/ln(z_k∞/z_k(0))): the local decay exponent where mode k switches on."""
    log_ratio = np.asarray(log_ratio, float)
    return (alpha1 - 1.0) / (alpha2 + (beta - alpha1 + alpha2) / log_ratio)


@dataclass(frozen=True)
class ModeSpectrum:
    """Orthogonal logistic modes: rates ζ, self-interactions C, values V, initial strengths z0, a (1 or 2)."""

    zeta: np.ndarray
    C: np.ndarray
    V: np.ndarray
    z0: np.ndarray
    a: float = 1.0

    @property
    def z_inf(self) -> np.ndarray:
        return self.zeta / self.C


def power_law_modes(n_modes: int, alpha1: float, alpha2: float, eps: float, beta: float = 0.0,
                    c_zeta: float = 1.0, c_w: float = 1.0, c0: float = 1.0) -> ModeSpectrum:
    """ζ_k = c_ζ k^{-α2}, V_k = c_w k^{-α1} = ζ_k²/(8 C_k) (so C_k = ζ_k²/(8 V_k)), z_k(0) = ε c0 k^{-β}."""
    k = np.arange(1, int(n_modes) + 1, dtype=np.float64)
    zeta = c_zeta * k ** (-alpha2)
    V = c_w * k ** (-alpha1)
    C = zeta ** 2 / (8 * V)
    z0 = eps * c0 * k ** (-beta)
    if np.any(z0 >= zeta / C):
        raise ValueError("eps: the initial strengths must lie below the final ones (eps too large)")
    return ModeSpectrum(zeta, C, V, z0)


def excess_loss(t, spectrum: ModeSpectrum) -> np.ndarray:
    """E(t) = Σ_k V_k (1 − z_k(t)/z_k∞)² with the logistic closed form of every mode."""
    t = np.asarray(t, float)[:, None]
    s = spectrum
    with np.errstate(over="ignore"):
        frac = s.C * s.z0 / (s.C * s.z0 + (s.zeta - s.C * s.z0) * np.exp(-s.a * s.zeta * t))
    return np.sum(s.V * (1.0 - frac) ** 2, axis=1)


def switch_on_window(spectrum: ModeSpectrum, k_lo: int, k_hi: int) -> tuple[float, float]:
    """Times at which modes k_lo and k_hi (1-based) reach half strength: a fitting window."""
    s = spectrum
    t = np.log((s.zeta - s.C * s.z0) / (s.C * s.z0)) / (s.a * s.zeta)
    return float(t[k_lo - 1]), float(t[k_hi - 1])


@dataclass(frozen=True)
class PowerLawFit:
    """E ∝ t^{-exponent} on [t_lo, t_hi]: least squares in log-log.

    stderr : the regression's standard error (residuals are correlated: a lower bound)
    spread : standard deviation of the exponents fitted on ``pieces`` equal sub-windows in ln t
             (the systematic drift of the local slope: the honest uncertainty)
    """

    exponent: float
    stderr: float
    spread: float
    t_lo: float
    t_hi: float
    points: int
    local: tuple

    def as_dict(self) -> dict:
        return {"exponent": self.exponent, "stderr": self.stderr, "spread": self.spread, "t_lo": self.t_lo,
                "t_hi": self.t_hi, "points": self.points, "local_exponents": list(self.local)}


def _ols(x, y):
    A = np.column_stack([x, np.ones_like(x)])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    res = y - A @ coef
    dof = max(len(x) - 2, 1)
    cov = np.linalg.inv(A.T @ A) * (res @ res) / dof
    return coef[0], float(np.sqrt(cov[0, 0]))


def fit_power_law(t, E, t_lo: float, t_hi: float, pieces: int = 4, grid: int = 200) -> PowerLawFit:
    """Fit E ∝ t^{-p} on [t_lo, t_hi], after resampling log E on a uniform grid in ln t (so a dense
    late log does not outweigh the early decades)."""
    t, E = np.asarray(t, float), np.asarray(E, float)
    ok = (t > 0) & (E > 0) & np.isfinite(E)
    t, E = t[ok], E[ok]
    if not (t_lo > 0 and t_hi > t_lo):
        raise ValueError(f"t_lo: expected 0 < t_lo < t_hi, found t_lo = {t_lo}, t_hi = {t_hi}")
    if t_lo < t[0] or t_hi > t[-1]:
        raise ValueError(f"t_hi: the window [{t_lo:.4g}, {t_hi:.4g}] is not inside the logged range "
                         f"[{t[0]:.4g}, {t[-1]:.4g}]")
    inside = np.count_nonzero((t >= t_lo) & (t <= t_hi))
    if inside < 8:
        raise ValueError(f"t: only {inside} logged points inside the window [{t_lo:.4g}, {t_hi:.4g}]; need >= 8")
    u = np.linspace(np.log(t_lo), np.log(t_hi), grid)
    v = np.interp(u, np.log(t), np.log(E))
    slope, se = _ols(u, v)
    local = []
    for part in np.array_split(np.arange(grid), pieces):
        local.append(-_ols(u[part], v[part])[0])
    return PowerLawFit(float(-slope), se, float(np.std(local, ddof=1)) if pieces > 1 else 0.0, float(t_lo),
                       float(t_hi), int(inside), tuple(float(x) for x in local))
