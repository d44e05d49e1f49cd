"""Exact test error of the trace model for Gaussian inputs (docs/theory.md §4), and its Monte Carlo check.

For x ~ N(0, I_d) and symmetric M, Tr[M Z] = (xᵀ M x − Tr M)/√d has mean 0 and, by Isserlis,
Var(xᵀ M x) = 2 Tr M², so

    E[(Tr[(Ŝ − S*) Z])²] = 2 ‖Ŝ − S*‖_F² / d                 (excess error, ``excess_error``)
    E[(Tr[Ŝ Z] − y)²]     = 2 ‖Ŝ − S*‖_F² / d + Δ             (``test_mse``: with label noise)

Convention: the error reported by the scaling study is the excess error (the noise floor Δ is
irreducible and would hide the power laws); both are returned by the sweeps.
"""

from __future__ import annotations

import numbers

import numpy as np

from shockflow.scaling.target import Target, sample_data

__all__ = ["excess_error", "test_mse", "monte_carlo_test_mse"]


def _check_pair(S_hat, S_star) -> tuple[np.ndarray, np.ndarray]:
    S_hat = np.asarray(S_hat, dtype=np.float64)
    S_star = np.asarray(S_star, dtype=np.float64)
    if S_hat.ndim != 2 or S_hat.shape[0] != S_hat.shape[1]:
        raise ValueError(f"S_hat: expected a square matrix, found shape {S_hat.shape}")
    if S_star.shape != S_hat.shape:
        raise ValueError(f"S_star: expected shape {S_hat.shape} like S_hat, found {S_star.shape}")
    return S_hat, S_star


def excess_error(S_hat: np.ndarray, S_star: np.ndarray) -> float:
    """2 ‖sym(Ŝ) − sym(S*)‖_F² / d (only the symmetric part of a matrix enters Tr[M Z])."""
    S_hat, S_star = _check_pair(S_hat, S_star)
    M = S_hat - S_star
    M = 0.5 * (M + M.T)
    return float(2.0 * np.sum(M * M) / S_hat.shape[0])


def test_mse(S_hat: np.ndarray, target: Target) -> float:
    """E[(Tr[Ŝ Z] − y)²] = excess error + Δ."""
    return excess_error(S_hat, target.matrix) + target.noise


def monte_carlo_test_mse(S_hat: np.ndarray, target: Target, n_samples: int = 100_000, seed: int = 12345,
                         batch: int = 20_000) -> tuple[float, float]:
    """Sample mean of (Tr[Ŝ Z] − y)² over fresh Gaussian inputs and noisy labels, and its
    standard error (batched, so memory stays at ``batch`` × d)."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 2:
        raise ValueError(f"n_samples: expected an integer >= 2, found {n_samples!r}")
    S_hat = np.asarray(S_hat, dtype=np.float64)
    if S_hat.shape != (target.d, target.d):
        raise ValueError(f"S_hat: expected shape ({target.d}, {target.d}), found {S_hat.shape}")
    S_sym = 0.5 * (S_hat + S_hat.T)
    tr = np.trace(S_sym)
    total, total_sq, done, k = 0.0, 0.0, 0, 0
    while done < n_samples:
        m = min(batch, n_samples - done)
        X, y = sample_data(target, m, seed=int(seed) * 1_000_003 + k)
        f = (np.einsum("ij,ij->i", X @ S_sym, X) - tr) / np.sqrt(target.d)
        e = (f - y) ** 2
        total += float(np.sum(e))
        total_sq += float(np.sum(e * e))
        done += m
        k += 1
    mean = total / n_samples
    var = max(total_sq / n_samples - mean * mean, 0.0)
    return mean, float(np.sqrt(var / (n_samples - 1)))
