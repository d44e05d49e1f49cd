"""Unit layouts: which flat parameters form each interchangeable unit of a model.

A layer that is a sum over interchangeable units (hidden neurons, channels, heads, experts) has
the permutation symmetry that the quotient geometries remove.  ``unit_layout(model)`` says, for
a registered model, which entries of ``model.parameter_vector()`` belong to unit i: every
parameter belongs to exactly one unit.  Vector outputs are part of the unit (the readout column
``a[:, i]`` of an MLP, the column ``W2[:, i]`` of a two-layer linear net).

Unit layouts (``UNIT_LAYOUTS``; the registry names of :mod:`shockflow.models`):

=================  ==========================================================================
``mlp``            unit i = [W_i· ; b_i (if bias) ; a_·i]
``mean_field``     unit i = [W_i· ; a_i]
``cnn1d/cnn2d``    unit c = [vec K_c ; b_c (if bias) ; a_·c]
``attention``      unit h = [vec W_Q,h ; vec W_K,h ; vec W_V,h ; v_h]   (quartic in Q, K)
``attention_qk``   unit (h, j) = [W_Q[h, :, j] ; W_K[h, :, j]]  (one query/key column pair;
                   docs/theory.md's "rows ⊗ I" form is the same matrix written for all j at once)
``moe``            unit k = [expert k parameters ; gate row Γ_k]
``linear2``        unit i = [W1_i· ; W2_·i]
``quadratic``      ``form="trace"`` only: unit i = row W_i·
``phase_retrieval``one unit w
``diagonal``       one unit [u] (``u2``) or [u ; v] (``uv``)
``fourier``        one unit [W ; a] (the P pairs are not interchangeable: s_k, ψ_k differ)
=================  ==========================================================================

Chains of depth L ≥ 3 (``deep_linear``, ``deep_mlp``) have no such sum: their leading form near zero
weights is the product of one weight per layer.  ``chain_layout(model)`` names their layers instead
(the weight keys in order, the activation's slope at 0); :mod:`shockflow.geometry.auto` charts them
on the balanced section (docs/theory.md §6, "Depth").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ChainLayout", "UnitLayout", "UNIT_LAYOUTS", "balance_conserved", "chain_layout", "supported_models",
           "unit_layout", "unit_matrix", "units_only"]


@dataclass(frozen=True)
class UnitLayout:
    """``index[i, j]`` = position in ``model.parameter_vector()`` of entry j of unit i (shape (d, p))."""

    index: np.ndarray

    @property
    def units(self) -> int:
        return int(self.index.shape[0])

    @property
    def unit_dim(self) -> int:
        return int(self.index.shape[1])

    def unit_matrix(self, theta: np.ndarray) -> np.ndarray:
        """W ∈ R^{p×d}: the units of the flat parameter vector ``theta`` as columns."""
        return np.asarray(theta)[self.index].T

    def parameter_vector(self, W: np.ndarray, size: int) -> np.ndarray:
        """Inverse of :meth:`unit_matrix` (a flat vector of length ``size``)."""
        theta = np.zeros(size)
        theta[self.index] = np.asarray(W).T
        return theta


def _offsets(model) -> dict[str, np.ndarray]:
    """Flat positions of every parameter array, shaped like the array."""
    out, start = {}, 0
    for k, p in model.params.items():
        out[k] = np.arange(start, start + p.size).reshape(p.shape)
        start += p.size
    return out


def _readout_columns(model, a: np.ndarray, units: int) -> np.ndarray:
    """The readout of each unit as a row: ``a (units,)`` or ``a (output_dim, units)`` -> ``(units, output_dim)``."""
    return a.reshape(model.output_dim, units).T


def _layout_mlp(model):
    o = _offsets(model)
    cols = [o["W"]] + ([o["b"][:, None]] if "b" in o else []) + [_readout_columns(model, o["a"], model.width)]
    return np.concatenate(cols, axis=1)


def _layout_cnn(model):
    o = _offsets(model)
    C = model.out_channels
    cols = [o["K"].reshape(C, -1)] + ([o["b"][:, None]] if "b" in o else []) + [_readout_columns(model, o["a"], C)]
    return np.concatenate(cols, axis=1)


def _layout_attention(model):
    o = _offsets(model)
    H = model.heads
    return np.concatenate([o[k].reshape(H, -1) for k in ("W_Q", "W_K", "W_V", "v")], axis=1)


def _layout_attention_qk(model):
    o = _offsets(model)
    q = o["W_Q"].transpose(0, 2, 1).reshape(-1, model.d_model)  # rows (h, j), entries over D
    k = o["W_K"].transpose(0, 2, 1).reshape(-1, model.d_model)
    return np.concatenate([q, k], axis=1)


def _layout_moe(model):
    o = _offsets(model)
    K = model.num_experts
    expert = [o["experts"]] if "experts" in o else [o["expert_W"].reshape(K, -1), o["expert_a"]]
    return np.concatenate(expert + [o["gate"]], axis=1)


def _layout_linear2(model):
    o = _offsets(model)
    return np.concatenate([o["W1"], o["W2"].T], axis=1)


def _layout_quadratic(model):
    if model.form != "trace":
        raise ValueError("model: quadratic form='sum' is cubic at zero weights (A = 0); structure matrices "
                         "are defined for form='trace' only")
    return _offsets(model)["W"]


def _layout_single(model):
    return np.concatenate([v.ravel() for v in _offsets(model).values()])[None, :]


UNIT_LAYOUTS = {
    "mlp": _layout_mlp,
    "mean_field": _layout_mlp,
    "cnn1d": _layout_cnn,
    "cnn2d": _layout_cnn,
    "attention": _layout_attention,
    "attention_qk": _layout_attention_qk,
    "moe": _layout_moe,
    "linear2": _layout_linear2,
    "quadratic": _layout_quadratic,
    "phase_retrieval": _layout_single,
    "diagonal": _layout_single,
    "fourier": _layout_single,
}


def supported_models() -> list[str]:
    """Registry names of the models with a known unit layout."""
    return sorted(UNIT_LAYOUTS)


def unit_layout(model) -> UnitLayout:
    """The unit layout of ``model`` (see the module table); every parameter belongs to exactly one unit."""
    name = getattr(model, "name", type(model).__name__)
    if name not in UNIT_LAYOUTS:
        raise ValueError(f"model: no known structure matrix for {name!r} (no unit layout); architectures with one: "
                         f"{', '.join(supported_models())}")
    index = np.asarray(UNIT_LAYOUTS[name](model), dtype=np.int64)
    covered = np.sort(index.ravel())
    if not np.array_equal(covered, np.arange(model.num_parameters)):
        raise AssertionError(f"unit layout of {name!r} does not cover each parameter exactly once")
    return UnitLayout(index)


def unit_matrix(model) -> np.ndarray:
    """W ∈ R^{p×d} of the model's current parameters (units as columns)."""
    return unit_layout(model).unit_matrix(model.parameter_vector())




