"""The rescaling geometry: per-unit positive rescaling of a homogeneous unit (docs/theory.md §1).

**Symmetry.**  A unit with output weight ``a`` and input weights ``w`` (bias appended, if any)
contributes ``a φ(w·x)`` with ``φ`` positively homogeneous of degree 1 (ReLU, identity), so
``(a, w) ↦ (a/λ, λ w)`` (λ > 0) leaves the network unchanged.  The quotient coordinate is
``q = a w`` (``a φ(w·x) = s φ(s q·x)`` with ``s = sign a``, fixed along the flow when ``c > 0``; for
``c < 0`` the sign of ``w`` is, see Section).

**Conserved.**  ``∂_a L = w·∇_q L̄`` and ``∇_w L = a ∇_q L̄``, so gradient flow gives
``d/dt (a²) = -2a w·∇_q L̄ = d/dt |w|²``: ``c = a² - |w|²`` is conserved (balancedness).

**Metric.**  ``q̇ = ȧ w + a ẇ = -(w wᵀ + a² I) ∇_q L̄`` and ``w = q/a``, so the mobility is

    g^{-1}(q) = a² I + q qᵀ / a²,     a² = (c + sqrt(c² + 4|q|²)) / 2

(from ``|q|² = a² |w|² = a² (a² - c)``).  It degenerates where ``a → 0``, i.e. at ``q = 0`` when
``c ≤ 0``: for ``c = 0`` it vanishes there like ``|q|`` (``2|q|`` in one dimension), for ``c < 0``
only the radial part ``|c| q̂ q̂ᵀ`` survives.  At ``q = 0`` exactly the code uses ``a² I`` (the
``q qᵀ/a²`` term is set to zero), the limit for ``c ≥ 0``; for ``c < 0`` it uses the section's
``w wᵀ = |c| e_0 e_0ᵀ`` (in one dimension the exact limit ``|c|`` of ``sqrt(c² + 4q²)``).

**Section.**  ``a = s sqrt(a²)``, ``w = q/a``.  Which of ``a`` and ``w`` keeps its sign along the flow is
set by ``c``: for ``c > 0`` ``a² ≥ c`` never vanishes, ``s = sign a`` of the reference; for ``c < 0``
``|w|² = a² − c ≥ |c|`` never vanishes and ``a`` passes through zero where ``q`` does, so ``w`` stays on
the side of its reference direction, ``s = sign(q·w_ref)`` (a ReLU unit keeps the inputs it sees and
changes the sign of its output weight; with ``a``'s sign held instead, its ``w`` would flip onto the other
half-space at ``q = 0``).  At ``a = 0`` (``q = 0``, ``c ≤ 0``) ``w = sqrt(-c) ŵ_ref`` (``e_0`` for ``c = 0``).
All other units keep their reference parameters.  Works for the two-layer ``mlp`` (ReLU or
identity activation, scalar output, with or without bias) and ``linear2`` (scalar output), and for

* ``cnn1d`` (ReLU or identity, scalar output): unit ``j`` is output channel ``j``,
  ``a = a_j``, ``w = vec K_j`` (bias ``b_j`` appended): ``a_j Σ_p φ(K_j·x_p + b_j)`` is homogeneous
  in the same way (the sum pooling is linear);
* ``attention_qk`` with ``d_model = 1``: a head's score ``x_t B x_s`` has the scalar
  ``B_h = Σ_k W_Q[h,0,k] W_K[h,0,k]``, and each column ``k`` is a rescaling pair
  ``(W_Q[h,0,k], W_K[h,0,k]) ↦ (W_Q/λ, λ W_K)`` (the GL(1) of a ``d_k = 1`` head, restricted to
  λ > 0): unit ``j = h d_k + k`` has ``a = W_Q[h,0,k]``, ``w = (W_K[h,0,k],)``, ``q = a w``.  Unlike
  the ``attention`` geometry's chart (σ ≥ 0 with the singular vectors of the reference ``B``, balanced
  weights) this chart is signed and keeps the imbalance ``c`` of the initialisation.
"""

from __future__ import annotations

from functools import cached_property

from dataclasses import dataclass

import numpy as np

from shockflow.geometry.base import Chart, Geometry, GeometryError
from shockflow.geometry.registry import register
from shockflow.models.base import Model

__all__ = ["RescalingGeometry", "rescaling_mobility"]


