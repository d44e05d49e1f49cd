"""Finite volumes for a scalar conservation law on a closed triangulated surface.

Solves, for cell averages ``q_T`` on the triangles of a :class:`~solvers.surfaces.mesh.TriangleMesh`,

    q_t + div_Γ ( f(q) V(x) ) = 0,        f(q) = q  (``"linear"``)   or   f(q) = ½ q²  (``"burgers"``),

transport of ``q`` (or Burgers' equation) along a tangent velocity field ``V`` (docs/theory.md §1: the
gradient ``p = ∇u`` obeys Burgers' equation; along the orbits of a divergence-free field,
``q_t + V·∇(½q²) = 0`` is one-dimensional Burgers on each orbit).  For ``V = ω × x`` on the sphere
(:func:`rotation`) each circle of latitude carries ``q_t + ω ∂_φ(½q²) = 0`` in the longitude ``φ``.

Scheme (first-order Godunov-type finite volumes on the piecewise-flat surface):

    A_T dq_T/dt = - Σ_{e ∈ ∂T} ± F_e,     F_e = |e| Σ_q w_q F̂(q_L, q_R; a_e(s_q)),     a_e(s) = V(x_e(s)) · n_e,

where the edge ``e`` runs from ``x_a`` to ``x_b`` (``a < b``), its left triangle ``L`` traverses it
``a -> b`` and ``n_e = normalize(t_e × (N_L + N_R))`` is the unit conormal from ``L`` to ``R`` averaged
over the two triangles (``t_e`` the edge direction, ``N`` the unit normals).  The points ``s_q`` and
weights ``w_q`` are basix's Gauss–Jacobi rule on the reference interval (:class:`~solvers.surfaces.fem.P1Reference`);
``a_e(s_q)`` is sampled once before time stepping.  ``F̂`` at each point is the exact Riemann
(Godunov) flux of ``g(q) = a f(q)`` — ``a max(max(q_L,0)², min(q_R,0)²)/2`` for Burgers with
``a ≥ 0``, ``a max(min(q_L,0)², max(q_R,0)²)/2`` with ``a < 0``, upwinding for the linear flux — or
the Rusanov flux ``½(g(q_L) + g(q_R)) - ½ max|g'| (q_R - q_L)``.  Each edge flux is computed once
and added to one cell and subtracted from the other, so the total ``Σ_T A_T q_T`` is conserved to
round-off.  Forward Euler is monotone for ``dt ≤ 1 / max_T r_T`` with the local rate

    r_T = (1/A_T) Σ_{e ∈ ∂T} |e| max_q |a_e(s_q)| · s(q_L, q_R),     s = 1 (linear), max(|q_L|, |q_R|) (Burgers),

i.e. ``dt ~ h_T / |V|`` with ``h_T = A_T / perimeter`` (half the inradius) the local mesh size; SSP
Runge–Kutta methods keep that for ``cfl ≤ 1``.

:func:`stage_kernel` evaluates a whole Runge–Kutta stage (edge loop) in one compiled call;
:meth:`SurfaceConservation.stage_reference` is its NumPy reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numba
import numpy as np

from solvers.errors import BlowUpError, SolverInputError, first_nonfinite, require_cfl, require_choice, require_times
from solvers.surfaces.mesh import TriangleMesh
from solvers.surfaces.fem import P1Reference
from solvers.surfaces.solution import SurfaceSolution
from solvers.time_stepping import Clock, tableau

LINEAR, BURGERS = 0, 1
GODUNOV, RUSANOV = 0, 1

#: flux functions f(q), name -> kernel code
SURFACE_FLUXES = {"linear": LINEAR, "burgers": BURGERS}

#: numerical fluxes, name -> kernel code
SURFACE_NUMERICAL_FLUXES = {"godunov": GODUNOV, "rusanov": RUSANOV}


def rotation(omega=(0.0, 0.0, 1.0)) -> Callable:
    """The velocity ``V(x) = ω × x`` of a rigid rotation (tangent to every sphere about the origin)."""
    w = np.asarray(omega, dtype=np.float64)
    if w.shape != (3,) or not np.all(np.isfinite(w)):
        raise SolverInputError(f"omega: expected a finite 3-vector, found {omega!r}")

    def velocity(x, y, z):
        return np.stack([w[1] * z - w[2] * y, w[2] * x - w[0] * z, w[0] * y - w[1] * x])

    return velocity


@dataclass(frozen=True)
class SurfaceFVSettings:
    """Everything that chooses the scheme, validated in one place."""

    flux: str = "burgers"
    numerical_flux: str = "godunov"
    integrator: str = "ssprk3"
    cfl: float = 0.5
    quadrature_degree: int = 3
    max_steps: int = 10_000_000

    def __post_init__(self):
        require_choice("flux", self.flux, SURFACE_FLUXES)
        require_choice("numerical_flux", self.numerical_flux, SURFACE_NUMERICAL_FLUXES)
        tableau(self.integrator)
        object.__setattr__(self, "cfl", require_cfl(self.cfl))
        P1Reference(self.quadrature_degree)  # validates the degree
        object.__setattr__(self, "quadrature_degree", int(self.quadrature_degree))
        if isinstance(self.max_steps, bool) or not float(self.max_steps).is_integer() or int(self.max_steps) < 1:
            raise SolverInputError(f"max_steps: expected a whole number >= 1, found {self.max_steps!r}")
        object.__setattr__(self, "max_steps", int(self.max_steps))

    def as_dict(self) -> dict:
        return {"equation": "conservation_law", "flux": self.flux, "numerical_flux": self.numerical_flux,
                "integrator": self.integrator, "cfl": self.cfl, "quadrature_degree": self.quadrature_degree}


# -- kernels -------------------------------------------------------------------------------------
@numba.njit(cache=True)
def point_flux(flux, numflux, a, ql, qr):
    """``F̂(q_L, q_R; a)`` for ``g(q) = a f(q)`` (see the module docstring)."""
    if flux == LINEAR:
        if numflux == GODUNOV:
            return a * ql if a >= 0.0 else a * qr
        return 0.5 * a * (ql + qr) - 0.5 * abs(a) * (qr - ql)
    if numflux == GODUNOV:
        if a >= 0.0:
            lo = max(ql, 0.0)
            hi = min(qr, 0.0)
        else:
            lo = min(ql, 0.0)
            hi = max(qr, 0.0)
        return 0.5 * a * max(lo * lo, hi * hi)
    return 0.25 * a * (ql * ql + qr * qr) - 0.5 * abs(a) * max(abs(ql), abs(qr)) * (qr - ql)


@numba.njit(cache=True)
def stage_kernel(q_prev, q0, out, alpha, beta, dt, flux, numflux, left, right, length, speed, qw, areas):
    """One Shu–Osher stage ``out = α q0 + β (q_prev + dt L(q_prev))`` of the edge-flux scheme.

    ``speed[e, q] = a_e(s_q)``; ``qw`` the interval quadrature weights (sum 1).  Returns the largest
    ``|out|`` (non-finite when the state blew up)."""
    m = q_prev.shape[0]
    for k in range(m):
        out[k] = alpha * q0[k] + beta * q_prev[k]
    scale = beta * dt
    for e in range(left.shape[0]):
        L = left[e]
        R = right[e]
        ql = q_prev[L]
        qr = q_prev[R]
        F = 0.0
        for q in range(qw.shape[0]):
            F += qw[q] * point_flux(flux, numflux, speed[e, q], ql, qr)
        F *= length[e] * scale
        out[L] -= F / areas[L]
        out[R] += F / areas[R]
    big = 0.0
    for k in range(m):
        v = abs(out[k])
        if not v <= big:
            big = v
    return big


@numba.njit(cache=True)
def rate_kernel(q, flux, left, right, length, max_speed, areas, rate):
    """``max_T r_T`` (the inverse of the largest monotone forward-Euler step); ``rate`` is scratch."""
    for k in range(q.shape[0]):
        rate[k] = 0.0
    for e in range(left.shape[0]):
        L = left[e]
        R = right[e]
        s = max_speed[e] * length[e]
        if flux == BURGERS:
            s *= max(abs(q[L]), abs(q[R]))
        rate[L] += s
        rate[R] += s
    big = 0.0
    for k in range(q.shape[0]):
        r = rate[k] / areas[k]
        if not r <= big:
            big = r
    return big


def point_flux_reference(flux: str, numflux: str, a, ql, qr) -> np.ndarray:
    """Vectorised NumPy reference of :func:`point_flux`."""
    a, ql, qr = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, ql, qr)))
    if flux == "linear":
        if numflux == "godunov":
            return np.where(a >= 0, a * ql, a * qr)
        return 0.5 * a * (ql + qr) - 0.5 * np.abs(a) * (qr - ql)
    if numflux == "godunov":
        lo = np.where(a >= 0, np.maximum(ql, 0), np.minimum(ql, 0))
        hi = np.where(a >= 0, np.minimum(qr, 0), np.maximum(qr, 0))
        return 0.5 * a * np.maximum(lo**2, hi**2)
    return 0.25 * a * (ql**2 + qr**2) - 0.5 * np.abs(a) * np.maximum(np.abs(ql), np.abs(qr)) * (qr - ql)


# -- the discretisation --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SurfaceConservation:
    """The scheme on ``mesh`` for the velocity field ``velocity(x, y, z) -> (3, ...)`` (sampled once)."""

    mesh: TriangleMesh
    velocity: Callable
    settings: SurfaceFVSettings
    reference: P1Reference = field(init=False, repr=False)
    conormals: np.ndarray = field(init=False, repr=False)
    speed: np.ndarray = field(init=False, repr=False)
    max_speed: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        mesh = self.mesh
        if not isinstance(mesh, TriangleMesh):
            raise SolverInputError(f"mesh: expected a solvers.surfaces.mesh.TriangleMesh, found {type(mesh).__name__}")
        mesh.check_closed("solve_surface_conservation")
        if not callable(self.velocity):
            raise SolverInputError(f"velocity: expected a function V(x, y, z) returning 3 components, found "
                                   f"{type(self.velocity).__name__}")
        ref = P1Reference(self.settings.quadrature_degree)
        xa, xb = mesh.vertices[mesh.edges[:, 0]], mesh.vertices[mesh.edges[:, 1]]
        tangent = (xb - xa) / mesh.edge_lengths[:, None]
        nsum = mesh.normals[mesh.edge_triangles[:, 0]] + mesh.normals[mesh.edge_triangles[:, 1]]
        conormal = np.cross(tangent, nsum)
        conormal /= np.linalg.norm(conormal, axis=1)[:, None]
        pts = xa[:, None, :] + ref.edge_points[None, :, None] * (xb - xa)[:, None, :]  # (E, nq, 3)
        V = np.asarray(self.velocity(pts[..., 0], pts[..., 1], pts[..., 2]), dtype=np.float64)
        if V.shape != (3, *pts.shape[:2]):
            raise SolverInputError(
                f"velocity: expected V(x, y, z) to return 3 components shaped like x, i.e. {(3, *pts.shape[:2])}, "
                f"found {V.shape}"
            )
        bad = ~np.isfinite(V)
        if bad.any():
            e = int(np.argwhere(bad)[0, 1])
            raise SolverInputError(f"velocity: expected finite values, found a non-finite value on edge "
                                   f"{tuple(int(v) for v in mesh.edges[e])}")
        speed = np.einsum("deq,ed->eq", V, conormal)
        for name, value in (
            ("reference", ref),
            ("conormals", conormal),
            ("speed", np.ascontiguousarray(speed)),
            ("max_speed", np.abs(speed).max(axis=1)),
        ):
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            object.__setattr__(self, name, value)

    @property
    def codes(self) -> tuple[int, int]:
        s = self.settings
        return SURFACE_FLUXES[s.flux], SURFACE_NUMERICAL_FLUXES[s.numerical_flux]

    def stage(self, q_prev, q0, out, alpha, beta, dt) -> float:
        m = self.mesh
        flux, num = self.codes
        return stage_kernel(q_prev, q0, out, alpha, beta, dt, flux, num, m.edge_triangles[:, 0], m.edge_triangles[:, 1],
                            m.edge_lengths, self.speed, self.reference.edge_weights, m.areas)

    def max_rate(self, q, scratch=None) -> float:
        m = self.mesh
        scratch = np.empty(m.n_triangles) if scratch is None else scratch
        return rate_kernel(q, self.codes[0], m.edge_triangles[:, 0], m.edge_triangles[:, 1], m.edge_lengths,
                           self.max_speed, m.areas, scratch)

    def rhs_reference(self, q) -> np.ndarray:
        """NumPy reference: ``dq_T/dt``."""
        m, s = self.mesh, self.settings
        q = np.asarray(q, dtype=np.float64)
        L, R = m.edge_triangles[:, 0], m.edge_triangles[:, 1]
        F = point_flux_reference(s.flux, s.numerical_flux, self.speed, q[L][:, None], q[R][:, None])
        F = m.edge_lengths * (F @ self.reference.edge_weights)
        net = np.bincount(R, weights=F, minlength=m.n_triangles) - np.bincount(L, weights=F, minlength=m.n_triangles)
        return net / m.areas

    def stage_reference(self, q_prev, q0, alpha, beta, dt) -> np.ndarray:
        return alpha * np.asarray(q0) + beta * (np.asarray(q_prev) + dt * self.rhs_reference(q_prev))

    def cell_averages(self, func) -> np.ndarray:
        """Averages of ``func(x, y, z)`` over every (flat) triangle by the basix triangle rule."""
        return cell_averages(self.mesh, func, self.settings.quadrature_degree)


def cell_averages(mesh: TriangleMesh, func, degree: int = 3) -> np.ndarray:
    """Averages of ``func(x, y, z)`` over the flat triangles of ``mesh``, with basix's triangle rule of ``degree``."""
    ref = P1Reference(degree)
    X = np.einsum("qa,kad->kqd", ref.phi, mesh.vertices[mesh.triangles])
    values = np.asarray(func(X[..., 0], X[..., 1], X[..., 2]), dtype=np.float64)
    values = np.broadcast_to(values, X.shape[:2])
    return values @ ref.weights / ref.weights.sum()


