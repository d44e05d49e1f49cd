"""Gradient-noise statistics and the SGD temperature (docs/theory.md §1, "Temperature").

From per-sample gradients g_i (i = 1..m, flattened to P coordinates) at the current θ:
  Σ = (1/(m−1)) Σ_i (g_i − ḡ)(g_i − ḡ)^T      (unbiased per-sample gradient covariance)
  tr Σ                                         (total per-sample gradient variance)
  σ_g² = tr Σ / P                              (per-coordinate variance, docs/theory.md §1's σ_g²)
  T = η σ_g² / (2B)                            (the temperature shockflow uses; ν = T/2)
We also store T_trace = η tr Σ/(2B) (= P·T, the isotropic-noise temperature summed over
coordinates) and T_fpc = T·(n−B)/(n−1), the finite-population correction for sampling
without replacement from n samples (it vanishes for full-batch GD, which has no sampling noise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["GradientNoise", "gradient_noise"]


@dataclass(frozen=True)
class GradientNoise:
    trace: float        # tr Σ
    sigma2: float       # tr Σ / P
    temperature: float  # η σ_g² / (2B)
    temperature_trace: float  # η tr Σ / (2B)
    temperature_fpc: float    # T (n − B)/(n − 1)
    n_params: int


def gradient_noise(per_sample_grads: dict[str, np.ndarray], lr: float, batch_size: int,
                   n_total: int) -> GradientNoise:
    """Statistics above from ``model.per_sample_grads`` output ({name: (m, *shape)})."""
    trace = 0.0
    P = 0
    m = None
    for name, G in per_sample_grads.items():
        G = np.asarray(G)
        if m is None:
            m = G.shape[0]
        elif G.shape[0] != m:
            raise ValueError(f"gradient_noise: per-sample gradient {name!r} has {G.shape[0]} rows, expected {m}")
        G2 = G.reshape(m, -1)
        P += G2.shape[1]
        trace += float(np.var(G2, axis=0, ddof=1).sum()) if m > 1 else 0.0
    if m is None or m < 2:
        raise ValueError("gradient_noise: need per-sample gradients of at least 2 samples")
    sigma2 = trace / P
    T = lr * sigma2 / (2.0 * batch_size)
    fpc = (n_total - batch_size) / (n_total - 1) if n_total > 1 else 0.0
    return GradientNoise(trace=trace, sigma2=sigma2, temperature=T,
                         temperature_trace=lr * trace / (2.0 * batch_size),
                         temperature_fpc=T * fpc, n_params=P)
