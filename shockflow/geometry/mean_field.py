"""The mean-field geometry: permutations of hidden units; the empirical measure on neuron space.

**Symmetry.**  The mean-field network ``f(x) = (1/m) Σ_i a_i φ(w_i·x)`` is invariant under permuting
its ``m`` units, so the quotient of ``Θ = (R^{1+d})^m`` is the set of empirical measures
``μ = (1/m) Σ_i δ_{θ_i}`` on *neuron space* ``θ = (a, w) ∈ R^{1+d}``.  Its coordinates here are the
neuron positions sorted lexicographically — a canonical point of the orbit, shape ``(m, 1+d)``
(the one place where ``coordinates`` is not a ``(dim,)`` vector) — and :meth:`density`, the
histogram of ``μ`` on a chart grid.

**Flow (McKean–Vlasov).**  With ``ℓ'`` the derivative of the per-sample loss with respect to the
output, the potential of one neuron in the field of the others is
``ψ(θ; μ) = E_x[ℓ'(f_μ(x), y) a φ(w·x)]`` and gradient flow moves every neuron at
``θ̇_i = -∇_{θ_i} L = -(1/m) ∇_θ ψ(θ_i; μ)``: the *velocity field* ``v(θ) = -(1/m) ∇ψ(θ; μ)``
(:meth:`velocity_field`; ``∂_a ψ = E[ℓ' φ(w·x)]``, ``∇_w ψ = E[ℓ' a φ'(w·x) x]``) with the Euclidean
metric of neuron space scaled by ``1/m`` (the mobility; the usual mean-field time is ``τ = t/m``).
The density obeys the continuity equation ``ρ_t + ∇·(ρ v) = T Δρ``, the diffusion ``T`` coming from
SGD noise (docs/theory.md §1: ``T = η σ_g²/(2B)``); :meth:`continuity_problem` returns its data on a grid
(density, face velocities, diffusion) and ``.solve(times)`` integrates it with
:mod:`solvers.charts.continuity`, the velocity recomputed from the density as it moves
(:class:`McKeanVlasovVelocity`: the McKean–Vlasov equation ``v = -(1/m) ∇ δL/δρ``).  Times are
gradient-flow times ``t`` of the parameters (a GD step ``η`` advances ``t`` by ``η``).

**Conserved.**  The mass of ``μ`` (1) and the number of units; for a homogeneous activation
(ReLU, identity) also ``a_i² - |w_i|²`` of every neuron (the rescaling symmetry of each unit).

**Section.**  Neuron positions ``(..., m, 1+d)`` -> parameters ``a = θ[..., 0]``, ``W = θ[..., 1:]``.
"""

from __future__ import annotations

from functools import cached_property

from dataclasses import dataclass

import numpy as np

from shockflow.geometry.base import Chart, Geometry, GeometryError
from shockflow.geometry.batched_loss import batched_loss
from shockflow.geometry.registry import register
from shockflow.models.base import Model
from solvers.grid import Grid

__all__ = ["MeanFieldGeometry", "ContinuityProblem", "McKeanVlasovVelocity"]


