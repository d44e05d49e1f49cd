"""The attention geometry: GL(d_k) acting on query and key weights (docs/theory.md §1, §2).

**Symmetry.**  A head's scores ``x_tᵀ W_Q W_Kᵀ x_s / sqrt(d_k)`` depend on ``(W_Q, W_K)`` only through
``B = W_Q W_Kᵀ`` (``d_model × d_model``, rank ``≤ d_k``): ``(W_Q, W_K) ↦ (W_Q A, W_K A^{-T})`` for any
invertible ``A``.  The quotient coordinate is ``B``; its singular values ``σ_k`` (``B = Σ σ_k u_k v_kᵀ``)
are the symmetry-corrected observables (not ‖W_Q‖, ‖W_K‖ separately).

**Conserved.**  With ``G = ∂L̄/∂B``: ``∇_{W_Q} L = G W_K`` and ``∇_{W_K} L = Gᵀ W_Q``, so
``d/dt (W_QᵀW_Q) = -(W_QᵀG W_K + W_KᵀGᵀW_Q) = d/dt (W_KᵀW_K)``: ``C = W_QᵀW_Q - W_KᵀW_K`` is
conserved (``d_k × d_k``); *balanced* initialisation is ``C = 0``.

**Metric.**  ``Ḃ = -(W_Q W_Qᵀ G + G W_K W_Kᵀ)``; balanced, ``W_Q = U S^{1/2} R``, ``W_K = V S^{1/2} R``
(R orthogonal), so ``W_Q W_Qᵀ = (BBᵀ)^{1/2}`` and ``W_K W_Kᵀ = (BᵀB)^{1/2}``:

    Ḃ = -((BBᵀ)^{1/2} G + G (BᵀB)^{1/2})                 (:func:`attention_mobility`).

Along fixed singular vectors ``σ̇_k = u_kᵀ Ḃ v_k = -2 σ_k ∂L̄/∂σ_k``: mobility ``diag(2σ_k)``,
degenerate at ``σ_k = 0`` (a zero query–key mode is a stationary ridge; docs/theory.md §1: its curvature
vanishes there, so the escape is an integral, not a logarithm).  The chart holds 1–2 singular
values of one head with the singular vectors of the reference ``B`` fixed (exact for the velocity
at a balanced point whose ``B`` has these singular vectors; the chart is invariant when the data
keep them).

**Where it does not apply.**  From a small random initial ``B`` (``d_k ≥ 2``) the reference singular vectors are
random, not the data's: the flow rotates them, and the chart's coordinate can run into ``σ = 0`` (the chart's
minimum then lies at its start).  The prediction refuses such a chart (exit 1 naming it: no plateau to escape
from, :func:`shockflow.prediction.mapping.predict_transitions`); the automatic charts (``auto``) suit that case.

**Section.**  Balanced ``W_Q = U_r diag(sqrt σ)``, ``W_K = V_r diag(sqrt σ)`` from the reference
singular vectors (the first ``d_k``), other singular values at their reference values.
"""

from __future__ import annotations

from functools import cached_property

from dataclasses import dataclass
from typing import Any

import numpy as np

from shockflow.geometry.base import Chart, Geometry, GeometryError
from shockflow.geometry.registry import register
from shockflow.models.base import Model

__all__ = ["AttentionGeometry", "attention_mobility"]


def _psd_sqrt(S: np.ndarray) -> np.ndarray:
    vals, vecs = np.linalg.eigh(S)
    return (vecs * np.sqrt(np.maximum(vals, 0.0))) @ vecs.T


def attention_mobility(B: np.ndarray, G: np.ndarray) -> np.ndarray:
    """``Ḃ = -((BBᵀ)^{1/2} G + G (BᵀB)^{1/2})`` for balanced query/key weights and ``G = ∂L̄/∂B``."""
    return -(_psd_sqrt(B @ B.T) @ G + G @ _psd_sqrt(B.T @ B))


@register
@dataclass(frozen=True, eq=False)
class AttentionGeometry(Geometry):
    """Singular values ``σ_k`` of ``B_h = W_Q[h] W_K[h]ᵀ`` of one head, balanced weights."""

    name = "attention"
    symmetry = "GL(d_k) acting on a head's (W_Q, W_K) -> (W_Q A, W_K A^-T); coordinate B = W_Q W_Kᵀ and its singular values"
    models = ("attention_qk", "attention")

    model: Model
    head: int = 0
    modes: Any = (0,)
    extent: float = 1.0

    def __post_init__(self):
        self.check_model()
        H, D, dk = self.model.params["W_Q"].shape
        if isinstance(self.head, bool) or not isinstance(self.head, (int, np.integer)) or not 0 <= self.head < H:
            raise GeometryError(f"head: expected a head index in 0..{H - 1}, found {self.head!r}")
        modes = tuple(int(k) for k in np.atleast_1d(self.modes))
        if not 1 <= len(modes) <= 2 or len(set(modes)) != len(modes) or any(not 0 <= k < min(dk, D) for k in modes):
            raise GeometryError(f"modes: expected 1 or 2 distinct singular-value indices in 0..{min(dk, D) - 1}, found {self.modes!r}")
        if not (np.isfinite(self.extent) and self.extent > 0):
            raise GeometryError(f"extent: expected the largest singular value (> 0), found {self.extent!r}")
        U, s, Vt = np.linalg.svd(self.product(self.model.params))
        object.__setattr__(self, "modes", modes)
        object.__setattr__(self, "_U", U[:, :dk])
        object.__setattr__(self, "_V", Vt.T[:, :dk])
        object.__setattr__(self, "_s", s[:dk].copy())

    def product(self, params) -> np.ndarray:
        """``B = W_Q W_Kᵀ`` of the head."""
        return params["W_Q"][self.head] @ params["W_K"][self.head].T

    @cached_property   # the settings are frozen: one Chart per geometry (it was rebuilt on every read)
    def chart(self) -> Chart:
        names = tuple(f"sigma{k}" for k in self.modes)
        return Chart(names, (0.0,) * len(names), (self.extent,) * len(names), degenerate="sigma_k = 0 (mobility 2 sigma_k -> 0)")

    def coordinates(self, params):
        B = self.product(self.check_params(params))
        return np.array([self._U[:, k] @ B @ self._V[:, k] for k in self.modes])

    def conserved(self, params):
        p = self.check_params(params)
        Q, K = p["W_Q"][self.head], p["W_K"][self.head]
        return {"balance": Q.T @ Q - K.T @ K}

    def mobility(self, points):
        p = np.asarray(points, dtype=np.float64)
        out = np.zeros((*p.shape, self.dim))
        for i in range(self.dim):
            out[..., i, i] = 2.0 * p[..., i]
        return out

    def section(self, points):
        p = self.chart.check(points)
        lead = p.shape[:-1]
        s = np.broadcast_to(self._s, (*lead, self._s.size)).copy()
        for i, k in enumerate(self.modes):
            s[..., k] = p[..., i]
        root = np.sqrt(np.maximum(s, 0.0))
        out = {k: np.broadcast_to(v, (*lead, *v.shape)).copy() for k, v in self.model.params.items()}
        out["W_Q"][..., self.head, :, :] = self._U * root[..., None, :]
        out["W_K"][..., self.head, :, :] = self._V * root[..., None, :]
        return out
