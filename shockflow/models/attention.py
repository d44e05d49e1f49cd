"""Self-attention models (docs/theory.md §2 table: multi-head attention and the query–key-only head).

Input layout: X of shape (n, tokens, d_model), one row x_t per token; the number of tokens
may vary between calls (it is not fixed at construction).

Multi-head attention (registry name ``"attention"``), heads h = 1..H:

    q_{ht} = W_{Q,h}ᵀ x_t,  k_{hs} = W_{K,h}ᵀ x_s,  V_{hs} = W_{V,h}ᵀ x_s,
    P_{hts} = softmax_s( q_{ht}·k_{hs} / √d_k ),    o_{ht} = Σ_s P_{hts} V_{hs},
    f(x) = (1/T) Σ_t Σ_h v_h · o_{ht}              (mean over tokens, sum over heads).

Parameters ``W_Q``, ``W_K`` (H, d_model, d_k), ``W_V`` (H, d_model, d_v), readout ``v`` (H, d_v).
At W_Q = W_K = 0 the attention is uniform and f = Σ_h v_hᵀ W_{V,h}ᵀ x̄, x̄ = (1/T) Σ_t x_t,
the bilinear coupling of (W_V, v) through x̄ in the docs/theory.md §2 table.

Query–key-only head (``"attention_qk"``): values are the tokens themselves (W_V = I) and the
readout is a fixed vector c ∈ R^{d_model} (``readout``; default c = 1/√d_model · (1, …, 1)):

    f(x) = (1/T) Σ_t Σ_h c · Σ_s P_{hts} x_s.

To second order in (W_Q, W_K): f = H c·x̄ + Σ_h x̄ᵀ W_{Q,h} W_{K,h}ᵀ u / √d_k + O(‖W‖⁴) with
u = Σ_X c, Σ_X = (1/T) Σ_t x_t x_tᵀ − x̄ x̄ᵀ, the structure matrix of docs/theory.md §2.

Initialisation (ε = ``init_scale``): W_Q, W_K, W_V entries ~ N(0, ε²/d_model),
v ~ N(0, ε²/(H d_v)).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from shockflow.models.activations import softmax_in_place
from shockflow.models.base import Model, check_positive_int, parameter_gradient
from shockflow.models.registry import register

__all__ = ["MultiHeadAttention", "QueryKeyAttention"]


def _attention_forward(X, WQ, WK, V, R, d_k):
    """Core: returns F (n, 1) and the cache. V (n, H, T, d_v) values, R (H, d_v) readout."""
    Q = np.einsum("ntD,hDk->nhtk", X, WQ, optimize=True)
    K = np.einsum("ntD,hDk->nhtk", X, WK, optimize=True)
    P = softmax_in_place(np.einsum("nhtk,nhsk->nhts", Q, K, optimize=True) / np.sqrt(d_k))
    O = np.einsum("nhts,nhsv->nhtv", P, V, optimize=True)
    T = X.shape[1]
    F = np.einsum("nhtv,hv->n", O, R, optimize=True)[:, None] / T
    return F, (X, Q, K, P, V, O)


def _attention_backward(cache, g, R, d_k):
    """Core backward for per-sample weights g (n,): returns dQ, dK, dV (with g folded in) and O."""
    X, Q, K, P, V, O = cache
    T = X.shape[1]
    w = g / T  # ∂f/∂o_{ht} = v_h / T for every t
    r = np.einsum("hv,nhsv->nhs", R, V, optimize=True)  # v_h · V_{hs}
    dP = w[:, None, None, None] * r[:, :, None, :]  # (n, H, T, T), independent of t
    dS = P * (dP - np.sum(P * dP, axis=-1, keepdims=True))
    dQ = np.einsum("nhts,nhsk->nhtk", dS, K, optimize=True) / np.sqrt(d_k)
    dK = np.einsum("nhts,nhtk->nhsk", dS, Q, optimize=True) / np.sqrt(d_k)
    dV = w[:, None, None, None] * P.sum(axis=2)[..., None] * R[None, :, None, :]
    return dQ, dK, dV, O


def _check_attention_dims(d_model, heads, d_k):
    d_model = check_positive_int("d_model", d_model)
    heads = check_positive_int("heads", heads)
    d_k = d_model if d_k is None else check_positive_int("d_k", d_k)
    return d_model, heads, d_k


@register
class MultiHeadAttention(Model):
    """Multi-head self-attention with mean-over-tokens readout; X of shape (n, tokens, d_model)."""

    name = "attention"

    def __init__(
        self,
        d_model: int,
        heads: int = 1,
        d_k: int | None = None,
        d_v: int | None = None,
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self.d_model, self.heads, self.d_k = _check_attention_dims(d_model, heads, d_k)
        self.d_v = self.d_k if d_v is None else check_positive_int("d_v", d_v)
        rng = self._setup(input_shape=(None, self.d_model), output_dim=1, loss=loss,
                          init_scale=init_scale, seed=seed,
                          config=dict(d_model=d_model, heads=heads, d_k=d_k, d_v=d_v))
        H, D = self.heads, self.d_model
        s = self.init_scale / np.sqrt(D)
        self.params["W_Q"] = rng.normal(0.0, s, size=(H, D, self.d_k))
        self.params["W_K"] = rng.normal(0.0, s, size=(H, D, self.d_k))
        self.params["W_V"] = rng.normal(0.0, s, size=(H, D, self.d_v))
        self.params["v"] = rng.normal(0.0, self.init_scale / np.sqrt(H * self.d_v), size=(H, self.d_v))

    def init_moments(self):
        s = self.init_scale / np.sqrt(self.d_model)
        return {"W_Q": (0.0, s), "W_K": (0.0, s), "W_V": (0.0, s),
                "v": (0.0, self.init_scale / np.sqrt(self.heads * self.d_v))}

    def _forward(self, X):
        p = self.params
        V = np.einsum("nsD,hDv->nhsv", X, p["W_V"], optimize=True)
        return _attention_forward(X, p["W_Q"], p["W_K"], V, p["v"], self.d_k)

    def _backward(self, cache, G, per_sample):
        X = cache[0]
        g = G[:, 0]
        dQ, dK, dV, O = _attention_backward(cache, g, self.params["v"], self.d_k)
        T = X.shape[1]
        return {
            "W_Q": parameter_gradient("ntD,nhtk->hDk", X, dQ, per_sample=per_sample),
            "W_K": parameter_gradient("nsD,nhsk->hDk", X, dK, per_sample=per_sample),
            "W_V": parameter_gradient("nsD,nhsv->hDv", X, dV, per_sample=per_sample),
            "v": parameter_gradient("n,nhtv->hv", g / T, O, per_sample=per_sample),
        }


@register
class QueryKeyAttention(Model):
    """Query–key-only attention: values = tokens, fixed readout c; X of shape (n, tokens, d_model)."""

    name = "attention_qk"

    def __init__(
        self,
        d_model: int,
        heads: int = 1,
        d_k: int | None = None,
        readout: Sequence[float] | None = None,
        loss: str = "half_mse",
        init_scale: float = 1.0,
        seed: int = 0,
    ):
        self.d_model, self.heads, self.d_k = _check_attention_dims(d_model, heads, d_k)
        if readout is None:
            c = np.full(self.d_model, 1.0 / np.sqrt(self.d_model))
        else:
            c = np.asarray(readout, dtype=np.float64)
            if c.shape != (self.d_model,) or not np.all(np.isfinite(c)):
                raise ValueError(
                    f"readout: expected {self.d_model} finite numbers (d_model), found shape {c.shape}"
                )
        self.readout = c
        rng = self._setup(input_shape=(None, self.d_model), output_dim=1, loss=loss,
                          init_scale=init_scale, seed=seed,
                          config=dict(d_model=d_model, heads=heads, d_k=d_k,
                                      readout=None if readout is None else c.tolist()))
        H, D = self.heads, self.d_model
        s = self.init_scale / np.sqrt(D)
        self.params["W_Q"] = rng.normal(0.0, s, size=(H, D, self.d_k))
        self.params["W_K"] = rng.normal(0.0, s, size=(H, D, self.d_k))

    def init_moments(self):
        s = self.init_scale / np.sqrt(self.d_model)
        return {"W_Q": (0.0, s), "W_K": (0.0, s)}

    def _readout_matrix(self):
        return np.broadcast_to(self.readout, (self.heads, self.d_model))

    def _forward(self, X):
        p = self.params
        V = np.broadcast_to(X[:, None, :, :], (X.shape[0], self.heads, *X.shape[1:]))
        return _attention_forward(X, p["W_Q"], p["W_K"], V, self._readout_matrix(), self.d_k)

    def _backward(self, cache, G, per_sample):
        X = cache[0]
        dQ, dK, _, _ = _attention_backward(cache, G[:, 0], self._readout_matrix(), self.d_k)
        return {
            "W_Q": parameter_gradient("ntD,nhtk->hDk", X, dQ, per_sample=per_sample),
            "W_K": parameter_gradient("nsD,nhsk->hDk", X, dK, per_sample=per_sample),
        }
