"""Power-law fits on log-log data with a stated window and a bootstrap over seeds.

A fit is ordinary least squares of log E = log C + α log x over the points whose x lies in a
window [x_lo, x_hi]. The window comes from a stated rule, never from the data being fitted:
:func:`regime_window` turns the regime boundaries of docs/theory.md §4 into an interval with a margin
factor m (default 4: "≪" read as "at least a factor 4 away"):

    data-limited   1 ≪ n_eff ≪ d      →  n_eff ∈ [m, d/m]   (with m ≥ 2 this also excludes
                                          the interpolation peak near n_eff ≈ d/2)
    large-sample   n_eff ≫ d          →  n_eff ∈ [m d, ∞)
    width-limited  p ≪ p* ~ n_eff^{1/(2γ)}, 1 ≪ p  → p ∈ [2, p*/m] (p* computed with the
                                          given n_eff)

The uncertainty is a bootstrap over seeds: the seed rows of the error table are resampled with
replacement, averaged, and refitted; the reported interval is the 16–84 % range and the
standard deviation of the bootstrap exponents. Fewer than 3 points in the window (or fewer
than 2 seeds for a bootstrap) is an error naming the window and what was found.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["PowerLawFit", "fit_power_law", "bootstrap_exponent", "regime_window"]


@dataclass(frozen=True)
class PowerLawFit:
    """E ≈ prefactor · x^exponent on ``window``; bootstrap fields are NaN without seeds."""

    exponent: float
    prefactor: float
    window: tuple[float, float]
    n_points: int
    rms_log_residual: float
    exponent_std: float = float("nan")
    exponent_lo: float = float("nan")     # 16th percentile of the bootstrap
    exponent_hi: float = float("nan")     # 84th percentile of the bootstrap
    n_seeds: int = 1

    def as_dict(self) -> dict:
        return {"exponent": self.exponent, "prefactor": self.prefactor, "window": list(self.window),
                "n_points": self.n_points, "rms_log_residual": self.rms_log_residual,
                "exponent_std": self.exponent_std, "exponent_lo": self.exponent_lo,
                "exponent_hi": self.exponent_hi, "n_seeds": self.n_seeds}


def _select(x, E, window):
    x = np.asarray(x, dtype=np.float64).ravel()
    E = np.asarray(E, dtype=np.float64)
    if E.shape[-1] != x.size:
        raise ValueError(f"errors: expected last axis of length {x.size} (one value per x), found shape {E.shape}")
    lo, hi = float(window[0]), float(window[1])
    if not (lo > 0 and hi >= lo):
        raise ValueError(f"window: expected 0 < lo <= hi, found ({lo}, {hi})")
    mask = (x >= lo * (1 - 1e-12)) & (x <= hi * (1 + 1e-12))
    if np.count_nonzero(mask) < 3:
        raise ValueError(f"window: a power-law fit needs at least 3 points in [{lo:g}, {hi:g}]; found "
                         f"{np.count_nonzero(mask)} of x = {np.array2string(x, precision=4)} "
                         "(sample sizes too small for the requested fit window)")
    if np.any(x[mask] <= 0):
        raise ValueError("x: power-law fits need x > 0 in the window")
    return x[mask], E[..., mask]


def _ols(logx, logE):
    A = np.column_stack([np.ones_like(logx), logx])
    coef, *_ = np.linalg.lstsq(A, logE, rcond=None)
    return coef


def fit_power_law(x, errors, window) -> PowerLawFit:
    """Least-squares fit of log(errors) against log(x) on the points with x in ``window``."""
    xs, E = _select(x, errors, window)
    if E.ndim != 1:
        raise ValueError(f"errors: expected a 1-D array for fit_power_law, found shape {E.shape}")
    if np.any(~np.isfinite(E)) or np.any(E <= 0):
        raise ValueError("errors: power-law fits need finite errors > 0 in the window")
    lx, lE = np.log(xs), np.log(E)
    c0, c1 = _ols(lx, lE)
    res = lE - (c0 + c1 * lx)
    return PowerLawFit(exponent=float(c1), prefactor=float(np.exp(c0)), window=(float(window[0]), float(window[1])),
                       n_points=int(xs.size), rms_log_residual=float(np.sqrt(np.mean(res**2))))


def bootstrap_exponent(x, errors_by_seed, window, n_boot: int = 2000, seed: int = 0) -> PowerLawFit:
    """Fit the seed-mean errors; bootstrap the exponent by resampling seeds (rows) with replacement."""
    E = np.asarray(errors_by_seed, dtype=np.float64)
    if E.ndim != 2 or E.shape[0] < 2:
        raise ValueError(f"errors_by_seed: expected a (seeds, points) table with at least 2 seeds, found shape {E.shape}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, numbers.Integral) or n_boot < 10:
        raise ValueError(f"n_boot: expected an integer >= 10, found {n_boot!r}")
    base = fit_power_law(x, E.mean(axis=0), window)
    xs, Ew = _select(x, E, window)
    lx = np.log(xs)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, E.shape[0], size=(n_boot, E.shape[0]))
    means = Ew[idx].mean(axis=1)                      # (n_boot, points)
    A = np.column_stack([np.ones_like(lx), lx])
    coef, *_ = np.linalg.lstsq(A, np.log(means).T, rcond=None)
    slopes = coef[1]
    return PowerLawFit(exponent=base.exponent, prefactor=base.prefactor, window=base.window,
                       n_points=base.n_points, rms_log_residual=base.rms_log_residual,
                       exponent_std=float(np.std(slopes, ddof=1)),
                       exponent_lo=float(np.percentile(slopes, 16)), exponent_hi=float(np.percentile(slopes, 84)),
                       n_seeds=int(E.shape[0]))


def regime_window(regime: str, d: int, *, margin: float = 4.0, gamma: float | None = None,
                  n_eff: float | None = None) -> tuple[float, float]:
    """The fit window of a regime by the stated rule (module docstring).

    Returns an interval in n_eff for "data" and "large_sample", in p for "width".
    """
    if not (isinstance(margin, numbers.Real) and margin >= 1):
        raise ValueError(f"margin: expected a number >= 1, found {margin!r}")
    if regime == "data":
        return (margin, d / margin)
    if regime == "large_sample":
        return (margin * d, np.inf)
    if regime == "width":
        if gamma is None or n_eff is None:
            raise ValueError("regime_window('width'): needs gamma and n_eff to place p* ~ n_eff^{1/(2γ)}")
        return (2.0, max(2.0, n_eff ** (1.0 / (2.0 * gamma)) / margin))
    raise ValueError(f"regime: unknown value {regime!r}; valid values: data, large_sample, width")