def rescaling_mobility(q: np.ndarray, c: float) -> np.ndarray:
    """``a² I + q qᵀ/a²`` with ``a² = (c + sqrt(c² + 4|q|²))/2`` at points ``q (..., d)``."""
    q = np.asarray(q, dtype=np.float64)
    a2 = 0.5 * (c + np.sqrt(c * c + 4.0 * np.sum(q * q, axis=-1)))
    d = q.shape[-1]
    # at a = 0 (q = 0 with c < 0) the section's w = sqrt(-c) e_0 gives w wᵀ = |c| e_0 e_0ᵀ (in one
    # dimension the exact limit sqrt(c² + 4q²) -> |c|); for c >= 0 the term vanishes there
    at_zero = np.zeros((d, d))
    at_zero[0, 0] = max(-float(c), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        outer = np.where(a2[..., None, None] > 0, q[..., :, None] * q[..., None, :] / a2[..., None, None], at_zero)
    return a2[..., None, None] * np.eye(d) + outer


@register
@dataclass(frozen=True, eq=False)
class RescalingGeometry(Geometry):
    """``q = a_j w_j`` of one homogeneous unit ``j``, with the conserved ``c = a_j² - |w_j|²``."""

    name = "rescaling"
    symmetry = "per-unit positive rescaling (a, w) -> (a/λ, λ w) of a homogeneous (ReLU/linear) unit; coordinate q = a w"
    models = ("mlp", "linear2", "cnn1d", "attention_qk")

    model: Model
    unit: int = 0
    extent: float = 1.0
    c: float | None = None

    def __post_init__(self):
        self.check_model()
        m = self.model
        if m.output_dim != 1:
            raise GeometryError(f"model: the rescaling geometry needs a scalar output, found output_dim = {m.output_dim}")
        if m.name in ("mlp", "cnn1d") and m.activation.name not in ("relu", "identity"):
            raise GeometryError(
                f"model: rescaling needs a positively homogeneous activation ('relu' or 'identity'), found {m.activation.name!r}"
            )
        if m.name == "attention_qk" and m.d_model != 1:
            raise GeometryError(f"model: rescaling of attention_qk needs d_model = 1 (a scalar B = Σ_k W_Q W_K per head), "
                                f"found d_model = {m.d_model}; use the 'attention' geometry")
        width = {"mlp": lambda: m.width, "cnn1d": lambda: m.out_channels,
                 "attention_qk": lambda: m.heads * m.d_k}.get(m.name, lambda: m.params["W1"].shape[0])()
        if isinstance(self.unit, bool) or not isinstance(self.unit, (int, np.integer)) or not 0 <= self.unit < width:
            raise GeometryError(f"unit: expected a unit index in 0..{width - 1}, found {self.unit!r}")
        if not (np.isfinite(self.extent) and self.extent > 0):
            raise GeometryError(f"extent: expected a half-width > 0 of the chart box, found {self.extent!r}")
        a, w = self._unit(m.params)
        c = float(a * a - w @ w) if self.c is None else float(self.c)
        if not np.isfinite(c):
            raise GeometryError(f"c: expected a finite conserved value a² - |w|², found {self.c!r}")
        object.__setattr__(self, "c", c)

    # -- unit access ------------------------------------------------------------------------
    def _unit(self, params):
        j = self.unit
        if self.model.name == "mlp":
            w = params["W"][j]
            if self.model.bias:
                w = np.append(w, params["b"][j])
            return float(params["a"][j]), np.asarray(w, dtype=np.float64)
        if self.model.name == "cnn1d":
            w = np.ravel(params["K"][j])
            if self.model.bias:
                w = np.append(w, params["b"][j])
            return float(params["a"][j]), np.asarray(w, dtype=np.float64)
        if self.model.name == "attention_qk":
            h, k = divmod(j, self.model.d_k)
            return float(params["W_Q"][h, 0, k]), np.array([params["W_K"][h, 0, k]], dtype=np.float64)
        return float(params["W2"][0, j]), np.asarray(params["W1"][j], dtype=np.float64)

    @property
    def sign(self) -> float:
        a, _ = self._unit(self.model.params)
        return -1.0 if a < 0 else 1.0

    # -- interface -------------------------------------------------------------------------
    @cached_property   # the settings are frozen: one Chart per geometry (it was rebuilt on every read)
    def chart(self) -> Chart:
        a, w = self._unit(self.model.params)
        names = tuple(f"q{i}" for i in range(w.size))
        where = f"q = 0 (a = 0 there since c = {self.c:.3g} <= 0)" if self.c <= 0 else "nowhere (c > 0)"
        return Chart(names, (-self.extent,) * w.size, (self.extent,) * w.size, degenerate=where)

    def coordinates(self, params):
        a, w = self._unit(self.check_params(params))
        return a * w

    def conserved(self, params):
        a, w = self._unit(self.check_params(params))
        return {"c": np.array(a * a - w @ w)}

    def mobility(self, points):
        return rescaling_mobility(points, self.c)

    def section(self, points):
        q = self.chart.check(points)
        lead = q.shape[:-1]
        a2 = 0.5 * (self.c + np.sqrt(self.c**2 + 4.0 * np.sum(q * q, axis=-1)))
        _, w_ref = self._unit(self.model.params)
        norm = float(np.linalg.norm(w_ref))
        if self.c < 0 and norm > 0:
            # |w|² = a² − c ≥ |c| > 0: a passes through zero, w does not; w stays on its reference side
            side = np.sign(q @ w_ref)
            a = np.where(side == 0, self.sign, side) * np.sqrt(a2)
            e0 = np.sqrt(-self.c) * w_ref / norm
        else:
            a = self.sign * np.sqrt(a2)
            e0 = np.zeros(q.shape[-1])
            e0[0] = np.sqrt(max(-self.c, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(a[..., None] != 0, q / np.where(a == 0, 1.0, a)[..., None], 0.0)
        if np.any(a == 0):
            w = np.where((a == 0)[..., None], e0, w)
        out = {k: np.broadcast_to(v, (*lead, *v.shape)).copy() for k, v in self.model.params.items()}
        j = self.unit
        if self.model.name == "mlp":
            d = self.model.input_dim
            out["W"][..., j, :] = w[..., :d]
            if self.model.bias:
                out["b"][..., j] = w[..., d]
            out["a"][..., j] = a
        elif self.model.name == "cnn1d":
            P = self.model.patch_dim
            out["K"][..., j, :, :] = w[..., :P].reshape(*lead, *self.model.params["K"].shape[1:])
            if self.model.bias:
                out["b"][..., j] = w[..., P]
            out["a"][..., j] = a
        elif self.model.name == "attention_qk":
            h, k = divmod(j, self.model.d_k)
            out["W_Q"][..., h, 0, k] = a
            out["W_K"][..., h, 0, k] = w[..., 0]
        else:
            out["W1"][..., j, :] = w
            out["W2"][..., 0, j] = a
        return out
