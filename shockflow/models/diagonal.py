"""Diagonal linear networks (docs/theory.md §2 table, diagonal linear net row).

``form="u2"`` (default):  f(x) = Σ_k x_k u_k² / 4,   structure matrix A(x) = Diag(x)/4.
``form="uv"``:            f(x) = Σ_k x_k u_k v_k   (the u ⊙ v parametrisation).

Inputs X of shape (n, input_dim). Parameters ``u`` (d,) and, for ``uv``, ``v`` (d,).
Initialisation (ε = ``init_scale``): ``init="normal"``: entries ~ N(0, ε²);
``init="constant"``: every entry equals ε (the usual small-initialisation start u_0 = ε 1).
"""

from __future__ import annotations

import numpy as np

from shockflow.models.base import Model, check_choice, check_positive_int, parameter_gradient
from shockflow.models.registry import register

__all__ = ["DiagonalLinear"]


@register
class DiagonalLinear(Model):
    """f(x) = Σ_k x_k u_k²/4 (or Σ_k x_k u_k v_k); X of shape (n, input_dim)."""

    name = "diagonal"

    def __init__(
        self,
        input_dim: int,
        form: str = "u2",
        init: str = "normal",
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self.input_dim = check_positive_int("input_dim", input_dim)
        self.form = check_choice("form", form, ("u2", "uv"))
        self.init = check_choice("init", init, ("normal", "constant"))
        rng = self._setup(input_shape=(self.input_dim,), output_dim=1, loss=loss, init_scale=init_scale,
                          seed=seed, config=dict(input_dim=input_dim, form=form, init=init))
        names = ("u",) if self.form == "u2" else ("u", "v")
        for name in names:
            if self.init == "normal":
                self.params[name] = rng.normal(0.0, self.init_scale, size=self.input_dim)
            else:
                self.params[name] = np.full(self.input_dim, self.init_scale)

    def init_moments(self):
        m = (self.init_scale, 0.0) if self.init == "constant" else (0.0, self.init_scale)
        return {name: m for name in self.params}

    def effective_weights(self) -> np.ndarray:
        """β with f(x) = β·x: u²/4 or u ⊙ v."""
        u = self.params["u"]
        return u * u / 4.0 if self.form == "u2" else u * self.params["v"]

    def linear_map_available(self) -> bool:
        return True

    def linear_map(self, P):
        u = P["u"]
        beta = u * u / 4.0 if self.form == "u2" else u * P["v"]
        return beta[:, None, :]

    def _forward(self, X):
        beta = self.effective_weights()
        return (X @ beta)[:, None], X

    def _backward(self, cache, G, per_sample):
        X = cache
        gx = parameter_gradient("n,nk->k", G[:, 0], X, per_sample=per_sample)
        u = self.params["u"]
        if self.form == "u2":
            return {"u": gx * u / 2.0}
        return {"u": gx * self.params["v"], "v": gx * u}
