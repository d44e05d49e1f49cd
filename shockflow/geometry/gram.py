"""The gram geometry: rotations of interchangeable units, order parameter M = WᵀW (docs/theory.md §1, §2).

**Symmetry.**  Let the loss depend on a weight array ``W ∈ R^{p×d}`` (one row per interchangeable
unit) only through ``M = WᵀW`` — the trace-form quadratic network ``f = Tr[S Z]``, phase retrieval
``f = (w·a)²`` (``p = 1``) and the diagonal net ``f = Σ x_k u_k²/4`` (which sees only ``diag M``).
Then ``L(RW) = L(W)`` for every orthogonal ``R`` and the quotient coordinate is ``M``.

**Metric.**  With ``G = ∂L̄/∂M`` (symmetric), ``∇_W L = 2 W G``, so gradient flow ``Ẇ = -2WG`` gives

    Ṁ = ẆᵀW + WᵀẆ = -2 (G M + M G):          the mobility G ↦ 2(GM + MG)      (:func:`gram_mobility`).

**Eigen-coordinates.**  In an orthonormal basis ``P`` (columns ``p_k``) in which ``M`` is diagonal,
``z_k = p_kᵀ M p_k`` and ``ż_k = -2 (GM + MG)_kk = -4 z_k G_kk = -4 z_k ∂L̄/∂z_k``: the mobility is
``diag(4 z_k)``, the metric ``dz²/(4z)``, degenerate at ``z_k = 0`` (a unit that is off cannot be
switched on by gradient flow).  This holds at every instant at which ``M`` is diagonal in ``P``;
when the data matrices commute (docs/theory.md §2, Lotka–Volterra) the flow keeps ``M`` diagonal and the
chart is invariant.  ``r_k = sqrt(z_k)`` is a flat coordinate: ``ṙ_k = -∂L̄/∂r_k`` (mobility 1),
``r ↦ -r`` a mirror of the chart (even boundary condition at ``r = 0``).

**Conserved.**  A rotation symmetry conserves nothing under gradient flow (it only makes
``∇L Wᵀ`` symmetric); what the commuting case conserves is the eigenbasis, reported as
``offdiagonal = ‖PᵀMP - diag‖_F`` (zero on the section, and stays zero when the data commute).

**Section.**  ``M = P diag(z) Pᵀ`` with the chart's modes set to the point and the other modes at
their reference values; ``W = diag(sqrt z) Pᵀ`` keeping the ``p`` largest modes (an error names the
point if more than ``p`` modes are on), the diagonal net ``u_k = ±sqrt(z_k)`` (reference signs).
"""

from __future__ import annotations

from functools import cached_property

from dataclasses import dataclass
from typing import Any

import numpy as np

from shockflow.geometry.base import Chart, Geometry, GeometryError
from shockflow.geometry.registry import register
from shockflow.models.base import Model

__all__ = ["GramGeometry", "gram_mobility"]

#: model name -> the weight array whose Gram matrix the loss depends on
_ARRAYS = {"quadratic": "W", "phase_retrieval": "w", "diagonal": "u"}


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    """``np.allclose(a, b)`` (rtol 1e-5, atol 1e-8, NaN never close) in one expression: a geometry is bound
    several times per chart (the chart widened), and allclose's general path was half of a bind."""
    return bool(np.all(np.abs(a - b) <= 1e-8 + 1e-5 * np.abs(b)))


def gram_mobility(M: np.ndarray, G: np.ndarray) -> np.ndarray:
    """The velocity ``Ṁ = -2(GM + MG)`` of the order parameter for the gradient ``G = ∂L̄/∂M``."""
    return -2.0 * (G @ M + M @ G)