def units_only(model, theta, keep):
    """``(network, θ')``: ``model`` at the flat parameters ``theta`` with only its units ``keep`` (in that order), a
    network of the same family whose unit ``i`` is unit ``keep[i]`` and whose loss and gradient on those units are
    ``model``'s, because every unit left out is silent at ``theta`` (a zero readout adds ``0 · φ(·) = 0``, whatever
    its input weights and bias).  None where a unit left out is not silent, or for a family whose units' terms
    depend on their number or that has no such form here (only the two-layer MLP with the readout scale 1 has it:
    the mean-field net's ``1/m`` does not qualify).  The modes' search (:func:`shockflow.geometry.auto.find_modes`)
    differentiates the loss at the origin with one or two units moved: 2 units' gradients instead of 32."""
    if getattr(model, "name", None) != "mlp" or model._readout_scale() != 1.0:
        return None
    keep = np.asarray(keep, dtype=np.int64)
    index = unit_layout(model).index
    readout = index[:, -model.output_dim:]               # a unit's last entries: its readout column (_layout_mlp)
    dropped = np.setdiff1d(np.arange(index.shape[0]), keep)
    theta = np.asarray(theta, dtype=np.float64)
    if np.any(theta[readout[dropped]] != 0.0) or not np.all(np.isfinite(theta)):
        return None
    small = model.copy()
    small.width = int(keep.size)
    small._config = {**small._config, "width": int(keep.size)}
    full = model.copy()
    full.set_parameter_vector(theta)
    small.params["W"] = full.params["W"][keep].copy()
    if model.bias:
        small.params["b"] = full.params["b"][keep].copy()
    a = full.params["a"]
    small.params["a"] = (a[keep] if a.ndim == 1 else a[:, keep]).copy()
    return small, small.parameter_vector()


