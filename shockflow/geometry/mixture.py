"""The mixture of experts' charts: the averaged expert and the gate's splits (docs/theory.md §6, "The mixture of experts").

A mixture ``f(x) = Σ_k softmax(Γx)_k E_k(x)`` is unchanged by permuting its units (unit k = [expert k ; gate
row k], :mod:`shockflow.models.units`).  Two invariants of that symmetry are its order parameters
(:func:`mixture_order_parameters`):

- ``mean``: ``√K |β̄|``, the norm of the units' mean expert entries (scaled so that a unit step along an
  expert direction shared by every unit moves it by one);
- ``split<r>``, r = 0 … K−2: ``σ_r(D)``, the r-th singular value of the breaking matrix ``D`` (K × p: each unit
  minus the units' mean, the expert and the gate entries).  ``D = 0`` while every expert is the same and the
  gate is uniform; the gate learns its r-th split when ``D`` gains rank r + 1.

**The chart** of order parameter ``q`` (:class:`MixtureGeometry`, ``escape`` = its index: 0 the mean, r + 1
split r) is the line ``θ(x) = origin + x u`` through the saddle the transition escapes from, along its escape
direction (``origins``, ``directions``: one row per chart, from :mod:`shockflow.prediction.gate`), Euclidean
(mobility 1).  Its coordinate of any parameters is the order parameter itself, so the run's trajectory on it is
what the truth reads; on the section the two agree to first order (exactly for ``mean`` and ``split0``, whose
saddles have ``D = 0`` or the expert entries zero; for r ≥ 1 ``σ_r(θ_r + x u) = x + O(x²)``, ``u`` normal to the
rank-r matrices).
"""

from __future__ import annotations

from functools import cached_property

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from shockflow.geometry.base import Chart, Geometry, GeometryError
from shockflow.geometry.flat import flatten, unflatten
from shockflow.geometry.registry import register
from shockflow.models.base import Model

__all__ = ["MixtureGeometry", "mixture_labels", "mixture_order_parameters"]


def mixture_labels(experts: int) -> list[str]:
    """The charts' labels: ``mean``, ``split0`` … ``split<K−2>``."""
    return ["mean"] + [f"split{r}" for r in range(int(experts) - 1)]


def mixture_order_parameters(model, params) -> dict[str, float]:
    """The order parameters of the mixture ``model`` at ``params`` (a parameter dict or a flat vector in
    ``model.parameter_vector()``'s layout): ``{"mean": √K |β̄|, "split<r>": σ_r(D)}`` (module docstring)."""
    from shockflow.models.units import unit_layout

    theta = np.concatenate([np.asarray(params[k], dtype=np.float64).ravel() for k in model.params]) \
        if isinstance(params, dict) else np.asarray(params, dtype=np.float64)
    index = unit_layout(model).index
    K, p = index.shape
    gate = int(np.asarray(model.params["gate"]).shape[1])
    units = theta[index]
    mean = units.mean(axis=0)
    sigma = np.linalg.svd(units - mean, compute_uv=False)
    out = {"mean": float(math.sqrt(K) * np.linalg.norm(mean[: p - gate]))}
    out.update({f"split{r}": float(sigma[r]) if r < sigma.size else 0.0 for r in range(K - 1)})
    return out


@register
@dataclass(frozen=True, eq=False)
class MixtureGeometry(Geometry):
    """One chart per transition of a mixture of experts: the line through its saddle (module docstring)."""

    name = "mixture"
    symmetry = ("permutations of the experts (each with its gate row): the averaged expert √K|β̄| and the "
                "breaking matrix's singular values σ_r(D), one chart per transition")

    model: Model
    origins: Any = None        # (R, P): the saddle of each chart, moved along its direction
    directions: Any = None     # (R, P): each chart's unit direction
    escape: int = 0            # which chart: 0 the averaged expert, r + 1 split r
    extent: float = 1.0

    def __post_init__(self):
        self.check_model()
        if getattr(self.model, "name", None) != "moe":
            raise GeometryError(f"model: the mixture charts are for the 'moe' network, found {self.model.name!r}")
        n = self.model.num_parameters
        if self.origins is None or self.directions is None:
            raise GeometryError("origins: the mixture charts are found from the landscape (shockflow.prediction.gate); "
                                "build them with origins=… and directions=…")
        O, E = np.atleast_2d(np.asarray(self.origins, dtype=np.float64)), \
            np.atleast_2d(np.asarray(self.directions, dtype=np.float64))
        if O.shape != E.shape or O.shape[1] != n or not (np.all(np.isfinite(O)) and np.all(np.isfinite(E))):
            raise GeometryError(f"origins, directions: expected two finite arrays (R, {n}) of the same shape, found "
                                f"{O.shape} and {E.shape}")
        if not np.allclose(np.linalg.norm(E, axis=1), 1.0, atol=1e-8):
            raise GeometryError("directions: every row must be a unit vector")
        labels = mixture_labels(self.model.num_experts)
        if not (isinstance(self.escape, (int, np.integer)) and 0 <= self.escape < min(O.shape[0], len(labels))):
            raise GeometryError(f"escape: expected a whole number in [0, {min(O.shape[0], len(labels))}), found "
                                f"{self.escape!r}")
        if not (math.isfinite(self.extent) and self.extent > 0):
            raise GeometryError(f"extent: expected a number > 0, found {self.extent!r}")
        object.__setattr__(self, "origins", O)
        object.__setattr__(self, "directions", E)
        object.__setattr__(self, "_label", labels[int(self.escape)])

    @classmethod
    def discover_charts(cls, model, X, y, kwargs: dict):
        """``(kwargs, one selector per chart, "escape")``: the charts are the rows of ``origins``."""
        if kwargs.get("origins") is None:
            raise GeometryError("origins: the mixture charts are found from the landscape (shockflow.prediction.gate)")
        return dict(kwargs), list(range(np.atleast_2d(np.asarray(kwargs["origins"])).shape[0])), "escape"

    @cached_property   # the settings are frozen: one Chart per geometry (it was rebuilt on every read)
    def chart(self) -> Chart:
        return Chart((self._label,), (-float(self.extent),), (float(self.extent),))

    def coordinates(self, params):
        theta = flatten(self.model, self.check_params(params))
        return np.array([mixture_order_parameters(self.model, theta)[self._label]])

    def conserved(self, params):
        self.check_params(params)
        return {}

    def mobility(self, points):
        p = np.asarray(points, dtype=np.float64)
        return np.ones((*p.shape[:-1], 1, 1))

    def section(self, points):
        p = self.chart.check(points)
        k = int(self.escape)
        return unflatten(self.model, self.origins[k] + p[..., :1] * self.directions[k])
