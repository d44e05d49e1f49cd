"""Linear student of the BBP teacher–student setting (docs/theory.md §3).

    f(x) = W x,   W ∈ R^{N×M},   x ∈ R^M,   output f ∈ R^N.

Registry name ``"linear"``; ``input_dim`` = M, ``output_dim`` = N (aspect ratio r = N/M).
Parameter ``W`` (N, M). Initialisation: W_0 entries ~ N(0, σ_W²/M) with σ_W = ``init_scale``,
exactly the docs/theory.md §3 initial condition. With ``loss="half_mse"`` and x ~ N(0, I_M) the
population gradient step is W ← W − ε (W − W*) (docs/theory.md §3, population gradient descent).
"""

from __future__ import annotations

import numpy as np

from shockflow.models.base import Model, check_positive_int, parameter_gradient
from shockflow.models.registry import register

__all__ = ["LinearStudent"]


@register
class LinearStudent(Model):
    """f(x) = W x; inputs X of shape (n, input_dim), outputs (n, output_dim)."""

    name = "linear"

    def __init__(
        self,
        input_dim: int,
        output_dim: int = 1,
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self.input_dim = check_positive_int("input_dim", input_dim)
        rng = self._setup(input_shape=(self.input_dim,), output_dim=output_dim, loss=loss,
                          init_scale=init_scale, seed=seed,
                          config=dict(input_dim=input_dim, output_dim=output_dim))
        self.params["W"] = rng.normal(0.0, self.init_scale / np.sqrt(self.input_dim),
                                      size=(self.output_dim, self.input_dim))

    def init_moments(self):
        return {"W": (0.0, self.init_scale / np.sqrt(self.input_dim))}

    def linear_map_available(self) -> bool:
        return True

    def linear_map(self, P):
        return P["W"]

    def _forward(self, X):
        return X @ self.params["W"].T, X

    def _backward(self, cache, G, per_sample):
        return {"W": parameter_gradient("no,nm->om", G, cache, per_sample=per_sample)}
