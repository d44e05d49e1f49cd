"""The 1-D Fourier grid of docs/theory.md §2 (Fourier-feature MLP): x on [0, 1), target Σ_k b_k ψ_k(x).

x_j = j/n (j = 0..n-1, a uniform grid, or seeded uniform samples with ``grid=False``),
ψ_k(x) = sqrt(2) cos(2π k x), b_k = k^{-β}, k = 1..K. On the uniform grid the ψ_k with
1 ≤ k < n/2 are orthonormal under the empirical mean, so the excess loss of a fit splits over
modes; K must be < n/2 for that (checked).
"""

from __future__ import annotations

import numpy as np

from .dataset import Dataset

__all__ = ["fourier_grid", "fourier_basis"]


def fourier_basis(x: np.ndarray, n_modes: int) -> np.ndarray:
    """ψ_k(x) = sqrt(2) cos(2π k x) for k = 1..n_modes, shape (len(x), n_modes)."""
    k = np.arange(1, int(n_modes) + 1, dtype=np.float64)
    return np.sqrt(2.0) * np.cos(2.0 * np.pi * np.outer(np.ravel(x), k))


def fourier_grid(n: int, n_modes: int, beta: float, *, grid: bool = True, noise: float = 0.0,
                 seed: int = 0) -> Dataset:
    """Inputs X (n, 1) on [0, 1) and targets y = Σ_{k=1}^{K} k^{-β} ψ_k(x) (+ σ ξ)."""
    if int(n) != n or n < 2:
        raise ValueError(f"fourier_grid: n must be an integer >= 2, got {n!r}")
    if int(n_modes) != n_modes or n_modes < 1:
        raise ValueError(f"fourier_grid: n_modes must be a positive integer, got {n_modes!r}")
    if grid and not 2 * n_modes < n:
        raise ValueError(f"fourier_grid: n_modes = {n_modes} must be < n/2 = {n / 2} for the modes "
                         f"to be orthonormal on the grid")
    if not noise >= 0:
        raise ValueError(f"fourier_grid: noise must be >= 0, got {noise!r}")
    rng = np.random.default_rng(seed)
    x = np.arange(int(n)) / n if grid else np.sort(rng.uniform(0.0, 1.0, int(n)))
    b = np.arange(1, int(n_modes) + 1, dtype=np.float64) ** (-float(beta))
    y = fourier_basis(x, n_modes) @ b
    if noise > 0:
        y = y + noise * rng.standard_normal(y.shape)
    spec = {"name": "fourier_grid", "n": int(n), "n_modes": int(n_modes), "beta": float(beta),
            "grid": bool(grid), "noise": float(noise), "seed": int(seed)}
    return Dataset(x[:, None], y, spec)
