"""Outlier eigenvalues above a fitted bulk edge, with a Tracy–Widom margin (docs/theory.md §3).

An eigenvalue of X = W Wᵀ (W ∈ R^{N×M}) is an outlier when it exceeds

    threshold = μ_{N,M}(σ̂²) + q_level · s_{N,M}(σ̂²),

μ and s the finite-size TW centring and scale of :mod:`.tracy_widom` at the fitted variance σ̂²
(μ → λ₊ and s ~ N^{-2/3}), q_level the TW₁ quantile: a pure-noise spectrum of size N produces a
false outlier with probability ≈ 1 − level, at every N. A fixed margin would instead be far too
wide at large N or too narrow at small N.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bulk_fit import BulkFit
from .tracy_widom import tw1_quantile, wishart_edge_location, wishart_edge_scale

__all__ = ["Outliers", "detect_outliers", "outlier_threshold"]


@dataclass(frozen=True)
class Outliers:
    """Eigenvalues above ``threshold`` in decreasing order, their indices in the input array."""

    values: np.ndarray
    indices: np.ndarray
    threshold: float
    edge: float
    tw_scale: float
    level: float

    @property
    def count(self) -> int:
        return int(self.values.size)

    def to_dict(self) -> dict:
        return {"values": self.values.tolist(), "indices": self.indices.tolist(), "count": self.count,
                "threshold": self.threshold, "edge": self.edge, "tw_scale": self.tw_scale,
                "level": self.level}


def outlier_threshold(fit: BulkFit, N: int, level: float = 0.99) -> tuple[float, float]:
    """(threshold, TW scale) for an N×N Gram spectrum with the fitted bulk ``fit``."""
    M = max(2, int(round(N / fit.ratio)))
    s = wishart_edge_scale(N, M, fit.sigma2)
    return wishart_edge_location(N, M, fit.sigma2) + tw1_quantile(level) * s, s


def detect_outliers(eigenvalues, fit: BulkFit, level: float = 0.99) -> Outliers:
    """The eigenvalues of W Wᵀ above the TW threshold of the fitted bulk ``fit``."""
    ev = np.asarray(eigenvalues, dtype=np.float64)
    if ev.ndim != 1:
        raise ValueError(f"eigenvalues: expected a 1-D array, found shape {ev.shape}")
    if not isinstance(fit, BulkFit):
        raise TypeError(f"fit: expected a BulkFit from fit_bulk, found {type(fit).__name__}")
    thr, s = outlier_threshold(fit, ev.size, level)
    idx = np.flatnonzero(ev > thr)
    idx = idx[np.argsort(-ev[idx])]
    return Outliers(values=ev[idx], indices=idx, threshold=float(thr), edge=fit.lambda_plus,
                    tw_scale=float(s), level=float(level))
