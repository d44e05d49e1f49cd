"""Fit a Marchenko–Pastur bulk to an observed spectrum, robustly to outliers (docs/theory.md §3).

Given the N eigenvalues of X = W Wᵀ, find σ² (and the aspect ratio r = N/M if it is not given)
such that the bulk of the spectrum follows MP(r, σ²) of :mod:`.marchenko_pastur`.

Method (quantile matching). Sort the eigenvalues of the continuous part, λ_(1) ≤ … ≤ λ_(n),
and compare them with the MP quantiles q_i(r) = Q_r((i − ½)/n) at unit variance. Since
Q_{r,σ²} = σ² Q_{r,1}, for a fixed r the least-squares scale over the kept order statistics is

    σ̂²(r) = Σ λ_(i) q_i(r) / Σ q_i(r)²,

and an unknown r minimises the remaining residual (bounded scalar search on 0 < r ≤ 1; a rank
deficiency, i.e. exact zero eigenvalues, fixes r = N / rank instead). Only the order statistics
between the ``trim_bottom`` and ``1 − trim_top`` fractions enter, so a few outliers (which sit
above the edge and are at most a fraction ``trim_top`` of the spectrum) cannot bias the fit:
they only replace order statistics that are never used.

A fit that cannot be trusted raises :class:`BulkFitError` (too few eigenvalues, a ratio at the
bound of the search, non-positive scale, a residual that says the spectrum is not MP-shaped)
instead of returning numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from .marchenko_pastur import check_ratio, mp_cdf, mp_edges, mp_quantile

__all__ = ["BulkFit", "BulkFitError", "fit_bulk", "MIN_EIGENVALUES"]

MIN_EIGENVALUES = 16      # fewer than this many kept order statistics: no fit
_R_MIN = 1e-3


class BulkFitError(ValueError):
    """A Marchenko–Pastur fit failed or cannot be trusted; the message says why."""


@dataclass(frozen=True)
class BulkFit:
    """Result of :func:`fit_bulk`.

    sigma2        fitted entry variance σ² (W entries have variance σ²/M)
    ratio         aspect ratio r = N/M (given or fitted)
    ratio_fitted  True if r was estimated from the spectrum
    lambda_minus, lambda_plus   bulk edges σ²(1 ∓ √r)²
    n_used        order statistics used by the fit
    residual      relative RMS residual of the quantile match (dimensionless)
    ks_distance   sup |F_emp − F_MP| over the kept window (continuous part)
    """

    sigma2: float
    ratio: float
    ratio_fitted: bool
    lambda_minus: float
    lambda_plus: float
    n_used: int
    residual: float
    ks_distance: float

    def to_dict(self) -> dict:
        return {"sigma2": self.sigma2, "ratio": self.ratio, "ratio_fitted": self.ratio_fitted,
                "lambda_minus": self.lambda_minus, "lambda_plus": self.lambda_plus,
                "n_used": self.n_used, "residual": self.residual, "ks_distance": self.ks_distance}


def _check_eigenvalues(eigenvalues) -> np.ndarray:
    ev = np.asarray(eigenvalues, dtype=np.float64)
    if ev.ndim != 1:
        raise ValueError(f"eigenvalues: expected a 1-D array of eigenvalues, found shape {ev.shape}")
    if not np.all(np.isfinite(ev)):
        raise ValueError("eigenvalues: contains NaN or inf")
    scale = np.max(np.abs(ev)) if ev.size else 0.0
    if ev.size and np.min(ev) < -1e-8 * max(scale, 1e-300):
        raise ValueError(f"eigenvalues: a Gram matrix W Wᵀ has non-negative eigenvalues, found "
                         f"min {np.min(ev):.3g}")
    return np.sort(np.clip(ev, 0.0, None))


def _window(n: int, trim_bottom: float, trim_top: float) -> np.ndarray:
    lo = int(np.floor(trim_bottom * n))
    hi = int(np.ceil((1.0 - trim_top) * n))
    return np.arange(lo, hi)


def _scale_and_residual(lam: np.ndarray, p: np.ndarray, r: float) -> tuple[float, float]:
    q = mp_quantile(p, r, 1.0)
    s2 = float(np.dot(lam, q) / np.dot(q, q))
    res = float(np.sqrt(np.mean((lam - s2 * q) ** 2)) / np.mean(lam))
    return s2, res


def fit_bulk(eigenvalues, ratio: float | None = None, *, trim_top: float = 0.1,
             trim_bottom: float = 0.02, max_residual: float = 0.1) -> BulkFit:
    """Fit MP(r, σ²) to the eigenvalues of W Wᵀ (see the module docstring).

    Parameters
    ----------
    eigenvalues : the N eigenvalues of X = W Wᵀ (any order).
    ratio : r = N/M if known; ``None`` estimates it (from the rank if X is rank deficient).
    trim_top, trim_bottom : fractions of the continuous part left out at the top (outliers,
        edge fluctuations) and at the bottom.
    max_residual : a relative RMS quantile residual above this means the bulk is not MP-shaped
        and the fit is refused.
    """
    lam_all = _check_eigenvalues(eigenvalues)
    N = lam_all.size
    if not (0.0 <= trim_bottom < 0.5 and 0.0 <= trim_top < 0.5):
        raise ValueError(f"trim_bottom, trim_top: expected fractions in [0, 0.5), found "
                         f"{trim_bottom}, {trim_top}")
    if N == 0 or lam_all[-1] <= 0.0:
        raise BulkFitError(f"eigenvalues: need a non-zero spectrum to fit a bulk, found {N} "
                           f"eigenvalues, all zero")
    zero_tol = 1e-10 * lam_all[-1] * N
    n_zero = int(np.sum(lam_all <= zero_tol))
    ratio_fitted = ratio is None
    if ratio is not None:
        r = check_ratio(ratio)
        n_atom = int(round(N * max(0.0, 1.0 - 1.0 / r)))
        if n_zero < n_atom:
            raise ValueError(f"ratio: r = {r:g} means W Wᵀ (N = {N}) has rank M = {N / r:.0f} and "
                             f"{n_atom} zero eigenvalues, but only {n_zero} eigenvalues are zero: "
                             f"the aspect ratio is inconsistent with the matrix")
    elif n_zero > 0:
        n_atom = n_zero
        r = N / (N - n_zero)
    else:
        n_atom, r = 0, None
    lam = lam_all[n_atom:]
    n = lam.size
    idx = _window(n, trim_bottom, trim_top)
    if idx.size < MIN_EIGENVALUES:
        raise BulkFitError(f"eigenvalues: only {idx.size} eigenvalues of the continuous part remain "
                           f"after trimming ({n} in total); at least {MIN_EIGENVALUES} are needed "
                           f"to fit a Marchenko–Pastur bulk")
    p = (idx + 0.5) / n
    lam_w = lam[idx]
    if r is None:
        ratio_fitted = True
        opt = minimize_scalar(lambda rr: _scale_and_residual(lam_w, p, rr)[1],
                              bounds=(_R_MIN, 1.0), method="bounded", options={"xatol": 1e-5})
        r = float(opt.x)
        if r < 2 * _R_MIN:
            raise BulkFitError(f"fit_bulk: the fitted aspect ratio ran to the lower bound r = {r:.2g}; "
                               f"the spectrum is too narrow to identify r (pass ratio=N/M)")
    s2, res = _scale_and_residual(lam_w, p, r)
    if not (np.isfinite(s2) and s2 > 0):
        raise BulkFitError(f"fit_bulk: fitted variance σ² = {s2} is not positive")
    if res > max_residual:
        raise BulkFitError(f"fit_bulk: the spectrum is not Marchenko–Pastur shaped (relative quantile "
                           f"residual {res:.3g} > max_residual = {max_residual}; r = {r:.4g}, "
                           f"σ² = {s2:.4g})")
    lo, hi = mp_edges(r, s2)
    # KS distance of the continuous part over the kept window
    atom = max(0.0, 1.0 - 1.0 / r)
    F = (mp_cdf(lam_w, r, s2) - atom) / (1.0 - atom)
    ks = float(max(np.max(np.abs(F - (idx + 1.0) / n)), np.max(np.abs(F - idx / n))))
    return BulkFit(sigma2=s2, ratio=float(r), ratio_fitted=ratio_fitted, lambda_minus=float(lo),
                   lambda_plus=float(hi), n_used=int(idx.size), residual=res, ks_distance=ks)
