"""Two-layer networks with quadratic activation (docs/theory.md §4).

``form="sum"`` (default):   f(x) = Σ_{i=1}^p a_i (w_i · x)²,   trainable W (p, d) and a (p,).

``form="trace"``: the docs/theory.md §4 normalisation with the readout fixed,

    f(x) = Tr[S Z],   Z = (x xᵀ − I)/√d,   S = WᵀW/√(p d)
         = (‖W x‖² − ‖W‖_F²) / (d √p),

with trainable W (p, d) only.

Inputs X of shape (n, input_dim). Initialisation (ε = ``init_scale``):
``sum``: W entries ~ N(0, ε²/d), a ~ N(0, ε²/p); ``trace``: W entries ~ N(0, ε²) (the form
already carries its 1/√(p d) normalisation).
"""

from __future__ import annotations

import numpy as np

from shockflow.models.base import Model, check_choice, check_positive_int, parameter_gradient
from shockflow.models.registry import register

__all__ = ["QuadraticNet"]


@register
class QuadraticNet(Model):
    """f(x) = Σ_i a_i (w_i·x)² or Tr[S Z] (``form="trace"``); X of shape (n, input_dim)."""

    name = "quadratic"

    def __init__(
        self,
        input_dim: int,
        width: int,
        form: str = "sum",
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self.input_dim = check_positive_int("input_dim", input_dim)
        self.width = check_positive_int("width", width)
        self.form = check_choice("form", form, ("sum", "trace"))
        rng = self._setup(input_shape=(self.input_dim,), output_dim=1, loss=loss, init_scale=init_scale,
                          seed=seed, config=dict(input_dim=input_dim, width=width, form=form))
        p, d = self.width, self.input_dim
        std = self.init_moments()
        self.params["W"] = rng.normal(0.0, std["W"][1], size=(p, d))
        if self.form == "sum":
            self.params["a"] = rng.normal(0.0, std["a"][1], size=p)

    def init_moments(self):
        if self.form == "trace":
            return {"W": (0.0, self.init_scale)}
        return {"W": (0.0, self.init_scale / np.sqrt(self.input_dim)),
                "a": (0.0, self.init_scale / np.sqrt(self.width))}

    def gram(self) -> np.ndarray:
        """S = WᵀW/√(p d) of the trace form (d × d)."""
        W = self.params["W"]
        return W.T @ W / np.sqrt(self.width * self.input_dim)

    def _trace_scale(self) -> float:
        return 1.0 / (self.input_dim * np.sqrt(self.width))

    def _forward(self, X):
        W = self.params["W"]
        U = X @ W.T  # (n, p): w_i · x
        if self.form == "sum":
            F = (U * U) @ self.params["a"]
        else:
            F = self._trace_scale() * (np.sum(U * U, axis=1) - np.sum(W * W))
        return F[:, None], (X, U)

    def _backward(self, cache, G, per_sample):
        X, U = cache
        g = G[:, 0]
        W = self.params["W"]
        if self.form == "sum":
            a = self.params["a"]
            return {
                "W": parameter_gradient("n,np,nd->pd", 2.0 * g, U * a, X, per_sample=per_sample),
                "a": parameter_gradient("n,np->p", g, U * U, per_sample=per_sample),
            }
        c = 2.0 * self._trace_scale()
        dW = parameter_gradient("n,np,nd->pd", g, U, X, per_sample=per_sample)
        dW = dW - parameter_gradient("n,pd->pd", g, W, per_sample=per_sample)
        return {"W": c * dW}
