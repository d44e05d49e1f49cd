"""Convolutional networks with global sum pooling (docs/theory.md §2 table, CNN row).

For patches x_p (valid positions, stride 1) and output channels c = 1..C_out:

    h_{p,c} = φ(K_c · x_p + b_c),     f_o(x) = Σ_c a_{oc} Σ_p h_{p,c}.

The pooling is a SUM over patches, so the quadratic-form structure matrix uses Σ_p x_p
(docs/theory.md §2). Convolution is cross-correlation (no kernel flip), as in deep-learning libraries.

``cnn1d``: X of shape (n, length, in_channels); kernel ``K`` of shape
(out_channels, kernel_size, in_channels); patches x_p = X[p : p + kernel_size, :].

``cnn2d``: X of shape (n, height, width, in_channels) (channels last); kernel ``K`` of shape
(out_channels, kh, kw, in_channels); patches x_p = X[i : i + kh, j : j + kw, :].

Other parameters: ``b`` (out_channels,) if ``bias=True``; ``a`` of shape (out_channels,) for a
scalar output, (output_dim, out_channels) otherwise.

Initialisation (ε = ``init_scale``): K entries ~ N(0, ε²/(kernel volume · in_channels)),
a ~ N(0, ε²/out_channels), b = 0.
"""

from __future__ import annotations

import numbers
from typing import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from shockflow.models.activations import get_activation
from shockflow.models.base import Model, check_positive_int, parameter_gradient
from shockflow.models.registry import register

__all__ = ["ConvNet1D", "ConvNet2D"]


def _check_sizes(name: str, value, ndim: int) -> tuple[int, ...]:
    if ndim == 1:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return (check_positive_int(name, value),)
        if isinstance(value, (list, tuple)) and len(value) == 1:
            return (check_positive_int(f"{name}[0]", value[0]),)
        raise TypeError(f"{name}: expected a positive integer, found {value!r}")
    if not isinstance(value, (list, tuple)) or len(value) != ndim:
        raise TypeError(f"{name}: expected a pair of positive integers, found {value!r}")
    return tuple(check_positive_int(f"{name}[{i}]", v) for i, v in enumerate(value))


class _ConvNet(Model):
    """Shared implementation: patches flattened to (n, P, kernel volume · in_channels)."""

    spatial_dims: int

    def _build(self, input_size, in_channels, out_channels, kernel_size, activation, bias,
               output_dim, loss, init_scale, seed, config):
        nd = self.spatial_dims
        self.input_size = _check_sizes("input_size", input_size, nd)
        self.kernel_size = _check_sizes("kernel_size", kernel_size, nd)
        self.in_channels = check_positive_int("in_channels", in_channels)
        self.out_channels = check_positive_int("out_channels", out_channels)
        for i, (s, k) in enumerate(zip(self.input_size, self.kernel_size)):
            if k > s:
                raise ValueError(
                    f"kernel_size: expected at most input_size along axis {i} ({s}), found {k}"
                )
        self.activation = get_activation(activation)
        self.bias = bool(bias)
        rng = self._setup(input_shape=(*self.input_size, self.in_channels), output_dim=output_dim,
                          loss=loss, init_scale=init_scale, seed=seed, config=config)
        self.patch_dim = int(np.prod(self.kernel_size)) * self.in_channels
        self.num_patches = int(np.prod([s - k + 1 for s, k in zip(self.input_size, self.kernel_size)]))
        self.params["K"] = rng.normal(0.0, self.init_scale / np.sqrt(self.patch_dim),
                                      size=(self.out_channels, *self.kernel_size, self.in_channels))
        if self.bias:
            self.params["b"] = np.zeros(self.out_channels)
        a_shape = (self.out_channels,) if self.output_dim == 1 else (self.output_dim, self.out_channels)
        self.params["a"] = rng.normal(0.0, self.init_scale / np.sqrt(self.out_channels), size=a_shape)

    def init_moments(self):
        moments = {"K": (0.0, self.init_scale / np.sqrt(self.patch_dim)),
                   "a": (0.0, self.init_scale / np.sqrt(self.out_channels))}
        if self.bias:
            moments["b"] = (0.0, 0.0)
        return moments

    def patches(self, X: np.ndarray) -> np.ndarray:
        """Patches of shape (n, P, patch_dim), each flattened in the layout of ``K[c]``."""
        X = np.asarray(X, dtype=np.float64)
        nd = self.spatial_dims
        axes = tuple(range(1, nd + 1))
        win = sliding_window_view(X, self.kernel_size, axis=axes)
        # win: (n, *positions, C_in, *kernel) -> (n, *positions, *kernel, C_in)
        order = (0, *range(1, nd + 1), *range(nd + 2, 2 * nd + 2), nd + 1)
        win = win.transpose(order)
        return win.reshape(X.shape[0], self.num_patches, self.patch_dim)

    def _forward(self, X):
        p = self.params
        Pt = self.patches(X)
        Kf = p["K"].reshape(self.out_channels, self.patch_dim)
        Z = Pt @ Kf.T  # (n, P, C_out)
        if self.bias:
            Z = Z + p["b"]
        H = self.activation.fn(Z)
        pooled = H.sum(axis=1)  # global sum pooling
        A = p["a"].reshape(self.output_dim, self.out_channels)
        return pooled @ A.T, (Pt, Z, pooled)

    def _backward(self, cache, G, per_sample):
        Pt, Z, pooled = cache
        p = self.params
        A = p["a"].reshape(self.output_dim, self.out_channels)
        lead = (G.shape[0],) if per_sample else ()
        da = parameter_gradient("no,nc->oc", G, pooled, per_sample=per_sample)
        dZ = (G @ A)[:, None, :] * self.activation.grad(Z)
        dK = parameter_gradient("npc,npf->cf", dZ, Pt, per_sample=per_sample)
        grads = {"K": dK.reshape(lead + p["K"].shape)}
        if self.bias:
            grads["b"] = parameter_gradient("npc->c", dZ, per_sample=per_sample)
        grads["a"] = da.reshape(lead + p["a"].shape)
        return grads


@register
class ConvNet1D(_ConvNet):
    """1-D CNN with global sum pooling; X of shape (n, input_size, in_channels)."""

    name = "cnn1d"
    spatial_dims = 1

    def __init__(
        self,
        input_size: int,
        in_channels: int,
        out_channels: int,
        kernel_size: int,
        activation: str = "tanh",
        bias: bool = False,
        output_dim: int = 1,
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self._build(input_size, in_channels, out_channels, kernel_size, activation, bias, output_dim,
                    loss, init_scale, seed,
                    config=dict(input_size=input_size, in_channels=in_channels, out_channels=out_channels,
                                kernel_size=kernel_size, activation=activation, bias=bool(bias),
                                output_dim=output_dim))


@register
class ConvNet2D(_ConvNet):
    """2-D CNN with global sum pooling; X of shape (n, height, width, in_channels)."""

    name = "cnn2d"
    spatial_dims = 2

    def __init__(
        self,
        input_size: Sequence[int],
        in_channels: int,
        out_channels: int,
        kernel_size: Sequence[int],
        activation: str = "tanh",
        bias: bool = False,
        output_dim: int = 1,
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self._build(input_size, in_channels, out_channels, kernel_size, activation, bias, output_dim,
                    loss, init_scale, seed,
                    config=dict(input_size=input_size, in_channels=in_channels, out_channels=out_channels,
                                kernel_size=kernel_size, activation=activation, bias=bool(bias),
                                output_dim=output_dim))
