"""A quotient geometry shipped by a separate package (the worked example of docs/adding-a-geometry.md).

The ``u ⊙ v`` diagonal network ``f(x) = Σ_k x_k u_k v_k`` is invariant under ``(u_k, v_k) ↦ (λ u_k, v_k/λ)``
for every coordinate ``k``.  Quotient coordinate: ``β_k = u_k v_k``.  Gradient flow conserves
``c_k = u_k² - v_k²`` (``d/dt u_k² = -2 u_k v_k ∂_β L̄ = d/dt v_k²``) and moves ``β_k`` at
``β̇_k = -(u_k² + v_k²) ∂L̄/∂β_k``, with ``u_k² + v_k² = sqrt(c_k² + 4 β_k²)``: the mobility, degenerate
at ``β_k = 0`` when ``c_k = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shockflow.geometry import Chart, Geometry, GeometryError
from shockflow.models.base import Model


@dataclass(frozen=True, eq=False)
class HadamardGeometry(Geometry):
    """``β_k = u_k v_k`` of one coordinate ``k`` of a ``u ⊙ v`` diagonal network."""

    name = "hadamard"
    symmetry = "per-coordinate rescaling (u_k, v_k) -> (λ u_k, v_k / λ) of a u ⊙ v network; coordinate β_k = u_k v_k"
    models = ("diagonal",)

    model: Model
    coordinate: int = 0
    extent: float = 1.0

    def __post_init__(self):
        self.check_model()
        if self.model.form != "uv":
            raise GeometryError(f"model: the hadamard geometry needs form='uv', found {self.model.form!r}")
        if not 0 <= self.coordinate < self.model.input_dim:
            raise GeometryError(f"coordinate: expected 0..{self.model.input_dim - 1}, found {self.coordinate!r}")
        u, v = self.model.params["u"][self.coordinate], self.model.params["v"][self.coordinate]
        object.__setattr__(self, "c", float(u * u - v * v))

    @property
    def chart(self) -> Chart:
        return Chart(("beta",), (-self.extent,), (self.extent,), degenerate="beta = 0 if c = 0")

    def coordinates(self, params):
        p = self.check_params(params)
        return np.array([p["u"][self.coordinate] * p["v"][self.coordinate]])

    def conserved(self, params):
        p = self.check_params(params)
        k = self.coordinate
        return {"c": np.array(p["u"][k] ** 2 - p["v"][k] ** 2)}

    def mobility(self, points):
        beta = np.asarray(points, dtype=np.float64)
        return np.sqrt(self.c**2 + 4.0 * beta**2)[..., None]

    def section(self, points):
        beta = self.chart.check(points)[..., 0]
        u2 = 0.5 * (self.c + np.sqrt(self.c**2 + 4.0 * beta**2))  # u² - v² = c, u v = β
        u = np.sqrt(u2)
        v = np.where(u > 0, beta / np.where(u > 0, u, 1.0), np.sqrt(np.maximum(-self.c, 0.0)))
        out = {k: np.broadcast_to(a, (*beta.shape, *a.shape)).copy() for k, a in self.model.params.items()}
        out["u"][..., self.coordinate] = u
        out["v"][..., self.coordinate] = v
        return out
