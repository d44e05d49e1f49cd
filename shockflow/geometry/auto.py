"""Automatic charts: one chart per unstable mode of the origin, for any network with interchangeable units.

docs/theory.md §6 ("Modes from the symmetry", "The chart of a mode").  A layer that is a sum over
interchangeable units ``w_1 … w_d ∈ R^p`` (hidden neurons with their readout, channels, heads,
experts: :mod:`shockflow.models.units`) is, near small weights, a function of the units' Gram
matrix ``M = W Wᵀ`` (``W ∈ R^{p×d}``, units as columns); gradient flow there is
``Ẇ = Y W + O(‖W‖³)`` with ``Y = −H``, ``H`` the Hessian of the loss with respect to one unit at
``θ = 0`` (every unit has the same one: they are interchangeable).  The eigenvectors ``e_k`` of
``Y`` with positive eigenvalue ``λ_k`` are the unstable directions of the origin, the **modes**;
while small, ``|Wᵀ e_k|`` grows like ``e^{λ_k t}``.

:func:`find_modes` computes ``H`` from the model's own gradient (central differences of
``model.loss_and_grad`` at ``θ = ±h e_j``, one unit's entries; the interaction with a second unit,
the ``B`` term of docs/theory.md §2's expansion, is subtracted so that the modes are those of the units'
differences, which the permutation symmetry leaves free).  It works for any loss and any number
of outputs: for a two-layer linear net on whitened inputs the modes are the singular triples of
``E[y xᵀ]`` (a test checks this).

**The chart of mode k** (:class:`AutoGeometry`): the coordinate is ``r = |Wᵀ e_k|`` (the mode's
strength summed over the units, invariant under their permutations), the section through the
initial point scales the mode's component of every unit together,
``w_i(r) = w_i(0) + (r − r_0) ĉ_i e_k`` with ``ĉ = c/|c|``, ``c = W_0ᵀ e_k`` (the mode split over
the units the way the initial weights already split it; an equal split if they hold none of it),
so ``|∂θ/∂r| = 1`` and the mobility is 1.  At a saddle of the chain (``active``: the modes already
learned, :mod:`shockflow.prediction.saddle_chain`) the split ``ĉ`` is taken orthogonal to the learned
modes' splits over the units.  The loss on the chart is the REAL network's loss along
that section: saturation, nonlinearity and finite width stay in it.  The ridge is ``r = 0``
(mirrored chart ``[0, R]``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from shockflow.geometry.base import Chart, Geometry, GeometryError
from shockflow.geometry.flat import flatten, unflatten
from shockflow.geometry.registry import register
from shockflow.models.base import Model

__all__ = ["AutoGeometry", "Modes", "find_modes"]


@dataclass(frozen=True)
class Modes:
    """Unstable modes of the origin: ``directions (p, K)`` (unit space, orthonormal columns) and their
    growth rates ``rates (K,)`` (descending, > 0); ``spectrum`` is every eigenvalue of ``Y``."""

    directions: np.ndarray
    rates: np.ndarray
    spectrum: np.ndarray


def _layout(model):
    from shockflow.models.units import unit_layout

    try:
        return unit_layout(model)
    except ValueError as exc:
        raise GeometryError(f"model: the automatic charts need interchangeable units; {exc}") from None


#: how many modes the automatic charts keep, and how slow a mode may be against the fastest
MAX_MODES, MIN_RATE_RATIO = 8, 0.02


def find_modes(model: Model, X, y, *, h: float = 1e-4, max_modes: int = MAX_MODES,
               min_rate_ratio: float = MIN_RATE_RATIO) -> Modes:
    """The unstable modes of ``model``'s origin on the data ``(X, y)`` (module docstring).

    Keeps the modes whose rate is at least ``min_rate_ratio`` times the largest, at most
    ``max_modes`` of them.  Cost: ``2p`` full-batch gradients (``p`` parameters per unit)."""
    layout = _layout(model)
    p, d = layout.unit_dim, layout.units
    zero = model.copy()
    size = zero.num_parameters
    first, second = layout.index[0], (layout.index[1] if d > 1 else None)
    H = np.zeros((p, p))
    H_pair = np.zeros((p, p))
    for j in range(p):
        cols = []
        for sign in (1.0, -1.0):
            theta = np.zeros(size)
            theta[first[j]] = sign * h
            zero.set_parameter_vector(theta)
            _, grads = zero.loss_and_grad(X, y)
            cols.append(zero.grad_vector(grads))
        column = (cols[0] - cols[1]) / (2.0 * h)
        H[:, j] = column[first]
        if second is not None:
            H_pair[:, j] = column[second]
    S = -0.5 * ((H - H_pair) + (H - H_pair).T)
    if not np.all(np.isfinite(S)):
        raise GeometryError("model: the loss Hessian at zero weights is not finite; no modes can be found")
    values, vectors = np.linalg.eigh(S)
    order = np.argsort(values)[::-1]
    values, vectors = values[order], vectors[:, order]
    top = values[0] if values.size else 0.0
    keep = (values > 0) & (values >= min_rate_ratio * top)
    keep &= np.cumsum(keep) <= max_modes
    return Modes(vectors[:, keep], values[keep], values)


@register
@dataclass(frozen=True, eq=False)
class AutoGeometry(Geometry):
    """One chart per unstable mode, found from the data (module docstring)."""

    name = "auto"
    symmetry = ("permutations of interchangeable units (neurons, channels, heads, experts): one chart per "
                "unstable mode e_k of the origin, r = |Wᵀ e_k|")

    model: Model
    modes: Any = None          # (p, K) mode directions in unit space; None: found by discover_charts
    mode: int = 0
    max_modes: int = MAX_MODES
    min_rate_ratio: float = MIN_RATE_RATIO
    extent: float = 1.0
    active: tuple = ()         # modes learned at the reference (a saddle of the chain): split this one orthogonally

    #: the keyword through which the saddle chain names the learned modes (shockflow.prediction.saddle_chain)
    saddle_keyword = "active"

    def __post_init__(self):
        self.check_model()
        layout = _layout(self.model)
        if not (isinstance(self.max_modes, int) and self.max_modes >= 1):
            raise GeometryError(f"max_modes: expected a whole number >= 1, found {self.max_modes!r}")
        if not (0.0 < float(self.min_rate_ratio) <= 1.0):
            raise GeometryError(f"min_rate_ratio: expected a number in (0, 1], found {self.min_rate_ratio!r}")
        if not (math.isfinite(self.extent) and self.extent > 0):
            raise GeometryError(f"extent: expected a number > 0, found {self.extent!r}")
        object.__setattr__(self, "_layout", layout)
        if self.modes is None:
            return
        E = np.asarray(self.modes, dtype=np.float64)
        if E.ndim == 1:
            E = E[:, None]
        if E.ndim != 2 or E.shape[0] != layout.unit_dim or not np.all(np.isfinite(E)):
            raise GeometryError(f"modes: expected a finite array ({layout.unit_dim}, K) of unit-space directions "
                                f"for the {self.model.name!r} model, found shape {E.shape}")
        if not (isinstance(self.mode, (int, np.integer)) and 0 <= self.mode < E.shape[1]):
            raise GeometryError(f"mode: expected a whole number in [0, {E.shape[1]}), found {self.mode!r}")
        e = E[:, int(self.mode)]
        e = e / np.linalg.norm(e)
        theta0 = self.model.parameter_vector()
        units = layout.unit_matrix(theta0)
        c = units.T @ e
        r0 = float(np.linalg.norm(c))
        c_hat = c / r0 if r0 > 0 else np.full(layout.units, 1.0 / math.sqrt(layout.units))
        learned = [int(j) for j in self.active if int(j) != int(self.mode)]
        if any(not 0 <= j < E.shape[1] for j in learned):
            raise GeometryError(f"active: expected mode numbers in [0, {E.shape[1]}), found {self.active!r}")
        if learned:
            c_hat = self._orthogonal_split(c_hat, units.T @ E[:, learned])
        base = theta0.copy()          # the reference without this mode's component (the section adds r ĉ e)
        base[layout.index] -= np.outer(c, e)
        direction = np.zeros_like(theta0)
        direction[layout.index] = np.outer(c_hat, e)
        object.__setattr__(self, "_e", e)
        object.__setattr__(self, "_base", base)
        object.__setattr__(self, "_direction", direction)

    # -- charts from the data ------------------------------------------------------------------
    @classmethod
    def discover_charts(cls, model, X, y, kwargs: dict) -> tuple[dict, list, str]:
        """``(kwargs with the modes, one chart selector per mode, the selector's keyword)``."""
        if kwargs.get("modes") is not None:
            E = np.asarray(kwargs["modes"], dtype=np.float64)
            return dict(kwargs), list(range(1 if E.ndim == 1 else E.shape[1])), "mode"
        found = find_modes(model, X, y, max_modes=int(kwargs.get("max_modes", MAX_MODES)),
                           min_rate_ratio=float(kwargs.get("min_rate_ratio", MIN_RATE_RATIO)))
        if found.rates.size == 0:
            raise GeometryError(f"model: the origin of the {model.name!r} network has no unstable direction on "
                                f"these data (largest eigenvalue of Y: {found.spectrum[0]:.3g}); there is no "
                                f"transition to predict")
        return {**kwargs, "modes": found.directions}, list(range(found.rates.size)), "mode"

    def _require_modes(self):
        if self.modes is None:
            raise GeometryError("modes: the automatic geometry finds its modes from the data (the extraction "
                                "calls AutoGeometry.discover_charts); build it with modes=… to use it directly")

    # -- the Geometry contract --------------------------------------------------------------------
    @property
    def chart(self) -> Chart:
        return Chart((f"r{int(self.mode)}",), (0.0,), (float(self.extent),), degenerate="r = 0 (the mode is absent)")

    def coordinates(self, params):
        self._require_modes()
        theta = flatten(self.model, self.check_params(params))
        return np.array([float(np.linalg.norm(self._layout.unit_matrix(theta).T @ self._e))])

    def conserved(self, params):
        self.check_params(params)
        return {}

    def mobility(self, points):
        p = np.asarray(points, dtype=np.float64)
        return np.ones((*p.shape[:-1], 1, 1))

    def strength(self, points):
        """The mode strength ``z = r² = e_kᵀ W Wᵀ e_k`` (what enters the network's function, as for gram)."""
        return np.asarray(points, dtype=np.float64) ** 2

    def section(self, points):
        self._require_modes()
        p = self.chart.check(points)
        theta = self._base + p[..., :1] * self._direction
        return unflatten(self.model, theta)

    def _orthogonal_split(self, c_hat: np.ndarray, held: np.ndarray) -> np.ndarray:
        """``ĉ`` with the unit-space splits ``held (units, j)`` of the learned modes projected out: at a
        saddle, a component of this mode in a unit that carries a learned one enters the loss linearly (a
        cross term), which gradient flow removes long before the mode grows.  Where the learned modes use
        every unit direction (one unit: a diagonal net, a single layer) the split stays as it is: the
        modes then share their units and the cross terms are part of the landscape."""
        q, s, _ = np.linalg.svd(held, full_matrices=False)
        q = q[:, s > 1e-10 * max(float(s.max()) if s.size else 0.0, 1e-300)]
        rest = c_hat - q @ (q.T @ c_hat)
        norm = float(np.linalg.norm(rest))
        return rest / norm if norm > 1e-8 else c_hat
