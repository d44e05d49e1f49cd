"""The saddle geometry: the line through a saddle along one of its unstable directions (docs/theory.md §6, "Plateaus
away from the origin"; the chart of :mod:`shockflow.prediction.saddle_plateau`).

The ``flat`` geometry's line ``θ = θ_0 + x u`` (Euclidean metric, nothing conserved), whose mode strength is not the
coordinate but the distance from the saddle ``θ*`` (``centre``) in the span of its unstable directions ``V``,
``|Vᵀ(θ − θ*)|`` (``u`` in that span and ``θ_0 − θ*`` outside it, so on the line it is ``|x|``).  ``θ_0`` is ``θ*``
or the point of the plateau the network is at when its escape leaves the linear regime.  The parameter truth of a run reads it
(:mod:`shockflow.prediction.truth`, through ``function_strength``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from shockflow.geometry.base import GeometryError
from shockflow.geometry.flat import FlatGeometry, flatten
from shockflow.geometry.registry import register

__all__ = ["SaddleGeometry"]


@register
@dataclass(frozen=True, eq=False)
class SaddleGeometry(FlatGeometry):
    """The line ``θ_0 + x u`` (``origin``) along one of a saddle's unstable directions (the ``flat`` geometry), whose
    mode strength is the distance from the saddle ``θ*`` (``centre``) in the span of all of them, ``|Vᵀ(θ − θ*)|`` (``basis`` = ``Vᵀ``, k × P
    orthonormal rows, ``u`` in their span): a saddle's unstable directions come in degenerate groups (the units'
    permutations act on them), any direction in the group is the same escape, and the run takes the one its
    perturbation points to; the strength does not depend on which (:mod:`shockflow.prediction.saddle_plateau`)."""

    name = "saddle"
    symmetry = ("none (an affine line θ_0 + x u); its strength |Vᵀ(θ − θ*)| is invariant under rotations within the "
                "span of the saddle's unstable directions V")

    basis: Any = None
    centre: Any = None   # the saddle θ* the strength is measured from (None: the line's origin)

    def __post_init__(self):
        super().__post_init__()
        n = self.model.num_parameters
        centre = self.origin if self.centre is None else np.asarray(self.centre, dtype=np.float64)
        if centre.shape != (n,) or not np.all(np.isfinite(centre)):
            raise GeometryError(f"centre: expected {n} finite numbers (a parameter vector), found shape {centre.shape}")
        object.__setattr__(self, "centre", centre)
        B = np.atleast_2d(np.asarray(self.basis, dtype=np.float64)) if self.basis is not None else self.directions
        if B.ndim != 2 or B.shape[1] != n or not np.allclose(B @ B.T, np.eye(B.shape[0]), atol=1e-8):
            raise GeometryError(f"basis: expected orthonormal rows of length {n}, found shape {B.shape}")
        if not np.allclose(B.T @ (B @ self.directions[0]), self.directions[0], atol=1e-8):
            raise GeometryError("basis: the chart's direction must lie in the span of its rows")
        if not np.allclose(B @ (self.origin - centre), 0.0, atol=1e-8 * max(1.0, float(np.linalg.norm(centre)))):
            raise GeometryError("centre: the line's origin must differ from it only outside the span of the basis")
        object.__setattr__(self, "basis", B)

    def function_strength(self, params, X) -> float:
        theta = flatten(self.model, self.check_params(params))
        return float(np.linalg.norm(self.basis @ (theta - self.centre)))

    def function_strength_at(self, points, X) -> np.ndarray:
        p = np.asarray(points, dtype=np.float64).reshape(-1, self.dim)
        return np.linalg.norm((p @ self.directions) @ self.basis.T, axis=1)