#: models that are chains of weight matrices (one weight per layer in every product)
CHAIN_MODELS = ("deep_linear", "deep_mlp")


@dataclass(frozen=True)
class ChainLayout:
    """A chain ``f(x) ≈ c^{L−1} W_L ⋯ W_1 x`` near zero weights: the weight keys ``W1 … WL`` in order and
    ``slope`` = φ'(0) (``c``; 1 for a linear chain)."""

    keys: tuple[str, ...]
    slope: float

    @property
    def depth(self) -> int:
        return len(self.keys)


def balance_conserved(model) -> bool:
    """Whether gradient flow keeps each unit's balance between its input and output weights: no activation between
    them (linear, bilinear and polynomial units: query-key pairs, diagonal and two-layer linear nets) or a positively
    homogeneous one (:attr:`~shockflow.models.activations.Activation.homogeneous`: identity, relu).  Where it is not
    kept (tanh, erf, gelu, sigmoid, a Fourier pair's tanh) a unit that saturates while its mode escapes leaves the
    balanced section its chart moves along (docs/theory.md §6, "The saddle chain")."""
    act = getattr(model, "activation", None)
    return act is None or bool(getattr(act, "homogeneous", True))


def chain_layout(model) -> ChainLayout:
    """The chain layout of a ``deep_linear`` / ``deep_mlp`` network of depth ≥ 3 (weight matrices).

    Refused (``ValueError`` naming the model and why): depth 2 (a sum over units: :func:`unit_layout`),
    an activation with φ(0) ≠ 0 (its layers do not vanish at zero weights: a bias-like offset the
    product form does not have) or with φ'(0) = 0 (no linear part at zero: e.g. relu's kink, whose
    leading form is not the product of the layers)."""
    name = getattr(model, "name", type(model).__name__)
    if name not in CHAIN_MODELS:
        raise ValueError(f"model: {name!r} is not a chain of weight matrices ({', '.join(CHAIN_MODELS)})")
    depth = int(model.depth)
    if depth < 3:
        raise ValueError(f"model: the {name!r} network has {depth} weight matrices; a chain needs at least 3 "
                         f"(two layers are a sum over hidden units: use 'linear2' or 'mlp')")
    act = model.activation
    at_zero = float(np.asarray(act.fn(np.zeros(1)))[0])
    if at_zero != 0.0 or not act.grad_at_zero > 0:
        raise ValueError(f"model: the {name!r} chain with activation {act.name!r} has φ(0) = {at_zero:g}, "
                         f"φ'(0) = {act.grad_at_zero:g}; the balanced section needs φ(0) = 0 and φ'(0) > 0 "
                         f"(the layers' product is the leading form near zero weights only then)")
    return ChainLayout(tuple(f"W{l}" for l in range(1, depth + 1)), float(act.grad_at_zero))