@dataclass(frozen=True)
class ContinuityProblem:
    """``ρ_t + ∇·(ρ v) = T Δρ`` on neuron space at one instant: ``rho`` (cell averages, mass 1),
    ``face_velocity[k]`` (``v_k`` on the faces normal to axis ``k``: ``cells[k] + 1`` along it) and ``T``.

    ``field`` (set by :meth:`MeanFieldGeometry.continuity_problem`) is the McKean–Vlasov velocity
    of a density, ``field(t, rho) -> faces``; :meth:`solve` integrates the equation with
    :func:`solvers.charts.continuity.solve_continuity`.
    """

    grid: Grid
    rho: np.ndarray
    face_velocity: tuple
    temperature: float
    field: "McKeanVlasovVelocity | None" = None

    def solve(self, times, self_consistent: bool = True, boundary="wall", **settings):
        """Push ``rho`` to ``times`` (gradient-flow time ``t`` of the network's parameters: the mobility is
        ``I/m``, so a gradient-descent step of size ``η`` advances ``t`` by ``η``).

        ``self_consistent=True`` (McKean–Vlasov): the velocity is recomputed from the current density
        by ``field`` before every step (``velocity_update="step"``, the default) or every stage
        (``velocity_update="stage"``); ``False`` freezes ``face_velocity``, the field of the initial
        measure (a short-time approximation).  The diffusion is ``nu = temperature`` with ``D = 1``.
        Other ``settings`` go to :func:`solvers.charts.continuity.solve_continuity` (``reconstruction``,
        ``limiter``, ``integrator``, ``cfl``, ``velocity_update``, ``t0``, ``max_steps``); ``boundary``
        defaults to zero-flux walls at the box of the chart.  Returns a ``ContinuitySolution``.
        """
        from solvers.charts import solve_continuity

        if self.grid.ndim > 2:
            raise GeometryError(
                f"solve: the continuity solver takes 1-D or 2-D neuron spaces, this one has {self.grid.ndim} axes "
                "(a mean-field network with input_dim = 1)"
            )
        if self_consistent and self.field is None:
            raise GeometryError("solve: self_consistent=True needs the McKean–Vlasov field; build the problem with "
                                "MeanFieldGeometry.continuity_problem")
        velocity = self.field if self_consistent else self.face_velocity
        return solve_continuity(self.grid, self.rho, times, velocity, nu=self.temperature, boundary=boundary, **settings)


class McKeanVlasovVelocity:
    """The velocity ``v = -(1/m) ∇ψ(θ; ρ)`` on the faces of a grid, for a density ``ρ`` on it.

    The density's network output is ``f_ρ(x) = ∫ a φ(w·x) ρ(θ) dθ``, evaluated by the midpoint rule
    over the cells (``ρ`` holds cell averages); then ``r = ℓ'(f_ρ(x), y)/n`` on the samples, and, on
    the faces normal to axis ``k``, ``v_a = -(1/m) Σ_n r_n φ(w·x_n)`` (``k = 0``) or
    ``v_{w_j} = -(1/m) a Σ_n r_n φ'(w·x_n) x_{nj}``: :meth:`MeanFieldGeometry.velocity_field` with the
    empirical measure replaced by ``ρ``.  The matrices of ``φ`` at the cell centres and faces are
    computed once, so a call costs one matrix–vector product per axis.  Calling it as
    ``field(t, rho)`` fits the solver's velocity callback (``t`` unused: the field depends on ``ρ``).
    """

    def __init__(self, geometry: "MeanFieldGeometry", grid: Grid, X, y):
        model = geometry.model
        self.model = model
        self.grid = grid
        self.X = model._check_inputs(X)
        self.Y = model.loss_function.targets(y, self.X.shape[0], 1)
        act = model.activation
        centres = np.stack(grid.mesh(), axis=-1).reshape(-1, grid.ndim)
        self.readout = act.fn(centres[:, 1:] @ self.X.T) * centres[:, :1] * grid.cell_volume  # (cells, n)
        self.faces = []
        for k in range(grid.ndim):
            axes = [grid.faces(j) if j == k else grid.centers(j) for j in range(grid.ndim)]
            pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
            z = pts[..., 1:] @ self.X.T
            B = act.fn(z) if k == 0 else pts[..., :1] * act.grad(z) * self.X[:, k - 1]
            self.faces.append(B.reshape(-1, self.X.shape[0]))
        self.shapes = [tuple(n + 1 if j == k else n for j, n in enumerate(grid.cells)) for k in range(grid.ndim)]

    def output(self, rho) -> np.ndarray:
        """``f_ρ(x_n)`` on the samples, shape ``(n,)``."""
        return np.asarray(rho, dtype=np.float64).reshape(-1) @ self.readout

    def __call__(self, t, rho) -> tuple:
        F = self.output(rho)[:, None]
        r = self.model.loss_function.grad(F, self.Y)[:, 0] / self.X.shape[0]
        scale = -1.0 / self.model.width
        return tuple(scale * (B @ r).reshape(shape) for B, shape in zip(self.faces, self.shapes))