# -- driver --------------------------------------------------------------------------------------
def solve_surface_conservation(
    mesh: TriangleMesh,
    q0,
    times,
    *,
    velocity: Callable,
    flux: str = "burgers",
    numerical_flux: str = "godunov",
    integrator: str = "ssprk3",
    cfl: float = 0.5,
    quadrature_degree: int = 3,
    t0: float = 0.0,
    max_steps: int = 10_000_000,
) -> SurfaceSolution:
    """Solve ``q_t + div_Γ(f(q) V) = 0`` on the closed surface ``mesh`` from ``q0`` at ``t0`` to each of ``times``.

    ``q0``: a function ``f(x, y, z)`` (its cell averages are taken) or one value per triangle.
    ``velocity``: ``V(x, y, z)`` returning its 3 components stacked (e.g. :func:`rotation`).
    Returns a :class:`~solvers.surfaces.solution.SurfaceSolution` of triangle values.
    """
    settings = SurfaceFVSettings(flux, numerical_flux, integrator, cfl, quadrature_degree, max_steps)
    op = SurfaceConservation(mesh, velocity, settings)
    if callable(q0):
        q = op.cell_averages(q0)
    else:
        q = np.asarray(q0, dtype=np.float64)
        if q.shape != (mesh.n_triangles,):
            raise SolverInputError(f"q0: expected one value per triangle, shape ({mesh.n_triangles},), found {q.shape}")
    bad = ~np.isfinite(q)
    if bad.any():
        k = int(np.argmax(bad))
        raise SolverInputError(f"q0: expected finite values, found {float(q[k])!r} in triangle {k}")
    q = np.array(q, dtype=np.float64)
    t0 = float(t0)
    times = require_times(t0, times)
    rk = tableau(settings.integrator)
    clock = Clock(t0, times, settings.cfl, settings.max_steps)
    snapshots = [q.copy() for _ in range(clock.initial_outputs)]
    buffers = [np.empty_like(q), np.empty_like(q)]
    scratch = np.empty_like(q)
    rate = op.max_rate(q, scratch)
    while not clock.done:
        if not rate > 0:
            raise SolverInputError("velocity: the transport speed vanishes on every edge; nothing moves and no "
                                   "time step is set")
        dt, lands = clock.next_step(1.0 / rate)
        prev = q
        for s, (alpha, beta) in enumerate(rk):
            out = buffers[s % 2]
            if not math.isfinite(op.stage(prev, q, out, alpha, beta, dt)):
                found = first_nonfinite(out)
                cell, value = found if found is not None else ((), math.nan)
                raise BlowUpError("q", clock.step + 1, clock.t + dt, cell, value)
            prev = out
        old, q = q, prev
        buffers = [b for b in (*buffers, old) if b is not q][:2]
        rate = op.max_rate(q, scratch)
        if clock.advance(dt, lands):
            snapshots.append(q.copy())
    return SurfaceSolution(mesh, times.copy(), np.array(snapshots), "triangles", clock.step, settings.as_dict())
