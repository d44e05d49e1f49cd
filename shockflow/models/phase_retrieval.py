"""Phase retrieval (docs/theory.md §2 table): f(a) = (w · a)², structure matrix A(a) = a aᵀ.

Inputs X of shape (n, input_dim) (rows are the sensing vectors a). Parameter ``w`` (d,).
Initialisation (ε = ``init_scale``): w entries ~ N(0, ε²/d).
"""

from __future__ import annotations

import numpy as np

from shockflow.models.base import Model, check_positive_int, parameter_gradient
from shockflow.models.registry import register

__all__ = ["PhaseRetrieval"]


@register
class PhaseRetrieval(Model):
    """f(a) = (w·a)²; X of shape (n, input_dim)."""

    name = "phase_retrieval"

    def __init__(self, input_dim: int, loss: str = "half_mse", init_scale: float = 1.0, seed: int = 0):
        self.input_dim = check_positive_int("input_dim", input_dim)
        rng = self._setup(input_shape=(self.input_dim,), output_dim=1, loss=loss, init_scale=init_scale,
                          seed=seed, config=dict(input_dim=input_dim))
        self.params["w"] = rng.normal(0.0, self.init_scale / np.sqrt(self.input_dim), size=self.input_dim)

    def init_moments(self):
        return {"w": (0.0, self.init_scale / np.sqrt(self.input_dim))}

    def _forward(self, X):
        z = X @ self.params["w"]
        return (z * z)[:, None], (X, z)

    def _backward(self, cache, G, per_sample):
        X, z = cache
        return {"w": parameter_gradient("n,nd->d", 2.0 * G[:, 0] * z, X, per_sample=per_sample)}