@register
@dataclass(frozen=True, eq=False)
class MeanFieldGeometry(Geometry):
    """Empirical measure of the units ``(a_i, w_i)`` of a mean-field network on neuron space."""

    name = "mean_field"
    symmetry = "permutations of hidden units; quotient: the empirical measure of neurons (a, w) on neuron space"
    models = ("mean_field",)

    model: Model
    extent: float | None = None

    def __post_init__(self):
        self.check_model()
        if self.model.output_dim != 1:
            raise GeometryError(f"model: the mean-field geometry needs a scalar output, found output_dim = {self.model.output_dim}")
        theta = self.neurons(self.model.params)
        extent = 1.5 * float(np.abs(theta).max()) + 1e-12 if self.extent is None else float(self.extent)
        if not (np.isfinite(extent) and extent > 0):
            raise GeometryError(f"extent: expected a half-width > 0 of the neuron-space box, found {self.extent!r}")
        object.__setattr__(self, "extent", extent)

    # -- neuron space ----------------------------------------------------------------------
    def neurons(self, params) -> np.ndarray:
        """Neuron positions ``θ_i = (a_i, w_i)``, shape ``(m, 1+d)`` in unit order."""
        return np.concatenate([np.asarray(params["a"], dtype=np.float64)[:, None], np.asarray(params["W"], dtype=np.float64)], axis=1)

    @cached_property   # the settings are frozen: one Chart per geometry (it was rebuilt on every read)
    def chart(self) -> Chart:
        d = self.model.input_dim
        names = ("a",) + tuple(f"w{k}" for k in range(d))
        return Chart(names, (-self.extent,) * (1 + d), (self.extent,) * (1 + d), degenerate="nowhere (Euclidean neuron space)")

    def coordinates(self, params):
        theta = self.neurons(self.check_params(params))
        order = np.lexsort(theta.T[::-1])
        return theta[order]

    def conserved(self, params):
        theta = self.coordinates(params)
        out = {"mass": np.array(1.0), "units": np.array(float(theta.shape[0]))}
        if self.model.activation.name in ("relu", "identity"):
            out["balance"] = theta[:, 0] ** 2 - np.sum(theta[:, 1:] ** 2, axis=1)
        return out

    def mobility(self, points):
        p = np.asarray(points, dtype=np.float64)
        return np.broadcast_to(np.eye(p.shape[-1]) / self.model.width, (*p.shape[:-1], p.shape[-1], p.shape[-1])).copy()

    def section(self, points):
        """Neuron configurations ``(..., m, 1+d)`` -> parameters ``{"a": (..., m), "W": (..., m, d)}``."""
        p = np.asarray(points, dtype=np.float64)
        m = self.model.width
        if p.ndim < 2 or p.shape[-2:] != (m, 1 + self.model.input_dim):
            raise GeometryError(f"points: expected neuron configurations (..., {m}, {1 + self.model.input_dim}), found shape {p.shape}")
        self.chart.check(p)
        return {"a": p[..., 0].copy(), "W": p[..., 1:].copy()}

    def chart_loss(self, points, X, y):
        """The loss of whole neuron configurations ``(..., m, 1+d)`` (batched)."""
        p = np.asarray(points, dtype=np.float64)
        params = self.section(p)
        lead = p.shape[:-2]
        flat = {k: v.reshape(-1, *v.shape[len(lead):]) for k, v in params.items()}
        return batched_loss(self.model, flat, X, y).reshape(lead)

    # -- the mean-field flow -----------------------------------------------------------------
    def _residual(self, params, X, y) -> np.ndarray:
        X = self.model._check_inputs(X)
        clone = self.model.copy()
        for k in clone.params:
            clone.params[k][...] = params[k]
        F, _ = clone._forward(X)
        Y = clone.loss_function.targets(y, X.shape[0], 1)
        return clone.loss_function.grad(F, Y)[:, 0] / X.shape[0]  # E_x over the sample mean

    def potential(self, points, X, y, params=None) -> np.ndarray:
        """``ψ(θ; μ) = E_x[ℓ' a φ(w·x)]`` at neuron-space points ``(..., 1+d)`` for the measure of ``params``."""
        params = self.model.params if params is None else self.check_params(params)
        r = self._residual(params, X, y)
        p = np.asarray(points, dtype=np.float64)
        z = np.einsum("...d,nd->...n", p[..., 1:], np.asarray(X, dtype=np.float64))
        return p[..., 0] * (self.model.activation.fn(z) @ r)

    def velocity_field(self, points, X, y, params=None) -> np.ndarray:
        """``v(θ) = -(1/m) ∇_θ ψ(θ; μ)`` at ``points (..., 1+d)``: the velocity of a neuron sitting there."""
        params = self.model.params if params is None else self.check_params(params)
        r = self._residual(params, X, y)
        X = np.asarray(X, dtype=np.float64)
        p = np.asarray(points, dtype=np.float64)
        z = np.einsum("...d,nd->...n", p[..., 1:], X)
        da = self.model.activation.fn(z) @ r
        dw = p[..., 0, None] * ((self.model.activation.grad(z) * r) @ X)
        return -np.concatenate([da[..., None], dw], axis=-1) / self.model.width

    def velocity(self, points, X, y):
        return self.velocity_field(points, X, y)

    def density(self, params, cells) -> tuple[Grid, np.ndarray]:
        """Histogram of the empirical measure on ``chart.grid(cells)``: cell averages with total mass 1."""
        theta = self.neurons(self.check_params(params))
        self.chart.check(theta, name="neurons")
        grid = self.chart.grid(cells)
        edges = [grid.faces(k) for k in range(grid.ndim)]
        hist, _ = np.histogramdd(theta, bins=edges)
        return grid, hist / (theta.shape[0] * grid.cell_volume)

    def continuity_problem(self, cells, X, y, temperature: float = 0.0, params=None) -> ContinuityProblem:
        """The continuity equation's data at the measure of ``params`` (default: the reference)."""
        params = self.model.params if params is None else params
        if not (np.isfinite(temperature) and temperature >= 0):
            raise GeometryError(f"temperature: expected a number >= 0, found {temperature!r}")
        grid, rho = self.density(params, cells)
        faces = []
        for k in range(grid.ndim):
            axes = [grid.faces(j) if j == k else grid.centers(j) for j in range(grid.ndim)]
            pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)
            faces.append(self.velocity_field(pts, X, y, params)[..., k])
        return ContinuityProblem(grid, rho, tuple(faces), float(temperature), McKeanVlasovVelocity(self, grid, X, y))


