"""Mixture of experts with a softmax gate (docs/theory.md §2 table, mixture-of-experts row).

    g(x) = softmax(Γ x) ∈ R^K,      f(x) = Σ_{k=1}^K g_k(x) E_k(x).

Experts (``expert=``):

- ``"linear"``: E_k(x) = β_k · x, parameter ``experts`` (K, d);
- ``"mlp"``:    E_k(x) = Σ_j α_{kj} φ(w_{kj} · x), parameters ``expert_W`` (K, h, d) and
  ``expert_a`` (K, h), h = ``expert_width``.

Gate parameter ``gate`` = Γ (K, d). Inputs X of shape (n, input_dim); scalar output.

Initialisation (ε = ``init_scale``): Γ, β, w entries ~ N(0, ε²/d); α ~ N(0, ε²/h).
"""

from __future__ import annotations

import numpy as np

from shockflow.models.activations import get_activation, softmax_in_place
from shockflow.models.base import Model, check_choice, check_positive_int, parameter_gradient
from shockflow.models.registry import register

__all__ = ["MixtureOfExperts"]


@register
class MixtureOfExperts(Model):
    """f(x) = Σ_k softmax(Γx)_k E_k(x) with linear or small-MLP experts."""

    name = "moe"

    def __init__(
        self,
        input_dim: int,
        experts: int,
        expert: str = "linear",
        expert_width: int = 4,
        activation: str = "tanh",
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self.input_dim = check_positive_int("input_dim", input_dim)
        self.num_experts = check_positive_int("experts", experts)
        self.expert = check_choice("expert", expert, ("linear", "mlp"))
        self.expert_width = check_positive_int("expert_width", expert_width)
        self.activation = get_activation(activation)
        rng = self._setup(input_shape=(self.input_dim,), output_dim=1, loss=loss, init_scale=init_scale,
                          seed=seed, config=dict(input_dim=input_dim, experts=experts, expert=expert,
                                                 expert_width=expert_width, activation=activation))
        K, d, h = self.num_experts, self.input_dim, self.expert_width
        s = self.init_scale / np.sqrt(d)
        self.params["gate"] = rng.normal(0.0, s, size=(K, d))
        if self.expert == "linear":
            self.params["experts"] = rng.normal(0.0, s, size=(K, d))
        else:
            self.params["expert_W"] = rng.normal(0.0, s, size=(K, h, d))
            self.params["expert_a"] = rng.normal(0.0, self.init_scale / np.sqrt(h), size=(K, h))

    def init_moments(self):
        s = self.init_scale / np.sqrt(self.input_dim)
        if self.expert == "linear":
            return {"gate": (0.0, s), "experts": (0.0, s)}
        return {"gate": (0.0, s), "expert_W": (0.0, s),
                "expert_a": (0.0, self.init_scale / np.sqrt(self.expert_width))}

    def gate_weights(self, X: np.ndarray) -> np.ndarray:
        """g(x) of shape (n, K)."""
        return softmax_in_place(self._check_inputs(X) @ self.params["gate"].T)

    def _forward(self, X):
        p = self.params
        g = softmax_in_place(X @ p["gate"].T)
        if self.expert == "linear":
            E, Z, Hh = X @ p["experts"].T, None, None
        else:
            Z = np.einsum("nd,khd->nkh", X, p["expert_W"], optimize=True)
            Hh = self.activation.fn(Z)
            E = np.einsum("nkh,kh->nk", Hh, p["expert_a"], optimize=True)
        f = np.sum(g * E, axis=1)
        return f[:, None], (X, g, E, f, Z, Hh)

    def _backward(self, cache, G, per_sample):
        X, g, E, f, Z, Hh = cache
        w = G[:, 0]
        dE = w[:, None] * g  # ∂f/∂E_k = g_k
        dlogits = w[:, None] * g * (E - f[:, None])  # ∂f/∂(Γx)_k = g_k (E_k − f)
        grads = {"gate": parameter_gradient("nk,nd->kd", dlogits, X, per_sample=per_sample)}
        if self.expert == "linear":
            grads["experts"] = parameter_gradient("nk,nd->kd", dE, X, per_sample=per_sample)
        else:
            a = self.params["expert_a"]
            dZ = dE[:, :, None] * a[None] * self.activation.grad(Z)
            grads["expert_W"] = parameter_gradient("nkh,nd->khd", dZ, X, per_sample=per_sample)
            grads["expert_a"] = parameter_gradient("nk,nkh->kh", dE, Hh, per_sample=per_sample)
        return grads