@register
@dataclass(frozen=True, eq=False)
class GramGeometry(Geometry):
    """Mode strengths ``z_k = p_kᵀ (WᵀW) p_k`` (or ``r_k = sqrt z_k``) along 1–2 modes of a basis ``P``."""

    name = "gram"
    symmetry = "rotations W -> R W of interchangeable units (R orthogonal); order parameter M = WᵀW"
    models = tuple(_ARRAYS)

    model: Model
    modes: Any = (0,)
    basis: Any = None
    coordinate: str = "z"
    extent: float = 1.0

    def __post_init__(self):
        self.check_model()
        m = self.model
        if m.name == "quadratic" and m.form != "trace":
            raise GeometryError("model: the gram geometry needs the quadratic network with form='trace' (f = Tr[S Z]); found form='sum'")
        if m.name == "diagonal" and m.form != "u2":
            raise GeometryError("model: the gram geometry needs the diagonal network with form='u2'; found form='uv'")
        if self.coordinate not in ("z", "r"):
            raise GeometryError(f"coordinate: expected 'z' (mode strength, mobility 4z) or 'r' (sqrt z, flat), found {self.coordinate!r}")
        d = self._weights(m.params).shape[1]
        modes = tuple(int(k) for k in np.atleast_1d(self.modes))
        if not 1 <= len(modes) <= 2 or len(set(modes)) != len(modes) or any(not 0 <= k < d for k in modes):
            raise GeometryError(f"modes: expected 1 or 2 distinct mode indices in 0..{d - 1}, found {self.modes!r}")
        if self.basis is None:
            if m.name == "diagonal":
                P = np.eye(d)
            else:
                evals, evecs = np.linalg.eigh(self._gram(m.params))
                P = evecs[:, ::-1]
        else:
            P = np.asarray(self.basis, dtype=np.float64)
        if P.shape != (d, d) or not _close(P.T @ P, np.eye(d)):
            raise GeometryError(f"basis: expected an orthogonal ({d}, {d}) matrix (columns p_k), found shape {P.shape}")
        if m.name == "diagonal" and not _close(P, np.eye(d)):
            raise GeometryError("basis: the diagonal network depends on diag(M) only; its basis must be the identity")
        if not (np.isfinite(self.extent) and self.extent > 0):
            raise GeometryError(f"extent: expected the largest mode strength z (> 0), found {self.extent!r}")
        object.__setattr__(self, "modes", modes)
        object.__setattr__(self, "basis", P)

    # -- helpers ---------------------------------------------------------------------------
    @property
    def array(self) -> str:
        return _ARRAYS[self.model.name]

    def _weights(self, params) -> np.ndarray:
        W = np.asarray(params[_ARRAYS[self.model.name]], dtype=np.float64)
        return W[None, :] if W.ndim == 1 else W

    def _gram(self, params) -> np.ndarray:
        W = self._weights(params)
        if self.model.name == "diagonal":
            return np.diag(W[0] ** 2)
        return W.T @ W

    def mode_strengths(self, params) -> np.ndarray:
        """All ``z_k = p_kᵀ M p_k`` of a parameter set."""
        if self.model.name == "diagonal":   # M = diag(u²), P = I: the same numbers without the triple product
            return self._weights(params)[0] ** 2
        M = self._gram(params)
        return np.einsum("ik,ij,jk->k", self.basis, M, self.basis)

    # -- interface -------------------------------------------------------------------------
    @cached_property   # the settings are frozen: one Chart per geometry (it was rebuilt on every read)
    def chart(self) -> Chart:
        top = self.extent if self.coordinate == "z" else float(np.sqrt(self.extent))
        names = tuple(f"{self.coordinate}{k}" for k in self.modes)
        return Chart(names, (0.0,) * len(names), (top,) * len(names),
                     degenerate="z_k = 0 (mobility 4 z_k -> 0)" if self.coordinate == "z" else "nowhere (flat; r = 0 is a mirror)")

    def coordinates(self, params):
        z = self.mode_strengths(self.check_params(params))[list(self.modes)]
        return z if self.coordinate == "z" else np.sqrt(z)

    def strength(self, points):
        """The mode strength z (``r = sqrt z`` squared)."""
        p = np.asarray(points, dtype=np.float64)
        return p if self.coordinate == "z" else p ** 2

    def conserved(self, params):
        M = self._gram(self.check_params(params))
        B = self.basis.T @ M @ self.basis
        return {"offdiagonal": np.array(np.linalg.norm(B - np.diag(np.diag(B))))}

    def mobility(self, points):
        p = np.asarray(points, dtype=np.float64)
        if self.coordinate == "r":
            return np.broadcast_to(np.eye(self.dim), (*p.shape[:-1], self.dim, self.dim)).copy()
        out = np.zeros((*p.shape, self.dim))
        for k in range(self.dim):
            out[..., k, k] = 4.0 * p[..., k]
        return out

    def section(self, points):
        p = self.chart.check(points)
        lead = p.shape[:-1]
        z_ref = self.mode_strengths(self.model.params)
        z_ref = np.where(z_ref > 1e-12 * max(z_ref.max(), 1e-300), z_ref, 0.0)  # rank-deficient M: rounding
        z = np.broadcast_to(z_ref, (*lead, z_ref.size)).copy()
        for i, k in enumerate(self.modes):
            z[..., k] = p[..., i] if self.coordinate == "z" else p[..., i] ** 2
        root = np.sqrt(z)
        ref = {k: np.broadcast_to(v, (*lead, *v.shape)).copy() for k, v in self.model.params.items()
               if not (self.model.name == "diagonal" and k == "u")}
        if self.model.name == "diagonal":
            sign = np.where(self.model.params["u"] < 0, -1.0, 1.0)
            ref["u"] = sign * root
            return ref
        rows = root[..., :, None] * self.basis.T  # (..., d, d): row k = sqrt(z_k) p_kᵀ
        W_ref = self._weights(self.model.params)
        p_rows = W_ref.shape[0]
        order = np.argsort(-z, axis=-1)
        keep = np.take_along_axis(rows, order[..., :p_rows, None], axis=-2)
        if order.shape[-1] > p_rows:
            dropped = np.take_along_axis(z, order[..., p_rows:], axis=-1)
            bad = np.any(dropped > 0, axis=-1)
            if bad.any():
                index = tuple(int(i) for i in np.argwhere(bad)[0])
                raise GeometryError(
                    f"points: point {index} = {p[index].tolist()} switches on more than p = {p_rows} modes "
                    f"(the model has {p_rows} unit(s)); M = WᵀW has rank <= {p_rows}"
                )
        if keep.shape[-2] < p_rows:
            pad = np.zeros((*lead, p_rows - keep.shape[-2], keep.shape[-1]))
            keep = np.concatenate([keep, pad], axis=-2)
        ref[self.array] = keep[..., 0, :] if self.model.params[self.array].ndim == 1 else keep
        return ref
