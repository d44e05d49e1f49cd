"""The interface every quotient geometry implements (docs/theory.md §1).

A *geometry* is the quotient ``Q = Θ/G`` of a model's parameter space by a symmetry group ``G``,
bound to one model instance whose current parameters are the *reference*: parameters the geometry
does not move are held at their reference values.  It provides

``name``, ``symmetry``         registry name and the group it quotients, in one line;
``coordinates(params)``        quotient coordinates ``x`` (shape ``(dim,)``) of a parameter set — the
                               symmetry-corrected observables;
``conserved(params)``          the quantities gradient flow conserves along the group directions;
``chart``                      a :class:`Chart`: coordinate names, box, periodic axes, and where the
                               metric degenerates; ``chart.grid(cells)`` gives a solver grid;
``mobility(points)``           the inverse metric ``g^{-1}`` at points ``(..., dim)`` -> ``(..., dim, dim)``,
                               so that gradient flow on ``Θ`` projects to ``ẋ = -g^{-1}(x) ∇L̄(x)``;
``metric``, ``volume_density``  ``g`` and ``|g|^{1/2} = det(g^{-1})^{-1/2}`` (``inf`` where degenerate);
``section(points)``            parameter arrays realising the coordinates, batched: every array has the
                               leading shape of ``points[..., 0]``;
``chart_loss(points, X, y)``   ``L̄`` at many points in one batched forward pass
                               (:mod:`shockflow.geometry.batched_loss`);
``chart_gradient``, ``velocity``  ``∇L̄`` by central differences of ``chart_loss`` and the predicted
                               quotient velocity ``-g^{-1} ∇L̄``;
``chart_problem(cells, X, y)`` the PDE problem on the chart: grid, ``u0 = L̄`` at cell centres, the
                               mobility and density callables for :mod:`solvers.charts.hamilton_jacobi`.

A subclass is a frozen dataclass with fields for its settings (validated in ``__post_init__``) and
implements ``chart``, ``coordinates``, ``conserved``, ``mobility`` and ``section``; see
docs/adding-a-geometry.md.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from shockflow.geometry.batched_loss import batched_loss
from shockflow.models.base import Model
from solvers.grid import Grid

__all__ = ["Geometry", "Chart", "ChartProblem", "GeometryError"]


class GeometryError(ValueError):
    """Bad input to a geometry: the message names the offending array, point or setting."""


def _point_text(p: np.ndarray) -> str:
    return "(" + ", ".join(f"{v:.6g}" for v in np.atleast_1d(p)) + ")"


@dataclass(frozen=True)
class Chart:
    """A coordinate box of a quotient: names, bounds, periodic axes, and where the metric degenerates."""

    names: tuple[str, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    periodic: tuple[bool, ...] | None = None
    degenerate: str = "nowhere"

    def __post_init__(self):
        names = tuple(self.names)
        lower = tuple(float(v) for v in np.atleast_1d(self.lower))
        upper = tuple(float(v) for v in np.atleast_1d(self.upper))
        periodic = (False,) * len(names) if self.periodic is None else tuple(bool(p) for p in self.periodic)
        if not (len(names) == len(lower) == len(upper) == len(periodic)) or not names:
            raise GeometryError(
                f"chart: expected one name, bound pair and periodic flag per axis, found {len(names)} names, "
                f"{len(lower)} lower, {len(upper)} upper and {len(periodic)} periodic flags"
            )
        for axis, (lo, hi) in enumerate(zip(lower, upper)):
            if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
                raise GeometryError(f"chart axis {names[axis]!r}: expected finite bounds with upper > lower, found [{lo}, {hi}]")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "periodic", periodic)
        object.__setattr__(self, "_lo", np.array(lower))
        object.__setattr__(self, "_hi", np.array(upper))
        object.__setattr__(self, "_periodic", np.array(periodic))

    @property
    def ndim(self) -> int:
        return len(self.names)

    def grid(self, cells, ghost: int = 3) -> Grid:
        """A uniform solver grid on the chart box (``cells``: one number or one per axis)."""
        cells = tuple(np.broadcast_to(np.asarray(cells), (self.ndim,)).tolist())
        return Grid(self.lower, self.upper, cells, ghost)

    def boundary(self) -> list:
        """Boundary conditions for :mod:`solvers.charts.hamilton_jacobi`: periodic axes wrap, others are even mirrors."""
        return ["periodic" if p else "symmetric" for p in self.periodic]

    def check(self, points, name: str = "points") -> np.ndarray:
        """``points`` as float64 ``(..., ndim)``, finite and inside the box; errors name the first bad point."""
        p = np.asarray(points, dtype=np.float64)
        if p.ndim == 0 or p.shape[-1] != self.ndim:
            raise GeometryError(
                f"{name}: expected chart points of shape (..., {self.ndim}) (coordinates {', '.join(self.names)}), found shape {p.shape}"
            )
        if p.size:
            # the common case in two reductions: every point finite (a NaN or inf makes its axis' min or max
            # non-finite) and inside the closed box; anything else takes the checks below, which name the point
            flat = p.reshape(-1, self.ndim)
            low, high = flat.min(axis=0), flat.max(axis=0)
            if np.all(np.isfinite(low) & np.isfinite(high)) and \
                    np.all(((low >= self._lo) & (high <= self._hi)) | self._periodic):
                return p
        bad = ~np.all(np.isfinite(p), axis=-1)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            raise GeometryError(f"{name}: point {index} is {_point_text(p[index])}, expected finite coordinates")
        lo, hi = np.array(self.lower), np.array(self.upper)
        slack = CHART_TOLERANCE * (hi - lo)
        inside = (p >= lo - slack) & (p <= hi + slack)
        inside |= np.array(self.periodic)
        bad = ~np.all(inside, axis=-1)
        if bad.any():
            index = tuple(int(i) for i in np.argwhere(bad)[0])
            box = " x ".join(f"[{a:g}, {b:g}]" for a, b in zip(self.lower, self.upper))
            raise GeometryError(f"{name}: point {index} = {_point_text(p[index])} lies outside the chart {box} "
                                f"(by more than {CHART_TOLERANCE:g} of its width)")
        closed = ~np.array(self.periodic)
        if np.any((p < lo) & closed) or np.any((p > hi) & closed):   # a hair outside a closed end: onto the end
            p = np.where(closed, np.clip(p, lo, hi), p)
        return p


#: how far (a fraction of the chart's width) a point may lie outside a closed end of a chart and be moved onto
#: it by :meth:`Chart.check`: coordinates found by a search or a parabola through samples (a mode pushed
#: towards its chart's end, issue 21: -4.3e-9 on [0, 1]) land within it; every grid on a chart is far coarser
CHART_TOLERANCE = 1e-6


@dataclass(frozen=True)
class ChartProblem:
    """A Hamilton–Jacobi problem on a chart, ready for :func:`solvers.charts.hamilton_jacobi.solve_chart_hj`.

    ``u0`` is ``L̄`` at the cell centres of ``grid``; ``mobility(*coords)`` and ``density(*coords)``
    take the coordinate arrays of the solver (``g^xx`` in 1-D, ``(A00, A01, A11)`` in 2-D).
    """

    geometry: "Geometry"
    grid: Grid
    u0: np.ndarray
    mobility: Callable
    density: Callable
    boundary: list

    def solve(self, times, nu: float = 0.0, **settings):
        """Solve ``∂_γ u + ½|∇u|²_g = ν Δ_g u`` from ``u0 = L̄`` (docs/theory.md §1); returns a ``ChartHJSolution``."""
        from solvers.charts import solve_chart_hj

        settings.setdefault("boundary", self.boundary)
        return solve_chart_hj(self.grid, self.u0, times, mobility=self.mobility, density=self.density, nu=nu, **settings)

    def solve_burgers(self, times, X, y, nu: float = 0.0, **settings):
        """1-D charts: Burgers for ``p = ∂_x u`` from ``p0 = ∂_x L̄`` (docs/theory.md §1), conservation form.

        ``p0`` is the exact cell average of ``∂_x L̄``, the difference of ``L̄`` at the two faces over
        ``dx``; returns a ``ChartBurgersSolution`` (:mod:`solvers.charts.burgers`).
        """
        from solvers.charts import solve_chart_burgers

        if self.grid.ndim != 1:
            raise GeometryError(f"solve_burgers: the Burgers solver takes 1-D charts, this one has {self.grid.ndim} axes")
        faces = self.grid.faces(0)[:, None]
        values = self.geometry.chart_loss(faces, X, y)
        p0 = np.diff(values) / self.grid.dx[0]
        periodic = self.boundary[0] == "periodic"
        settings.setdefault("boundary", "periodic" if periodic else "reflecting")
        return solve_chart_burgers(self.grid, p0, times, mobility=self.mobility, nu=nu, **settings)


class Geometry(abc.ABC):
    """Abstract quotient geometry bound to a model (see the module docstring for the contract)."""

    name: ClassVar[str]
    symmetry: ClassVar[str]
    #: model registry names this geometry understands (empty: any)
    models: ClassVar[tuple[str, ...]] = ()

    model: Model

    # -- to implement ------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def chart(self) -> Chart:
        """The coordinate box and its degenerate set."""

    @abc.abstractmethod
    def coordinates(self, params: Mapping[str, np.ndarray]) -> np.ndarray:
        """Quotient coordinates ``(dim,)`` of one parameter set."""

    @abc.abstractmethod
    def conserved(self, params: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The quantities gradient flow conserves (constant along the flow)."""

    @abc.abstractmethod
    def mobility(self, points) -> np.ndarray:
        """``g^{-1}`` at ``points (..., dim)``: an array ``(..., dim, dim)``."""

    def strength(self, points) -> np.ndarray:
        """The mode strength at chart ``points (..., dim)``: what "half learned" is measured in (the
        parameter truth of a run, :mod:`shockflow.prediction.truth`).  By default the coordinate itself;
        a geometry whose coordinate is not the strength (a square root, a clock) overrides it."""
        return np.asarray(points, dtype=np.float64)

    @abc.abstractmethod
    def section(self, points) -> dict[str, np.ndarray]:
        """Parameter arrays ``(..., *shape)`` realising ``points (..., dim)``."""

    # -- optional ------------------------------------------------------------------------------
    @classmethod
    def discover_charts(cls, model, X, y, kwargs: dict):
        """A geometry that finds its own charts from the network and its data returns
        ``(kwargs, selectors, keyword)``: one chart per selector, passed as ``keyword=selector``
        (the automatic geometry's modes).  ``None`` (the default): the case names its charts."""
        return None

    # -- provided ----------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        return self.chart.ndim

    def check_model(self) -> None:
        """The bound model must be one this geometry understands."""
        if not isinstance(self.model, Model):
            raise GeometryError(f"model: expected a shockflow Model, found {type(self.model).__name__}")
        if self.models and self.model.name not in self.models:
            raise GeometryError(
                f"model: the {self.name!r} geometry works with models {', '.join(map(repr, self.models))}, "
                f"found {self.model.name!r}"
            )

    def check_params(self, params: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``params`` must have the model's names and shapes; the error names the offending array."""
        if not isinstance(params, Mapping):
            raise GeometryError(f"params: expected a mapping of parameter arrays, found {type(params).__name__}")
        out = {}
        for key, ref in self.model.params.items():
            if key not in params:
                raise GeometryError(f"params: missing array {key!r}; the {self.model.name!r} model has {', '.join(self.model.params)}")
            arr = np.asarray(params[key], dtype=np.float64)
            if arr.shape != ref.shape:
                raise GeometryError(f"params[{key!r}]: expected shape {ref.shape} for the {self.model.name!r} model, found {arr.shape}")
            if not np.all(np.isfinite(arr)):
                raise GeometryError(f"params[{key!r}]: contains NaN or inf")
            out[key] = arr
        extra = set(params) - set(self.model.params)
        if extra:
            raise GeometryError(f"params: unexpected arrays {sorted(extra)}; the {self.model.name!r} model has {', '.join(self.model.params)}")
        return out

    def metric(self, points) -> np.ndarray:
        """``g = (g^{-1})^{-1}``; ``inf`` entries where the mobility is singular (the degenerate set)."""
        A = self.mobility(points)
        det = np.linalg.det(A)
        out = np.full(A.shape, np.inf)
        ok = np.abs(det) > 0
        out[ok] = np.linalg.inv(A[ok])
        return out

    def volume_density(self, points) -> np.ndarray:
        """``|g|^{1/2} = det(g^{-1})^{-1/2}`` (``inf`` on the degenerate set)."""
        det = np.linalg.det(self.mobility(points))
        with np.errstate(divide="ignore"):
            return 1.0 / np.sqrt(np.maximum(det, 0.0))

    def chart_loss(self, points, X, y) -> np.ndarray:
        """``L̄`` at ``points (..., dim)`` in one batched pass: shape ``points.shape[:-1]``."""
        p = self.chart.check(points)
        flat = p.reshape(-1, self.dim)
        params = self.section(flat)
        return batched_loss(self.model, params, X, y).reshape(p.shape[:-1])

    def chart_gradient(self, points, X, y, step: float = 1e-5) -> np.ndarray:
        """``∇L̄`` at ``points`` by central differences of :meth:`chart_loss` (one batched call).

        Near a chart boundary the stencil is shifted inside (one-sided, second order).
        """
        p = self.chart.check(points)
        flat = p.reshape(-1, self.dim)
        lo, hi = np.array(self.chart.lower), np.array(self.chart.upper)
        h = step * (hi - lo)
        stencil = []
        for k in range(self.dim):
            e = np.zeros(self.dim)
            e[k] = h[k]
            centre = np.clip(flat[:, k], lo[k] + h[k], hi[k] - h[k]) if not self.chart.periodic[k] else flat[:, k]
            base = flat.copy()
            base[:, k] = centre
            stencil += [base + e, base - e, base]
        values = self.chart_loss(np.concatenate(stencil), X, y).reshape(3 * self.dim, -1)
        grads = []
        for k in range(self.dim):
            plus, minus, mid = values[3 * k], values[3 * k + 1], values[3 * k + 2]
            # value at the true point from a quadratic through the shifted stencil
            shift = (flat[:, k] - np.clip(flat[:, k], lo[k] + h[k], hi[k] - h[k])) if not self.chart.periodic[k] else 0.0
            grads.append((plus - minus) / (2 * h[k]) + shift * (plus - 2 * mid + minus) / h[k] ** 2)
        return np.stack(grads, axis=-1).reshape(p.shape)

    def velocity(self, points, X, y) -> np.ndarray:
        """Predicted quotient velocity ``-g^{-1}(x) ∇L̄(x)`` of gradient flow, shape ``(..., dim)``."""
        grad = self.chart_gradient(points, X, y)
        return -np.einsum("...kl,...l->...k", self.mobility(points), grad)

    def mobility_components(self, *coords) -> Any:
        """``mobility`` in the solver's layout: ``g^xx`` (1-D) or ``(A00, A01, A11)`` (2-D)."""
        pts = np.stack(np.broadcast_arrays(*coords), axis=-1)
        A = self.mobility(pts)
        if self.dim == 1:
            return A[..., 0, 0]
        return A[..., 0, 0], A[..., 0, 1], A[..., 1, 1]

    def density_values(self, *coords) -> np.ndarray:
        pts = np.stack(np.broadcast_arrays(*coords), axis=-1)
        return self.volume_density(pts)

    def chart_problem(self, cells, X, y, ghost: int = 3) -> ChartProblem:
        """The HJ problem ``u0 = L̄`` on ``chart.grid(cells)`` with this geometry's metric (1-D or 2-D)."""
        if self.dim not in (1, 2):
            raise GeometryError(f"chart_problem: the solvers take 1-D or 2-D charts, this {self.name!r} chart has {self.dim} axes")
        grid = self.chart.grid(cells, ghost)
        centres = np.stack(grid.mesh(), axis=-1)
        u0 = self.chart_loss(centres, X, y)
        return ChartProblem(self, grid, u0, self.mobility_components, self.density_values, self.chart.boundary())

    def describe(self) -> str:
        """One line: name, symmetry and coordinates."""
        return f"{self.name}: {self.symmetry} [coordinates: {', '.join(self.chart.names)}; degenerate: {self.chart.degenerate}]"
