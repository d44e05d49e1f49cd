"""The flat geometry: no symmetry, an affine slice of parameter space (for testing and landscapes).

Coordinates ``x ∈ R^k`` of the slice ``θ = θ_0 + Σ_k x_k e_k`` with orthonormal directions
``e_k`` (rows of ``directions``, in the layout of ``model.parameter_vector()``).  The metric is the
Euclidean one, ``g = I``; the coordinates of a parameter set are its projection
``x_k = e_k · (θ - θ_0)``, and gradient flow moves them at ``ẋ_k = -e_k · ∇L(θ)``, which on the slice
is ``-∂L̄/∂x_k`` (the mobility is the identity).  Nothing is conserved and nothing degenerates.
"""

from __future__ import annotations

from functools import cached_property

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from shockflow.geometry.base import Chart, Geometry, GeometryError
from shockflow.geometry.registry import register
from shockflow.models.base import Model

__all__ = ["FlatGeometry", "flatten", "unflatten"]


def flatten(model: Model, params: Mapping[str, np.ndarray]) -> np.ndarray:
    """Parameter arrays with leading batch shape ``S`` -> vectors ``(*S, P)`` in ``params`` order."""
    first = next(iter(model.params))
    lead = np.asarray(params[first]).shape[: np.ndim(params[first]) - model.params[first].ndim]
    return np.concatenate([np.asarray(params[k]).reshape(*lead, -1) for k in model.params], axis=-1)


def unflatten(model: Model, vectors: np.ndarray) -> dict[str, np.ndarray]:
    """Vectors ``(..., P)`` -> parameter arrays ``(..., *shape)`` (the inverse of :func:`flatten`)."""
    lead = vectors.shape[:-1]
    out, start = {}, 0
    for k, ref in model.params.items():
        out[k] = vectors[..., start : start + ref.size].reshape(*lead, *ref.shape)
        start += ref.size
    return out


@register
@dataclass(frozen=True, eq=False)
class FlatGeometry(Geometry):
    """An affine slice of parameter space with the Euclidean metric (no quotient)."""

    name = "flat"
    symmetry = "none (identity group): an affine slice θ0 + Σ x_k e_k of parameter space"

    model: Model
    directions: Any = None
    origin: Any = None
    extent: float = 1.0

    def __post_init__(self):
        self.check_model()
        n = self.model.num_parameters
        E = np.eye(n) if self.directions is None else np.atleast_2d(np.asarray(self.directions, dtype=np.float64))
        if self.directions is None and n > 2:
            raise GeometryError(f"directions: the model has {n} parameters; give 1 or 2 orthonormal directions of length {n}")
        if E.ndim != 2 or E.shape[1] != n or not 1 <= E.shape[0] <= 3:
            raise GeometryError(f"directions: expected an array (k, {n}) with k = 1..3 rows, found shape {E.shape}")
        gram = E @ E.T
        if not np.allclose(gram, np.eye(E.shape[0]), atol=1e-8):
            raise GeometryError(f"directions: the rows must be orthonormal, found E Eᵀ = {np.round(gram, 6).tolist()}")
        origin = self.model.parameter_vector() if self.origin is None else np.asarray(self.origin, dtype=np.float64)
        if origin.shape != (n,) or not np.all(np.isfinite(origin)):
            raise GeometryError(f"origin: expected {n} finite numbers (a parameter vector), found shape {origin.shape}")
        if not (np.isfinite(self.extent) and self.extent > 0):
            raise GeometryError(f"extent: expected a number > 0, found {self.extent!r}")
        object.__setattr__(self, "directions", E)
        object.__setattr__(self, "origin", origin)

    @cached_property   # the settings are frozen: one Chart per geometry (it was rebuilt on every read)
    def chart(self) -> Chart:
        k = self.directions.shape[0]
        return Chart(tuple(f"x{i}" for i in range(k)), (-self.extent,) * k, (self.extent,) * k)

    def coordinates(self, params):
        theta = flatten(self.model, self.check_params(params))
        return self.directions @ (theta - self.origin)

    def conserved(self, params):
        self.check_params(params)
        return {}

    def mobility(self, points):
        p = np.asarray(points, dtype=np.float64)
        return np.broadcast_to(np.eye(self.dim), (*p.shape[:-1], self.dim, self.dim)).copy()

    def section(self, points):
        p = self.chart.check(points)
        return unflatten(self.model, self.origin + p @ self.directions)
