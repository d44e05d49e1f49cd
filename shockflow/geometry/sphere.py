"""The sphere geometry: scale invariance of a normalised layer (docs/theory.md §1).

**Convention (ours: a weight-normalised layer).**  The network sees the array ``p = ρ w/|w|`` in place
of the raw weight ``w`` of the model array ``parameter`` (``ρ`` = ``gain``), so the loss
``L(w) = L_model(ρ ŵ)`` is invariant under ``w ↦ λ w`` (λ > 0) and the quotient is the unit sphere
``S^{d-1}`` of directions ``ŵ``.  :meth:`SphereGeometry.loss_and_grad` is the layer's backward pass,
``∇_w L = (ρ/|w|) (I - ŵŵᵀ) ∇_p L_model``.

**Conserved.**  ``w · ∇_w L = 0``, so gradient flow conserves ``|w|²`` (``norm2``).

**Metric.**  ``dŵ/dt = (I - ŵŵᵀ) ẇ / |w| = -(1/|w|²) grad_S L̄(ŵ)`` with ``L̄(ŵ) = L_model(ρ ŵ)`` and the
round-sphere gradient ``grad_S``: the round metric with mobility ``1/|w|²`` — the effective step
``η/|w|²`` of a normalised layer.  Constant on the orbit, so nothing degenerates; since it is a
constant multiple of the round metric, the local-entropy HJ on the sphere is the unit-sphere
problem in the rescaled time ``γ/|w|²``.

**Charts.**  The 1-D periodic chart ``θ ∈ [0, 2π)`` of the great circle ``ŵ = cos θ e1 + sin θ e2``
through the reference direction (``e1 = ŵ_ref``; ``e2`` given or the first orthonormal complement);
its coordinate velocity is ``θ̇ = -(1/|w|²) ∂_θ L̄`` (the tangential component of the flow).  For
``d = 3`` :meth:`SphereGeometry.mesh_problem` gives the whole sphere as an icosphere for
:func:`solvers.surfaces.hamilton_jacobi.solve_surface_hj` (a latitude–longitude chart would make the mobility
blow up at the poles).
"""

from __future__ import annotations

from functools import cached_property

from dataclasses import dataclass
from typing import Any

import numpy as np

from shockflow.geometry.base import Chart, Geometry, GeometryError
from shockflow.geometry.batched_loss import batched_loss
from shockflow.geometry.registry import register
from shockflow.models.base import Model

__all__ = ["SphereGeometry", "SphereMeshProblem"]


@dataclass(frozen=True)
class SphereMeshProblem:
    """The local-entropy HJ on the whole sphere S²: ``u0 = L̄`` at the icosphere vertices, time scale ``1/|w|²``."""

    mesh: Any
    u0: np.ndarray
    time_scale: float

    def solve(self, times, nu: float = 0.0, **settings):
        """``∂_γ u + ½|∇u|²_g = ν Δ_g u`` with ``g = |w|² g_round``: the unit-sphere solve at ``γ/|w|²``."""
        from solvers.surfaces import solve_surface_hj

        return solve_surface_hj(self.mesh, self.u0, np.asarray(times, dtype=np.float64) * self.time_scale, nu=nu, **settings)


