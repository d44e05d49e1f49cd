"""Two-layer perceptrons: the standard-parametrised MLP and the mean-field network.

Two-layer MLP (registry name ``"mlp"``, docs/theory.md §2 table, unit w_i = [u_i; v_i]):

    f_o(x) = Σ_{i=1}^m a_{oi} φ(w_i·x + b_i),        x ∈ R^d, o = 1..output_dim.

Mean-field network (registry name ``"mean_field"``):

    f_o(x) = (1/m) Σ_{i=1}^m a_{oi} φ(w_i·x).

Parameters: ``W`` (m, d); ``b`` (m,) when ``bias=True``; ``a`` of shape (m,) for a scalar
output, (output_dim, m) otherwise.

Initialisation (ε = ``init_scale``):

- ``mlp``: W_ij ~ N(0, ε²/d), a ~ N(0, ε²/m), b = 0; with ``readout = c`` every a_oi = c instead (a soft
  committee machine, f = c Σ_i φ(w_i·x): freeze ``a`` in ``[training] frozen`` to hold it there).
- ``mean_field``: W_ij ~ N(0, ε²/d), a ~ N(0, ε²) (the 1/m sits in the output, not in a).
"""

from __future__ import annotations

import numpy as np

from shockflow.models.activations import get_activation
from shockflow.models.base import Model, check_positive_int, parameter_gradient
from shockflow.models.registry import register

__all__ = ["TwoLayerMLP", "MeanFieldMLP"]


@register
class TwoLayerMLP(Model):
    """f(x) = Σ_i a_i φ(w_i·x + b_i); inputs X of shape (n, input_dim)."""

    name = "mlp"

    def __init__(
        self,
        input_dim: int,
        width: int,
        activation: str = "tanh",
        bias: bool = False,
        output_dim: int = 1,
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
        readout: float | None = None,
    ):
        config = dict(input_dim=input_dim, width=width, activation=activation, bias=bool(bias), output_dim=output_dim)
        if readout is not None:
            if isinstance(readout, bool) or not isinstance(readout, (int, float)) or not np.isfinite(readout):
                raise ValueError(f"readout: expected a finite number (every readout weight's initial value), "
                                 f"got {readout!r}")
            config["readout"] = float(readout)
        self._build(input_dim, width, activation, bias, output_dim, loss, init_scale, seed, config=config)
        if readout is not None:
            self.params["a"][...] = float(readout)

    def _readout_scale(self) -> float:
        return 1.0

    def _readout_std(self) -> float:
        return self.init_scale / np.sqrt(self.width)

    def _build(self, input_dim, width, activation, bias, output_dim, loss, init_scale, seed, config):
        self.input_dim = check_positive_int("input_dim", input_dim)
        self.width = check_positive_int("width", width)
        self.activation = get_activation(activation)
        self.bias = bool(bias)
        rng = self._setup(input_shape=(self.input_dim,), output_dim=output_dim, loss=loss,
                          init_scale=init_scale, seed=seed, config=config)
        m, d = self.width, self.input_dim
        self.params["W"] = rng.normal(0.0, self.init_scale / np.sqrt(d), size=(m, d))
        if self.bias:
            self.params["b"] = np.zeros(m)
        a_shape = (m,) if self.output_dim == 1 else (self.output_dim, m)
        self.params["a"] = rng.normal(0.0, self._readout_std(), size=a_shape)

    def init_moments(self):
        readout = self._config.get("readout")
        moments = {"W": (0.0, self.init_scale / np.sqrt(self.input_dim)),
                   "a": (0.0, self._readout_std()) if readout is None else (readout, 0.0)}
        if self.bias:
            moments["b"] = (0.0, 0.0)
        return moments

    def linear_map_available(self) -> bool:
        return self.activation.name == "identity" and not self.bias

    def linear_map(self, P):
        """``c A W`` per parameter set (identity activation, no bias)."""
        if not self.linear_map_available():
            return None
        A = P["a"].reshape(P["a"].shape[0], self.output_dim, self.width)
        return self._readout_scale() * np.matmul(A, P["W"])

    def _forward(self, X):
        p = self.params
        Z = X @ p["W"].T
        if self.bias:
            Z += p["b"]
        H = self.activation.forward_owned(Z)  # into Z itself when the backward needs H only (tanh, sigmoid)
        A = p["a"].reshape(self.output_dim, self.width)
        F = H @ A.T
        c = self._readout_scale()
        if c != 1.0:
            F *= c
        return F, (X, Z if self.activation.needs_input else None, H)

    def _backward(self, cache, G, per_sample):
        X, Z, H = cache
        p, c = self.params, self._readout_scale()
        A = p["a"].reshape(self.output_dim, self.width)
        grads = {}
        da = c * parameter_gradient("no,nm->om", G, H, per_sample=per_sample)
        dZ = G @ A
        if c != 1.0:
            dZ *= c
        self.activation.scale_by_grad(dZ, Z, H)
        grads["W"] = parameter_gradient("nm,nd->md", dZ, X, per_sample=per_sample)
        if self.bias:
            grads["b"] = parameter_gradient("nm->m", dZ, per_sample=per_sample)
        lead = (X.shape[0],) if per_sample else ()
        grads["a"] = da.reshape(lead + p["a"].shape)
        return grads


@register
class MeanFieldMLP(TwoLayerMLP):
    """f(x) = (1/m) Σ_i a_i φ(w_i·x); inputs X of shape (n, input_dim)."""

    name = "mean_field"

    def __init__(
        self,
        input_dim: int,
        width: int,
        activation: str = "tanh",
        output_dim: int = 1,
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self._build(
            input_dim, width, activation, False, output_dim, loss, init_scale, seed,
            config=dict(input_dim=input_dim, width=width, activation=activation, output_dim=output_dim),
        )

    def _readout_scale(self) -> float:
        return 1.0 / self.width

    def _readout_std(self) -> float:
        return self.init_scale
