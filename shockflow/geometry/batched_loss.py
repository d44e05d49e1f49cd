"""The loss of one model at many parameter sets in one vectorised pass.

``batched_loss(model, params, X, y)`` takes parameter arrays with a leading batch axis
(``params[name].shape == (B, *model.params[name].shape)``) and returns the ``B`` mean losses
``(1/n) Σ_μ ℓ(f_b(x_μ), y_μ)``.  The forward passes of the model families that quotient
geometries work with are written out with a batch axis (``b``) in einsum form, so a whole chart
grid costs a handful of array operations rather than one Python call per grid point:

``mlp``, ``mean_field``       f = c Σ_i a_i φ(w_i·x + b_i)        (c = 1 or 1/m)
``linear2``, ``deep_linear``, ``deep_mlp``   layer by layer
``linear``                     f = W x
``quadratic``                  Σ_i a_i (w_i·x)²  or  (‖Wx‖² − ‖W‖²_F)/(d√p)
``diagonal``                   Σ_k x_k u_k²/4  or  Σ_k x_k u_k v_k
``phase_retrieval``            (w·x)²
``attention_qk``               query–key head with values = tokens (docs/theory.md §2)
``attention``                  multi-head: (1/T) Σ_{h,t,s} P_hts v_h·W_{V,h}ᵀx_s
``cnn1d``, ``cnn2d``           Σ_c a_c Σ_p φ(K_c·x_p + b_c) (global sum pooling)
``fourier``                    P^{-1/2} Σ_k W_k tanh(s_k a_k ψ_k(x))

Any other model falls back to one forward call per parameter set (correct, slower); a plug-in
geometry for a new model family can pass its own ``outputs`` function.

``batched_loss`` evaluates a model that is linear in its input under a squared loss from the data
moments (:mod:`shockflow.geometry.moments`: exact, ``O(o d²)`` per parameter set); every other
model in chunks of the batch axis sized so that intermediates stay near :data:`CHUNK_VALUES`
values (bounded memory; the targets broadcast, they are not tiled per parameter set).

**Passes already made are not made again.**  Inside :func:`remembered_losses` (the saddle chain runs in
it: :func:`shockflow.prediction.predict.follow_chain`), on read-only data (a :class:`~shockflow.data.Dataset`'s
arrays) the losses of each batch of parameter sets are remembered, keyed by a 128-bit digest of the
model's configuration (everything but its parameters) and of the batch's parameter bytes, up to
:data:`MEMO_SIZE` batches per data set: the saddle chain repeats whole calls it made before (a chart's
minimum searched again at an unchanged saddle of a later sweep, the same reference rebuilt for another
chart).  A repeated call returns what the same evaluation returned, bit for bit (whole batches only: a
parameter set evaluated in another grouping can round differently in the matrix products, and the chain's
curvatures feed the overshoot flag, which must not move); ``tests/geometry/test_fast_chart_losses.py``.
The tables are dropped when the outermost block ends.

**Silent units.**  A unit of an ``mlp``, ``mean_field`` or CNN with no input weight and no readout in any parameter
set of a batch (and a finite bias) adds ``0 · φ(b) = 0`` to every output: the batched forward pass leaves it out.
Near zero weights, where the modes are found, a batch perturbs one or two units of the origin and the pass costs
those units only (``find_modes``' standard errors, the intercept's and the kinked origin's passes).  The outputs
equal the full pass's to rounding (the sum over units is shorter); ``tests/geometry/test_fast_modes.py``.

**Along a line** (:func:`line_losses`).  A chart whose section is a line in parameter space,
``θ(r) = θ_b + r δ`` (the automatic charts of units), hands the line to :func:`line_losses`: for a
family whose first layer is linear in its parameters (``mlp``, ``mean_field``, ``cnn1d``, ``cnn2d``,
``fourier``) the pre-activations are
affine in ``r``, ``Z(r) = X W_bᵀ + r X δ_Wᵀ`` (+ the biases), so the two products with the data are made once
per line (kept for the last :data:`LINE_CACHE` lines) and a point costs the activation and the readout
only, written into one work array per call (the activation in place where it is a ufunc).  A query–key head
(``attention_qk``) has queries and keys affine in ``r`` and so scores quadratic in it: its three score arrays are
made once per line, and a point costs two multiply-adds, the softmax and the readout; multi-head attention
(``attention``) likewise, its values as the readout sees them, ``v_h(r) · W_{V,h}(r)ᵀ x_s``, a quadratic in ``r``
too (the escape from its last saddle: the loss along a line, 257 points a scan, 2.3 → 0.69 s on d_model 4).  Measured
(17 points, same process, interleaved, one BLAS thread, load 9): 1.38x faster per point on
``mlp-tanh-teacher`` and ``cnn2d-images``, 1.49x on ``fourier-features``.  The losses equal the pointwise
ones to rounding (``tests/prediction/test_chain_cost.py``: 1e-13 relative).
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import weakref
from typing import Callable, Mapping

import numpy as np

from shockflow.geometry.moments import moments_apply, moments_loss
from shockflow.models.activations import softmax_in_place
from shockflow.models.base import Model

__all__ = ["batched_loss", "batched_outputs", "batched_sample_losses", "line_losses", "remembered_losses"]


def _without_silent_units(W, A, b=None):
    """``(W, A, b)`` without the units that add nothing to any parameter set's outputs: no input weight and no
    readout in any set (``W (B, m, ·)``, ``A (B, o, m)``) and a finite bias, so the unit adds ``0 · φ(b) = 0``
    exactly.  The units of a point near zero weights (the modes' search perturbs one or two of them) are mostly
    silent; the forward pass then computes the others only (module docstring, "Silent units")."""
    silent = ~(np.any(A, axis=(0, 1)) | np.any(W.reshape(W.shape[0], W.shape[1], -1), axis=(0, 2)))
    if b is not None:
        silent &= np.all(np.isfinite(b), axis=0)
    if not silent.any():
        return W, A, b
    used = ~silent
    return W[:, used], A[:, :, used], None if b is None else b[:, used]


def _mlp(model, P, X):
    W, A, b = _without_silent_units(P["W"], P["a"].reshape(P["W"].shape[0], model.output_dim, model.width),
                                    P["b"] if getattr(model, "bias", False) else None)
    B, m, d = W.shape
    Z = (X @ W.reshape(B * m, d).T).reshape(X.shape[0], B, m)  # one product for every parameter set
    if b is not None:
        Z = Z + b[None, :, :]
    H = _in_place(model.activation.fn, Z)
    return model._readout_scale() * np.matmul(H.transpose(1, 0, 2), A.transpose(0, 2, 1))


def _deep(model, P, X):
    """Layer by layer, each a stacked matrix product (the data broadcast over the parameter sets in the first: the
    einsum it replaces made the same products, bit for bit, after 0.6 ms of set-up per call), the activation in
    place."""
    h = X
    for l in range(1, model.depth):
        z = np.matmul(h, P[f"W{l}"].transpose(0, 2, 1))
        if model.bias:
            z += P[f"b{l}"][:, None, :]
        h = _in_place(model.activation.fn, z)
    return np.matmul(h, P[f"W{model.depth}"].transpose(0, 2, 1))


def _linear(model, P, X):
    return np.einsum("nm,bom->bno", X, P["W"], optimize=True)


def _quadratic(model, P, X):
    U = np.einsum("nd,bpd->bnp", X, P["W"], optimize=True)
    if model.form == "sum":
        return np.einsum("bnp,bp->bn", U * U, P["a"], optimize=True)[..., None]
    sq = np.sum(U * U, axis=2) - np.sum(P["W"] ** 2, axis=(1, 2))[:, None]
    return (model._trace_scale() * sq)[..., None]


def _diagonal(model, P, X):
    u = P["u"]
    beta = u * u / 4.0 if model.form == "u2" else u * P["v"]
    return np.einsum("nk,bk->bn", X, beta)[..., None]


def _phase_retrieval(model, P, X):
    z = np.einsum("nd,bd->bn", X, P["w"])
    return (z * z)[..., None]


def _attention_weights(model, P, X):
    """The softmax weights ``P_{bnhts}`` of a batch of query–key parameter sets."""
    Q = np.einsum("ntD,bhDk->bnhtk", X, P["W_Q"], optimize=True)
    K = np.einsum("ntD,bhDk->bnhtk", X, P["W_K"], optimize=True)
    return softmax_in_place(np.einsum("bnhtk,bnhsk->bnhts", Q, K, optimize=True) / np.sqrt(model.d_k))


def _attention_qk(model, P, X):
    xc = np.einsum("ntD,D->nt", X, model.readout)  # c · x_s
    f = np.einsum("bnhts,ns->bn", _attention_weights(model, P, X), xc, optimize=True) / X.shape[1]
    return f[..., None]


def _attention(model, P, X):
    """Multi-head attention: each token's value as the readout sees it, ``r_{hs} = v_h · W_{V,h}ᵀ x_s``, weighted by
    the softmax (``f = (1/T) Σ_{h,t,s} P_{hts} r_{hs}``, the model's ``Σ_h v_h · o_{ht}`` summed in another order)."""
    r = np.einsum("nsD,bhDv,bhv->bnhs", X, P["W_V"], P["v"], optimize=True)
    f = np.einsum("bnhts,bnhs->bn", _attention_weights(model, P, X), r, optimize=True) / X.shape[1]
    return f[..., None]


def _conv(model, P, X):
    B = P["K"].shape[0]
    K, A, b = _without_silent_units(P["K"].reshape(B, model.out_channels, model.patch_dim),
                                    P["a"].reshape(B, model.output_dim, model.out_channels),
                                    P["b"] if model.bias else None)
    Pt = model.patches(X)                                                        # (n, P, D)
    Z = np.einsum("npd,bcd->bnpc", Pt, K, optimize=True)
    if b is not None:
        Z = Z + b[:, None, None, :]
    pooled = _in_place(model.activation.fn, Z).sum(axis=2)                       # (B, n, C)
    return np.matmul(pooled, A.transpose(0, 2, 1))


def _fourier(model, P, X):
    sp = model.strengths * (np.sqrt(2.0) * np.cos(2.0 * np.pi * X * model.frequencies))   # (n, P)
    T = np.tanh(sp[None] * P["a"][:, None, :])
    return (np.einsum("bnk,bk->bn", T, P["W"], optimize=True) / np.sqrt(model.modes))[..., None]


_OUTPUTS: dict[str, Callable] = {
    "mlp": _mlp,
    "mean_field": _mlp,
    "linear2": _deep,
    "deep_linear": _deep,
    "deep_mlp": _deep,
    "linear": _linear,
    "quadratic": _quadratic,
    "diagonal": _diagonal,
    "phase_retrieval": _phase_retrieval,
    "attention_qk": _attention_qk,
    "attention": _attention,
    "cnn1d": _conv,
    "cnn2d": _conv,
    "fourier": _fourier,
}


def _batch_size(model: Model, params: Mapping[str, np.ndarray]) -> int:
    sizes = set()
    for key, ref in model.params.items():
        if key not in params:
            raise ValueError(f"params: missing array {key!r}; the {model.name!r} model has {', '.join(model.params)}")
        arr = params[key]
        if arr.shape[1:] != ref.shape:
            raise ValueError(f"params[{key!r}]: expected shape (B, {', '.join(map(str, ref.shape))}), found {arr.shape}")
        sizes.add(arr.shape[0])
    if len(sizes) != 1:
        raise ValueError(f"params: every array needs the same batch size, found {sorted(sizes)}")
    return sizes.pop()


def _outputs_function(model: Model, outputs: Callable | None) -> Callable:
    fn = outputs or _OUTPUTS.get(model.name)
    if fn is not None:
        return fn

    def one_at_a_time(model, P, X):
        clone = model.copy()
        out = []
        for b in range(next(iter(P.values())).shape[0]):
            for k in clone.params:
                clone.params[k][...] = P[k][b]
            out.append(clone._forward(X)[0])
        return np.stack(out)

    return one_at_a_time


def _checked(model: Model, params: Mapping[str, np.ndarray], X):
    X = model._check_inputs(X)
    batch = _batch_size(model, params)
    P = {k: np.asarray(params[k], dtype=np.float64) for k in model.params}
    return X, batch, P


def batched_outputs(model: Model, params: Mapping[str, np.ndarray], X, outputs: Callable | None = None) -> np.ndarray:
    """Model outputs ``(B, n, output_dim)`` for ``B`` parameter sets (see the module docstring)."""
    X, _, P = _checked(model, params, X)
    return _outputs_function(model, outputs)(model, P, X)


#: the chunked evaluation keeps about this many float64 values per intermediate array (16 MiB)
CHUNK_VALUES = 1 << 21


def _chunks(model: Model, batch: int, n: int):
    """Slices of the batch axis whose intermediates stay near :data:`CHUNK_VALUES` values: a
    forward pass holds ``n`` samples times a layer's width (the largest leading dimension of a
    parameter array, the output dimension, the per-sample input size) per parameter set."""
    width = max([p.shape[0] for p in model.params.values() if p.ndim] + [model.output_dim, 1])
    per_set = n * width * 4 * int(getattr(model, "num_patches", 1))   # a CNN holds every patch's channels
    size = max(1, min(batch, CHUNK_VALUES // per_set))
    return [slice(i, min(i + size, batch)) for i in range(0, batch, size)]


def batched_sample_losses(model: Model, params: Mapping[str, np.ndarray], X, y,
                          outputs: Callable | None = None) -> np.ndarray:
    """Per-sample losses ``(B, n)`` of ``model`` at ``B`` parameter sets, in chunks of the batch
    (bounded memory; the targets broadcast, they are never copied per parameter set)."""
    X, batch, P = _checked(model, params, X)
    fn = _outputs_function(model, outputs)
    n = X.shape[0]
    Y = model.loss_function.targets(y, n, model.output_dim)
    out = np.empty((batch, n))
    for part in _chunks(model, batch, n):
        F = fn(model, {k: v[part] for k, v in P.items()}, X)
        out[part] = model.loss_function.value(F, Y[None])
    return out


def batched_loss(model: Model, params: Mapping[str, np.ndarray], X, y, outputs: Callable | None = None) -> np.ndarray:
    """Mean loss ``(B,)`` of ``model`` at ``B`` parameter sets on the data ``(X, y)``.

    A model linear in its input under a squared loss is evaluated from the data moments
    (:mod:`shockflow.geometry.moments`, exact); any other in chunks of the batch."""
    X, batch, P = _checked(model, params, X)
    if outputs is None:
        fast = moments_loss(model, P, X, y)
        if fast is not None:
            return fast
    memo = _memo(model, X, y) if outputs is None else None
    if memo is None:
        return _evaluated(model, P, X, y, batch, outputs)
    table, config = memo
    key = _digest(config, P, batch)
    if key not in table:
        if len(table) >= MEMO_SIZE:
            table.clear()
        table[key] = _evaluated(model, P, X, y, batch, None)
        table[key].setflags(write=False)
    return table[key].copy()


def _evaluated(model, P, X, y, batch: int, outputs) -> np.ndarray:
    fn = _outputs_function(model, outputs)
    n = X.shape[0]
    Y = model.loss_function.targets(y, n, model.output_dim)
    out = np.empty(batch)
    for part in _chunks(model, batch, n):
        F = fn(model, {k: v[part] for k, v in P.items()}, X)
        out[part] = model.loss_function.value(F, Y[None]).mean(axis=1)
    return out


#: batches remembered per data set (module docstring); the table starts over when full
MEMO_SIZE = 1 << 12

_MEMOS: dict = {}     # (id(X), id(y)) -> (weakref X, weakref y, table); the last few data sets
_DEPTH = [0]          # how many remembered_losses blocks are open


@contextlib.contextmanager
def remembered_losses():
    """A block in which :func:`batched_loss` remembers the losses it evaluated (module docstring)."""
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1
        if _DEPTH[0] == 0:
            _MEMOS.clear()


def _memo(model: Model, X: np.ndarray, y):
    """``(table, configuration digest)`` for read-only data, else ``None`` (writable data may change in place)."""
    if not _DEPTH[0] or not isinstance(y, np.ndarray) or X.flags.writeable or y.flags.writeable:
        return None
    config = _configuration(model)   # every call (15 µs): a model whose settings change in place is never read
    if config is None:                # from its old values
        return None
    key = (id(X), id(y))
    entry = _MEMOS.get(key)
    if entry is None or entry[0]() is not X or entry[1]() is not y:
        for stale in [k for k, (rx, ry, _) in _MEMOS.items() if rx() is None or ry() is None]:
            del _MEMOS[stale]
        if len(_MEMOS) >= 4:
            _MEMOS.pop(next(iter(_MEMOS)))
        entry = _MEMOS[key] = (weakref.ref(X), weakref.ref(y), {})
    return entry[2], config


def _digest(config: bytes, P, batch: int) -> bytes:
    """128 bits of the model's configuration and of the whole batch of parameter sets, in order."""
    h = hashlib.blake2b(config + batch.to_bytes(8, "little"), digest_size=16)
    for k in sorted(P):
        h.update(np.ascontiguousarray(P[k]).tobytes())
    return h.digest()


# -- along a line θ_b + r δ ------------------------------------------------------------------------------

def _mlp_line(model, P0, Pd, X):
    """The parts of a two-layer net along a line that do not depend on ``r``: ``Z_b, Z_δ`` (n, m) and the
    readouts ``A_b, A_δ`` (o, m)."""
    Z0, Zd = X @ P0["W"].T, X @ Pd["W"].T
    if getattr(model, "bias", False):
        Z0, Zd = Z0 + P0["b"][None, :], Zd + Pd["b"][None, :]
    shape = (model.output_dim, model.width)
    return Z0, Zd, P0["a"].reshape(shape), Pd["a"].reshape(shape)


def _in_place(fn, Z):
    """``fn(Z)``, written over ``Z`` where ``fn`` is a ufunc (tanh): a fresh (B, n, m) array per chunk cost more than
    the activation itself on this machine under load (page faults of the new pages: 20 ms against 1 ms)."""
    return fn(Z, out=Z) if isinstance(fn, np.ufunc) else fn(Z)


def _affine(r, Z0, Zd, work):
    """``Z0 + r_b Zd`` for every ``r_b``, in ``work`` (its leading ``r.size`` rows)."""
    Z = work[:r.size]
    np.multiply(r.reshape(-1, *([1] * Zd.ndim)), Zd[None], out=Z)
    Z += Z0[None]
    return Z


def _mlp_line_outputs(model, parts, r, work):
    Z0, Zd, A0, Ad = parts
    H = _in_place(model.activation.fn, _affine(r, Z0, Zd, work))              # (B, n, m)
    A = A0[None] + r[:, None, None] * Ad[None]                                # (B, o, m)
    return model._readout_scale() * np.matmul(H, A.transpose(0, 2, 1))


def _conv_line(model, P0, Pd, X):
    Pt = model.patches(X)
    shape = (model.out_channels, model.patch_dim)
    Z0, Zd = Pt @ P0["K"].reshape(shape).T, Pt @ Pd["K"].reshape(shape).T      # (n, P, C)
    if model.bias:
        Z0, Zd = Z0 + P0["b"], Zd + Pd["b"]
    shape = (model.output_dim, model.out_channels)
    return Z0, Zd, P0["a"].reshape(shape), Pd["a"].reshape(shape)


def _conv_line_outputs(model, parts, r, work):
    Z0, Zd, A0, Ad = parts
    pooled = _in_place(model.activation.fn, _affine(r, Z0, Zd, work)).sum(axis=2)   # (B, n, C)
    A = A0[None] + r[:, None, None] * Ad[None]
    return np.matmul(pooled, A.transpose(0, 2, 1))


def _fourier_line(model, P0, Pd, X):
    sp = model.strengths * (np.sqrt(2.0) * np.cos(2.0 * np.pi * X * model.frequencies))
    return sp * P0["a"], sp * Pd["a"], P0["W"], Pd["W"]


def _fourier_line_outputs(model, parts, r, work):
    U0, Ud, W0, Wd = parts
    T = np.tanh(_affine(r, U0, Ud, work), out=work[:r.size])                 # (B, n, P)
    W = W0[None] + r[:, None] * Wd[None]
    return (np.einsum("bnk,bk->bn", T, W, optimize=True) / np.sqrt(model.modes))[..., None]


def _score_line(model, P0, Pd, X):
    """The scores of a query–key head along a line: ``Q(r) = Q_b + r Q_δ`` and ``K(r)`` likewise, so the scores are a
    quadratic in ``r``, ``S(r) = S_0 + r S_1 + r² S_2`` (n, h, T, T)."""
    Q0, Qd = (np.einsum("ntD,hDk->nhtk", X, P["W_Q"], optimize=True) for P in (P0, Pd))
    K0, Kd = (np.einsum("ntD,hDk->nhtk", X, P["W_K"], optimize=True) for P in (P0, Pd))
    scores = lambda A, B: np.einsum("nhtk,nhsk->nhts", A, B, optimize=True) / np.sqrt(model.d_k)
    S1 = scores(Q0, Kd)
    S1 += scores(Qd, K0)
    return scores(Q0, K0), S1, scores(Qd, Kd)


def _weights_along(S0, S1, S2, r, work):
    """The softmax weights at every ``r_b``, ``softmax(S_0 + r (S_1 + r S_2))``, in ``work``."""
    S = work[:r.size]
    rr = r.reshape(-1, 1, 1, 1, 1)
    np.multiply(rr, S2[None], out=S)
    S += S1[None]
    S *= rr
    S += S0[None]
    return softmax_in_place(S)


def _attention_qk_line(model, P0, Pd, X):
    """A query–key head along a line: its scores' quadratic, made once per line with the readout's ``c · x_s``."""
    return (*_score_line(model, P0, Pd, X), np.einsum("ntD,D->nt", X, model.readout))


def _attention_qk_line_outputs(model, parts, r, work):
    S0, S1, S2, xc = parts
    f = np.einsum("bnhts,ns->bn", _weights_along(S0, S1, S2, r, work), xc, optimize=True) / xc.shape[1]
    return f[..., None]


def _attention_line(model, P0, Pd, X):
    """Multi-head attention along a line: the scores' quadratic, and the readout's view of each token's value
    ``r_{hs}(r) = v_h(r) · W_{V,h}(r)ᵀ x_s``, a quadratic in ``r`` too (its three (n, h, T) coefficients)."""
    V0, Vd = (np.einsum("nsD,hDv->nhsv", X, P["W_V"], optimize=True) for P in (P0, Pd))
    value = lambda V, v: np.einsum("nhsv,hv->nhs", V, v, optimize=True)
    v1 = value(V0, Pd["v"])
    v1 += value(Vd, P0["v"])
    return (*_score_line(model, P0, Pd, X), value(V0, P0["v"]), v1, value(Vd, Pd["v"]))


def _attention_line_outputs(model, parts, r, work):
    S0, S1, S2, v0, v1, v2 = parts
    rr = r.reshape(-1, 1, 1, 1)
    values = v0[None] + rr * (v1[None] + rr * v2[None])                       # (B, n, h, T)
    f = np.einsum("bnhts,bnhs->bn", _weights_along(S0, S1, S2, r, work), values, optimize=True) / S0.shape[-1]
    return f[..., None]


_LINES: dict[str, tuple[Callable, Callable]] = {"mlp": (_mlp_line, _mlp_line_outputs),
                                                "attention_qk": (_attention_qk_line, _attention_qk_line_outputs),
                                                "attention": (_attention_line, _attention_line_outputs),
                                                "mean_field": (_mlp_line, _mlp_line_outputs),
                                                "cnn1d": (_conv_line, _conv_line_outputs),
                                                "cnn2d": (_conv_line, _conv_line_outputs),
                                                "fourier": (_fourier_line, _fourier_line_outputs)}

#: lines whose data products are kept (module docstring, "Along a line")
LINE_CACHE = 8
_LINE_PARTS: dict = {}   # digest of (model configuration, line, data identity) -> (weakref X, weakref y, parts)


def line_losses(model: Model, base: np.ndarray, direction: np.ndarray, r, X, y) -> np.ndarray | None:
    """Mean losses ``(B,)`` at the parameter vectors ``base + r_b direction`` (flat, in ``model.params`` order), or
    ``None`` where the model's family has no line form or its loss follows from data moments (the caller then
    evaluates the parameter sets; module docstring, "Along a line")."""
    from shockflow.geometry.flat import unflatten

    line = _LINES.get(model.name)
    if line is None or getattr(model, "_forward", None) is None or moments_apply(model):
        return None
    X = model._check_inputs(X)
    r = np.asarray(r, dtype=np.float64).reshape(-1)
    base = np.ascontiguousarray(base, dtype=np.float64)
    direction = np.ascontiguousarray(direction, dtype=np.float64)
    memo = _memo(model, X, y)
    config = memo[1] if memo is not None else _configuration(model)
    if config is None:
        return None
    if memo is not None:
        key = hashlib.blake2b(config + b"line" + base.tobytes() + direction.tobytes() + r.tobytes(),
                              digest_size=16).digest()
        if key in memo[0]:
            return memo[0][key].copy()
    ident = hashlib.blake2b(config + base.tobytes() + direction.tobytes(), digest_size=16).digest()
    entry = _LINE_PARTS.get(ident)
    if entry is None or entry[0]() is not X or entry[1]() is not y:
        parts = line[0](model, unflatten(model, base), unflatten(model, direction), X)
        if len(_LINE_PARTS) >= LINE_CACHE:
            _LINE_PARTS.pop(next(iter(_LINE_PARTS)))
        try:
            _LINE_PARTS[ident] = entry = (weakref.ref(X), weakref.ref(y), parts)
        except TypeError:   # y not weak-referenceable: no cache
            entry = (None, None, parts)
    parts = entry[2]
    n = X.shape[0]
    Y = model.loss_function.targets(y, n, model.output_dim)
    out = np.empty(r.size)
    chunks = _chunks(model, r.size, n)
    work = np.empty((chunks[0].stop - chunks[0].start, *parts[1].shape)) if chunks else None   # reused by every chunk
    for part in chunks:
        out[part] = model.loss_function.value(line[1](model, parts, r[part], work), Y[None]).mean(axis=1)
    if memo is not None:
        if len(memo[0]) >= MEMO_SIZE:
            memo[0].clear()
        memo[0][key] = out.copy()
        memo[0][key].setflags(write=False)
    return out


def _configuration(model: Model) -> bytes | None:
    """128 bits of the model's configuration (everything but its parameters), or ``None`` if it cannot be read."""
    try:
        state = {k: v for k, v in vars(model).items() if k != "params"}
        return hashlib.blake2b(type(model).__qualname__.encode() + pickle.dumps(state), digest_size=16).digest()
    except (TypeError, AttributeError, pickle.PicklingError):
        return None