@register
@dataclass(frozen=True, eq=False)
class SphereGeometry(Geometry):
    """Directions ``ŵ = w/|w|`` of a weight-normalised array; the great-circle chart ``θ``."""

    name = "sphere"
    symmetry = "scale invariance w -> λ w of a normalised layer (network sees ρ w/|w|); quotient: the sphere of directions"

    model: Model
    parameter: str = "w"
    gain: float = 1.0
    e2: Any = None

    def __post_init__(self):
        self.check_model()
        if self.parameter not in self.model.params:
            raise GeometryError(
                f"parameter: the {self.model.name!r} model has no array {self.parameter!r}; it has {', '.join(self.model.params)}"
            )
        w = self.model.params[self.parameter].ravel()
        if w.size < 2:
            raise GeometryError(f"parameter: a sphere needs an array of at least 2 entries, {self.parameter!r} has {w.size}")
        norm = np.linalg.norm(w)
        if not norm > 0:
            raise GeometryError(f"params[{self.parameter!r}]: the reference weight is zero; its direction is undefined")
        if not (np.isfinite(self.gain) and self.gain > 0):
            raise GeometryError(f"gain: expected a number > 0, found {self.gain!r}")
        e1 = w / norm
        if self.e2 is None:
            basis = np.linalg.svd(e1[None, :])[2]  # rows: e1 (up to sign) then its complement
            e2 = basis[1]
        else:
            e2 = np.asarray(self.e2, dtype=np.float64).ravel()
            if e2.shape != e1.shape:
                raise GeometryError(f"e2: expected a direction of length {e1.size}, found shape {np.shape(self.e2)}")
            e2 = e2 - (e2 @ e1) * e1
            if np.linalg.norm(e2) < 1e-12:
                raise GeometryError("e2: must not be parallel to the reference direction w/|w|")
            e2 = e2 / np.linalg.norm(e2)
        object.__setattr__(self, "e2", e2)
        object.__setattr__(self, "_e1", e1)
        object.__setattr__(self, "_norm2", float(norm**2))

    # -- the normalised layer --------------------------------------------------------------
    def network_params(self, params) -> dict[str, np.ndarray]:
        """The arrays the network sees: ``p = ρ w/|w|`` in place of the raw ``w`` (batched allowed)."""
        out = dict(params)
        w = np.asarray(params[self.parameter], dtype=np.float64)
        shape = self.model.params[self.parameter].shape
        lead = w.shape[: w.ndim - len(shape)]
        flat = w.reshape(*lead, -1)
        out[self.parameter] = (self.gain * flat / np.linalg.norm(flat, axis=-1, keepdims=True)).reshape(w.shape)
        return out

    def loss_and_grad(self, params, X, y) -> tuple[float, dict[str, np.ndarray]]:
        """Loss and raw gradient of the normalised network: ``∇_w L = (ρ/|w|)(I - ŵŵᵀ)∇_p L_model``."""
        params = self.check_params(params)
        clone = self.model.copy()
        for k, v in self.network_params(params).items():
            clone.params[k][...] = v
        value, grads = clone.loss_and_grad(X, y)
        w = params[self.parameter].ravel()
        n = np.linalg.norm(w)
        u = w / n
        g = grads[self.parameter].ravel()
        grads[self.parameter] = (self.gain / n * (g - (g @ u) * u)).reshape(params[self.parameter].shape)
        return value, grads

    # -- interface -------------------------------------------------------------------------
    @cached_property   # the settings are frozen: one Chart per geometry (it was rebuilt on every read)
    def chart(self) -> Chart:
        return Chart(("theta",), (0.0,), (2 * np.pi,), periodic=(True,), degenerate="nowhere (mobility 1/|w|² on the orbit)")

    def coordinates(self, params):
        w = self.check_params(params)[self.parameter].ravel()
        return np.array([np.arctan2(w @ self.e2, w @ self._e1) % (2 * np.pi)])

    def conserved(self, params):
        w = self.check_params(params)[self.parameter]
        return {"norm2": np.array(float(np.sum(w * w)))}

    def mobility(self, points):
        p = np.asarray(points, dtype=np.float64)
        return np.full((*p.shape[:-1], 1, 1), 1.0 / self._norm2)

    def directions(self, points) -> np.ndarray:
        """Unit vectors ``cos θ e1 + sin θ e2`` of chart points ``(..., 1)``."""
        th = np.asarray(points, dtype=np.float64)[..., 0]
        return np.cos(th)[..., None] * self._e1 + np.sin(th)[..., None] * self.e2

    def section(self, points):
        p = self.chart.check(points)
        u = self.directions(p)
        lead = p.shape[:-1]
        out = {k: np.broadcast_to(v, (*lead, *v.shape)).copy() for k, v in self.model.params.items()}
        out[self.parameter] = (np.sqrt(self._norm2) * u).reshape(*lead, *self.model.params[self.parameter].shape)
        return out

    def chart_loss(self, points, X, y):
        p = self.chart.check(points)
        flat = self.section(p.reshape(-1, 1))
        return batched_loss(self.model, self.network_params(flat), X, y).reshape(p.shape[:-1])

    def mesh_problem(self, n: int, X, y) -> SphereMeshProblem:
        """``L̄`` on the vertices of a frequency-``n`` icosphere (``d = 3`` arrays only)."""
        from solvers.surfaces import icosphere

        d = self.model.params[self.parameter].size
        if d != 3:
            raise GeometryError(f"mesh_problem: the whole-sphere mesh is S² (an array of 3 entries); {self.parameter!r} has {d}")
        mesh = icosphere(n)
        u = mesh.vertices / np.linalg.norm(mesh.vertices, axis=1, keepdims=True)
        params = {k: np.broadcast_to(v, (len(u), *v.shape)).copy() for k, v in self.model.params.items()}
        params[self.parameter] = (self.gain * u).reshape(len(u), *self.model.params[self.parameter].shape)
        u0 = batched_loss(self.model, params, X, y)
        return SphereMeshProblem(mesh, u0, 1.0 / self._norm2)


class WeightNormalised:
    """The training view of a sphere case: ``model`` with its ``parameter`` array normalised.

    The network sees ``ρ w/|w|`` (:meth:`SphereGeometry.network_params`) and the raw ``w`` is trained
    with the layer's backward pass (:meth:`SphereGeometry.loss_and_grad`); ``params`` are the model's
    raw arrays (shared, updated in place by :func:`shockflow.training.train`).  It implements the
    interface ``train`` uses: ``params``, ``forward``, ``loss``, ``loss_and_grad``,
    ``per_sample_grads``, ``spec``, ``copy``.
    """

    def __init__(self, geometry: SphereGeometry, model: Model):
        self.geometry = geometry
        self.model = model
        self.name = f"{model.name} (weight-normalised {geometry.parameter!r})"
        self.output_dim = model.output_dim
        self.loss_function = model.loss_function

    @property
    def params(self):
        return self.model.params

    def _network(self) -> Model:
        clone = self.model.copy()
        for k, v in self.geometry.network_params(self.model.params).items():
            clone.params[k][...] = v
        return clone

    def forward(self, X):
        return self._network().forward(X)

    def loss(self, X, y) -> float:
        return self._network().loss(X, y)

    def loss_and_grad(self, X, y):
        return self.geometry.loss_and_grad(self.model.params, X, y)

    def per_sample_grads(self, X, y):
        grads = self._network().per_sample_grads(X, y)
        key = self.geometry.parameter
        w = self.model.params[key].ravel()
        n = np.linalg.norm(w)
        u = w / n
        g = grads[key].reshape(grads[key].shape[0], -1)
        grads[key] = (self.geometry.gain / n * (g - (g @ u)[:, None] * u)).reshape(grads[key].shape)
        return grads

    def spec(self):
        return self.model.spec()

    def copy(self) -> "WeightNormalised":
        return WeightNormalised(self.geometry, self.model.copy())
