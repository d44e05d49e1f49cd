"""Deep fully connected networks: deep MLP, deep linear network, two-layer linear network.

Deep MLP (registry name ``"deep_mlp"``) with hidden widths (m_1, …, m_L):

    h_0 = x,   h_l = φ(W_l h_{l−1} + b_l)  (l = 1..L),   f(x) = W_{L+1} h_L.

Deep linear network (``"deep_linear"``, the Saxe et al. setting of docs/theory.md §2): φ = identity,
no biases, f(x) = W_{L+1} ⋯ W_1 x. Two-layer linear network (``"linear2"``): f(x) = W_2 W_1 x.

Parameters: ``W1`` … ``W{L+1}`` with ``W_l`` of shape (m_l, m_{l−1}) (m_0 = d,
m_{L+1} = output_dim), and ``b1`` … ``bL`` of shape (m_l,) when ``bias=True``.

Initialisation (ε = ``init_scale``): every weight entry of W_l ~ N(0, ε²/m_{l−1}) (fan-in),
biases 0.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from shockflow.models.activations import get_activation
from shockflow.models.base import Model, check_positive_int, parameter_gradient
from shockflow.models.registry import register

__all__ = ["DeepMLP", "DeepLinear", "TwoLayerLinear"]


def _check_widths(widths: Sequence[int]) -> tuple[int, ...]:
    if isinstance(widths, (str, bytes)) or not hasattr(widths, "__len__"):
        raise TypeError(f"widths: expected a non-empty list of positive integers, found {widths!r}")
    if len(widths) == 0:
        raise ValueError("widths: expected at least one hidden width, found an empty list")
    return tuple(check_positive_int(f"widths[{i}]", w) for i, w in enumerate(widths))


@register
class DeepMLP(Model):
    """f(x) = W_{L+1} φ(W_L ⋯ φ(W_1 x + b_1) ⋯ + b_L); inputs X of shape (n, input_dim)."""

    name = "deep_mlp"

    def __init__(
        self,
        input_dim: int,
        widths: Sequence[int],
        activation: str = "tanh",
        bias: bool = False,
        output_dim: int = 1,
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self._build(input_dim, widths, activation, bias, output_dim, loss, init_scale, seed,
                    config=dict(input_dim=input_dim, widths=list(widths) if hasattr(widths, "__iter__") else widths,
                                activation=activation, bias=bool(bias), output_dim=output_dim))

    def _build(self, input_dim, widths, activation, bias, output_dim, loss, init_scale, seed, config):
        self.input_dim = check_positive_int("input_dim", input_dim)
        self.widths = _check_widths(widths)
        self.activation = get_activation(activation)
        self.bias = bool(bias)
        rng = self._setup(input_shape=(self.input_dim,), output_dim=output_dim, loss=loss,
                          init_scale=init_scale, seed=seed, config=config)
        self.layer_sizes = (self.input_dim, *self.widths, self.output_dim)
        self.depth = len(self.widths) + 1  # number of weight matrices
        for l in range(1, self.depth + 1):
            fan_in, fan_out = self.layer_sizes[l - 1], self.layer_sizes[l]
            self.params[f"W{l}"] = rng.normal(0.0, self.init_scale / np.sqrt(fan_in), size=(fan_out, fan_in))
            if self.bias and l < self.depth:
                self.params[f"b{l}"] = np.zeros(fan_out)

    def init_moments(self):
        moments = {}
        for l in range(1, self.depth + 1):
            moments[f"W{l}"] = (0.0, self.init_scale / np.sqrt(self.layer_sizes[l - 1]))
            if self.bias and l < self.depth:
                moments[f"b{l}"] = (0.0, 0.0)
        return moments

    def linear_map_available(self) -> bool:
        return self.activation.name == "identity" and not self.bias

    def linear_map(self, P):
        """The end-to-end product ``W_{L+1} ⋯ W_1`` per parameter set (identity activation, no bias)."""
        if not self.linear_map_available():
            return None
        M = P["W1"]
        for l in range(2, self.depth + 1):
            M = np.matmul(P[f"W{l}"], M)
        return M

    def _forward(self, X):
        p = self.params
        hs, zs = [X], []
        h = X
        for l in range(1, self.depth):
            z = h @ p[f"W{l}"].T
            if self.bias:
                z += p[f"b{l}"]
            zs.append(z if self.activation.needs_input else None)
            h = self.activation.forward_owned(z)  # into z itself when the backward needs h only
            hs.append(h)
        F = h @ p[f"W{self.depth}"].T
        return F, (hs, zs)

    def _backward(self, cache, G, per_sample):
        hs, zs = cache
        p = self.params
        L = self.depth
        grads = {f"W{L}": parameter_gradient("no,ni->oi", G, hs[L - 1], per_sample=per_sample)}
        dh = G @ p[f"W{L}"]
        for l in range(L - 1, 0, -1):
            dz = self.activation.scale_by_grad(dh, zs[l - 1], hs[l])  # dh is this pass's own: scaled in place
            grads[f"W{l}"] = parameter_gradient("nj,ni->ji", dz, hs[l - 1], per_sample=per_sample)
            if self.bias:
                grads[f"b{l}"] = parameter_gradient("nj->j", dz, per_sample=per_sample)
            dh = dz @ p[f"W{l}"]
        return {k: grads[k] for k in p}


@register
class DeepLinear(DeepMLP):
    """f(x) = W_{L+1} ⋯ W_1 x; inputs X of shape (n, input_dim)."""

    name = "deep_linear"

    def __init__(
        self,
        input_dim: int,
        widths: Sequence[int],
        output_dim: int = 1,
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self._build(input_dim, widths, "identity", False, output_dim, loss, init_scale, seed,
                    config=dict(input_dim=input_dim, widths=list(widths) if hasattr(widths, "__iter__") else widths,
                                output_dim=output_dim))

    def end_to_end(self) -> np.ndarray:
        """The product W_{L+1} ⋯ W_1 of shape (output_dim, input_dim)."""
        M = self.params["W1"]
        for l in range(2, self.depth + 1):
            M = self.params[f"W{l}"] @ M
        return M


@register
class TwoLayerLinear(DeepLinear):
    """f(x) = W_2 W_1 x with W_1 of shape (hidden, input_dim); inputs X of shape (n, input_dim)."""

    name = "linear2"

    def __init__(
        self,
        input_dim: int,
        hidden: int,
        output_dim: int = 1,
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        hidden = check_positive_int("hidden", hidden)
        self._build(input_dim, [hidden], "identity", False, output_dim, loss, init_scale, seed,
                    config=dict(input_dim=input_dim, hidden=hidden, output_dim=output_dim))