@register
@dataclass(frozen=True, eq=False)
class MeanFieldCollectiveGeometry(Geometry):
    """The 1-D orbit of the empirical measure of a linear mean-field network (a collective coordinate).

    For ``f(x) = (1/m) Σ_i a_i w_i x`` (identity activation, ``d = 1``) every unit's product
    ``q_i = a_i w_i`` enters only through ``Q = (1/m) Σ_i q_i``, and gradient flow gives
    ``q̇_i = -(1/m)(a_i² + w_i²) L'(Q) = -(1/m) sqrt(c_i² + 4 q_i²) L'(Q)`` with the conserved
    ``c_i = a_i² - w_i²`` (docs/theory.md §1, rescaling of each unit).  All units share the clock
    ``ds/dt = -(1/m) L'(Q)``, so the measure moves along the curve

        q_i(s) = (|c_i|/2) sinh(asinh(2 q_i(0)/|c_i|) + 2s)        (q_i(0) e^{±2s} when c_i = 0)

    through the initial measure (s = 0): a flow-invariant 1-D chart of the mean-field quotient.
    Along it ``∂_s L̄ = L'(Q) Q'(s)``, so ``ṡ = -g^{ss} ∂_s L̄`` with the mobility

        g^{ss}(s) = 1 / (m Q'(s)) = 1 / Σ_i sqrt(c_i² + 4 q_i(s)²),

    which is tiny where all units are small (the degenerate ridge of small initialisation: the escape
    integral of docs/theory.md §1 applies).  The chart is exact for the identity activation with one input
    dimension; :class:`MeanFieldGeometry` is the full neuron-space description.

    **Coordinates.**  ``s`` of a parameter set: the median over units of
    ``(asinh(2q_i/|c_i|) - asinh(2q_i(0)/|c_i|))/2``.  **Section.**  Unit by unit as in the rescaling
    geometry: ``a_i² = (c_i + sqrt(c_i² + 4q_i²))/2``, ``a_i`` with its initial sign, ``w_i = q_i/a_i``.
    """

    name = "mean_field_collective"
    symmetry = ("permutations and per-unit rescaling of a linear mean-field network; coordinate: the clock s of "
                "the measure's 1-D orbit q_i(s)")
    models = ("mean_field",)

    model: Model
    extent: float = 4.0

    def __post_init__(self):
        self.check_model()
        m = self.model
        if m.activation.name != "identity" or m.input_dim != 1 or m.output_dim != 1:
            raise GeometryError(
                f"model: the collective mean-field chart needs activation 'identity', input_dim 1 and a scalar "
                f"output (the units then share one clock), found {m.activation.name!r}, input_dim {m.input_dim}, "
                f"output_dim {m.output_dim}")
        if not (np.isfinite(self.extent) and self.extent > 0):
            raise GeometryError(f"extent: expected a half-width > 0 of the clock interval, found {self.extent!r}")
        a, w = self._units(m.params)
        object.__setattr__(self, "_c", a * a - w * w)
        object.__setattr__(self, "_q0", a * w)
        object.__setattr__(self, "_sign", np.where(a < 0, -1.0, 1.0))

    @staticmethod
    def _units(params):
        return np.asarray(params["a"], dtype=np.float64).reshape(-1), np.asarray(params["W"], dtype=np.float64).reshape(-1)

    def products(self, s) -> np.ndarray:
        """``q_i(s)``, shape ``(*s.shape, m)``."""
        s = np.asarray(s, dtype=np.float64)[..., None]
        c, q0 = np.abs(self._c), self._q0
        zero = c == 0
        cs = np.where(zero, 1.0, c)
        moving = 0.5 * cs * np.sinh(np.arcsinh(2.0 * q0 / cs) + 2.0 * s)
        return np.where(zero, q0 * np.exp(2.0 * np.sign(q0) * s), moving)

    def strength(self, points):
        """The collective product ``Q(s) = (1/m) Σ q_i(s)`` (the clock ``s`` is logarithmic in it)."""
        p = np.asarray(points, dtype=np.float64)
        return np.mean(self.products(p[..., 0]), axis=-1)[..., None]

    @cached_property   # the settings are frozen: one Chart per geometry (it was rebuilt on every read)
    def chart(self) -> Chart:
        return Chart(("s",), (-self.extent,), (self.extent,),
                     degenerate="nowhere exactly; g^ss = 1/Σ sqrt(c_i² + 4q_i²) is large where all units are small")

    def coordinates(self, params):
        a, w = self._units(self.check_params(params))
        c, q = np.abs(self._c), a * w
        cs = np.where(c == 0, 1.0, c)
        s = np.where(c == 0, 0.5 * np.log(np.abs(q / np.where(self._q0 == 0, 1.0, self._q0))) * np.sign(self._q0),
                     0.5 * (np.arcsinh(2.0 * q / cs) - np.arcsinh(2.0 * self._q0 / cs)))
        return np.array([float(np.median(s))])

    def conserved(self, params):
        a, w = self._units(self.check_params(params))
        return {"c": a * a - w * w}

    def mobility(self, points):
        p = np.asarray(points, dtype=np.float64)
        q = self.products(p[..., 0])
        return (1.0 / np.sum(np.sqrt(self._c ** 2 + 4.0 * q * q), axis=-1))[..., None, None]

    def section(self, points):
        p = self.chart.check(points)
        q = self.products(p[..., 0])
        a2 = 0.5 * (self._c + np.sqrt(self._c ** 2 + 4.0 * q * q))
        a = self._sign * np.sqrt(a2)
        with np.errstate(divide="ignore", invalid="ignore"):
            w = np.where(a != 0, q / np.where(a == 0, 1.0, a), np.sqrt(np.maximum(-self._c, 0.0)))
        return {"a": a, "W": w[..., None]}
