"""Fourier-feature MLP of the power-law experiment (docs/theory.md §2, end of "Power law").

    f(x) = P^{-1/2} Σ_{k=1}^P W_k tanh(s_k a_k ψ_k(x)),   ψ_k(x) = √2 cos(2π k x),   s_k = k^{-θ}.

Scalar input: X of shape (n, 1). Trainable ``W`` (P,) and ``a`` (P,); θ = ``theta`` is fixed.
Unit k is the pair (a_k, W_k); near zero f ≈ P^{-1/2} Σ_k s_k ψ_k(x) W_k a_k, a quadratic form.

Initialisation (ε = ``init_scale``): ``init="normal"``: W_k, a_k ~ N(0, ε²) independent;
``init="constant"``: W_k = a_k = ε for every k (the z_k(0) ∝ ε initial condition).
"""

from __future__ import annotations

import numbers

import numpy as np

from shockflow.models.activations import get_activation
from shockflow.models.base import Model, check_choice, check_positive_int, parameter_gradient
from shockflow.models.registry import register

__all__ = ["FourierFeatureMLP"]


@register
class FourierFeatureMLP(Model):
    """f(x) = P^{-1/2} Σ_k W_k tanh(k^{-θ} a_k √2 cos 2πkx); X of shape (n, 1)."""

    name = "fourier"

    def __init__(
        self,
        modes: int,
        theta: float = 0.0,
        init: str = "normal",
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self.modes = check_positive_int("modes", modes)
        if isinstance(theta, bool) or not isinstance(theta, numbers.Real) or not np.isfinite(theta):
            raise ValueError(f"theta: expected a finite real number, found {theta!r}")
        self.theta = float(theta)
        self.init = check_choice("init", init, ("normal", "constant"))
        rng = self._setup(input_shape=(1,), output_dim=1, loss=loss, init_scale=init_scale, seed=seed,
                          config=dict(modes=modes, theta=self.theta, init=init))
        k = np.arange(1, self.modes + 1, dtype=np.float64)
        self.activation = get_activation("tanh")   # each pair's unit W_k tanh(s_k a_k ψ_k)
        self.frequencies = k
        self.strengths = k ** (-self.theta)
        P = self.modes
        if self.init == "normal":
            self.params["W"] = rng.normal(0.0, self.init_scale, size=P)
            self.params["a"] = rng.normal(0.0, self.init_scale, size=P)
        else:
            self.params["W"] = np.full(P, self.init_scale)
            self.params["a"] = np.full(P, self.init_scale)

    def init_moments(self):
        if self.init == "constant":
            return {"W": (self.init_scale, 0.0), "a": (self.init_scale, 0.0)}
        return {"W": (0.0, self.init_scale), "a": (0.0, self.init_scale)}

    def features(self, X: np.ndarray) -> np.ndarray:
        """ψ_k(x) = √2 cos(2πkx), shape (n, P)."""
        X = self._check_inputs(X)
        return np.sqrt(2.0) * np.cos(2.0 * np.pi * X * self.frequencies)

    def _forward(self, X):
        psi = np.sqrt(2.0) * np.cos(2.0 * np.pi * X * self.frequencies)  # (n, P)
        sp = self.strengths * psi
        T = self.activation.fn(sp * self.params["a"])
        F = T @ self.params["W"] / np.sqrt(self.modes)
        return F[:, None], (sp, T)

    def _backward(self, cache, G, per_sample):
        sp, T = cache
        g = G[:, 0] / np.sqrt(self.modes)
        W = self.params["W"]
        return {
            "W": parameter_gradient("n,nk->k", g, T, per_sample=per_sample),
            "a": parameter_gradient("n,nk->k", g, W * (1.0 - T * T) * sp, per_sample=per_sample),
        }
