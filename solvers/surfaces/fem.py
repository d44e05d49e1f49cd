"""P1 finite elements on a triangulated surface: the Laplace–Beltrami operator and the heat equation.

The reference triangle, its quadrature rules and the P1 (linear Lagrange) basis come from
fenics-basix, tabulated **once** (:class:`P1Reference`) into plain arrays — basis values
``phi[q, a]``, reference gradients ``dphi[q, r, a]`` (``r`` = ξ, η), weights ``w[q]`` — that the
Numba kernel :func:`p1_triangle_kernel` uses for every triangle.  On triangle ``T`` with corners
``x_a`` the map ``x(ξ) = Σ_a φ_a(ξ) x_a`` has the 3×2 Jacobian ``J = Σ_a x_a ⊗ ∇_ξ φ_a``, the
first fundamental form ``G = JᵀJ``, the area element ``sqrt(det G)`` and the surface gradient
``∇_Γ φ_a = J G⁻¹ ∇_ξ φ_a`` (docs/theory.md §1: ``Δ_g u = |g|^{-1/2} ∂_i(|g|^{1/2} g^{ij} ∂_j u)``, here
with the metric of each flat triangle).  Per triangle

    K_ab = Σ_q w_q sqrt(det G) ∇_Γφ_a · ∇_Γφ_b         (stiffness)
    M_a  = Σ_q w_q sqrt(det G) φ_a                     (lumped mass: row sums of the mass matrix)

The stiffness of P1 is the cotangent formula: ``K_ab = -(cot γ_ab)/2`` for ``a ≠ b`` with
``γ_ab`` the angle opposite edge ``ab``.  Assembled, ``w_ij = -K_ij`` is a weight per edge and

    (Δ_h u)_i = (1/M_i) Σ_{j ~ i} w_ij (u_j - u_i),        M_i = Σ_{T ∋ i} |T|/3,

the Laplace–Beltrami operator with lumped mass.  It annihilates constants, is symmetric in the
``M``-weighted inner product, and is negative semidefinite; on the sphere its eigenvalues approach
``-l(l+1)`` with multiplicity ``2l+1`` (spherical harmonics).  With non-negative weights (an
acute or Delaunay mesh) the explicit heat step is monotone for ``dt ≤ 1 / max_i (ν W_i / M_i)``,
``W_i = Σ_j w_ij``.

:func:`laplacian_kernel` / :func:`heat_stage_kernel` apply it (Numba); :meth:`LaplaceBeltrami.apply_reference`
is the NumPy/SciPy reference.  :func:`solve_surface_heat` integrates ``u_t = ν Δ_Γ u`` with an
SSP Runge–Kutta method (:mod:`solvers.time_stepping`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import basix
import numba
import numpy as np
import scipy.sparse

from solvers.errors import BlowUpError, SolverInputError, first_nonfinite, require_positive, require_times
from solvers.surfaces.mesh import TriangleMesh
from solvers.surfaces.solution import SurfaceSolution
from solvers.time_stepping import Clock, tableau


# -- reference element (basix) ------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class P1Reference:
    """basix's reference triangle, a quadrature rule of ``degree`` and the P1 basis tabulated on it.

    Also the Gauss–Jacobi rule on the reference interval [0, 1] for edge integrals
    (``edge_points``, ``edge_weights``; weights sum to 1).
    """

    degree: int = 2
    points: np.ndarray = field(init=False, repr=False)
    weights: np.ndarray = field(init=False, repr=False)
    phi: np.ndarray = field(init=False, repr=False)
    dphi: np.ndarray = field(init=False, repr=False)
    edge_points: np.ndarray = field(init=False, repr=False)
    edge_weights: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        if isinstance(self.degree, bool) or not float(self.degree).is_integer() or not 1 <= int(self.degree) <= 30:
            raise SolverInputError(f"degree: expected a whole quadrature degree in [1, 30], found {self.degree!r}")
        degree = int(self.degree)
        points, weights = basix.make_quadrature(basix.CellType.triangle, degree)
        element = basix.create_element(basix.ElementFamily.P, basix.CellType.triangle, 1, basix.LagrangeVariant.equispaced)
        table = element.tabulate(1, points)  # (derivative, point, basis, component)
        phi = table[0, :, :, 0]
        dphi = np.ascontiguousarray(np.transpose(table[1:3, :, :, 0], (1, 0, 2)))  # (point, ξ/η, basis)
        epoints, eweights = basix.make_quadrature(basix.CellType.interval, degree)
        for name, value in (
            ("degree", degree),
            ("points", np.ascontiguousarray(points)),
            ("weights", np.ascontiguousarray(weights)),
            ("phi", np.ascontiguousarray(phi)),
            ("dphi", dphi),
            ("edge_points", np.ascontiguousarray(epoints[:, 0])),
            ("edge_weights", np.ascontiguousarray(eweights)),
        ):
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            object.__setattr__(self, name, value)


# -- per-triangle P1 quantities ------------------------------------------------------------------
@numba.njit(cache=True)
def p1_triangle_kernel(x, tris, weights, phi, dphi, stiffness, mass, gradients, areas):
    """Per triangle: stiffness ``(m,3,3)``, lumped mass ``(m,3)``, surface gradients ``∇_Γφ_a`` ``(m,3,3)``
    (``gradients[k, a]`` the 3-vector of basis ``a``; from the last quadrature point, exact for P1),
    and area ``(m,)``, from the tabulated reference arrays."""
    m = tris.shape[0]
    nq = weights.shape[0]
    J = np.empty((3, 2))
    for k in range(m):
        for a in range(3):
            mass[k, a] = 0.0
            for b in range(3):
                stiffness[k, a, b] = 0.0
        areas[k] = 0.0
        for q in range(nq):
            for d in range(3):
                for r in range(2):
                    s = 0.0
                    for a in range(3):
                        s += x[tris[k, a], d] * dphi[q, r, a]
                    J[d, r] = s
            g00 = J[0, 0] * J[0, 0] + J[1, 0] * J[1, 0] + J[2, 0] * J[2, 0]
            g01 = J[0, 0] * J[0, 1] + J[1, 0] * J[1, 1] + J[2, 0] * J[2, 1]
            g11 = J[0, 1] * J[0, 1] + J[1, 1] * J[1, 1] + J[2, 1] * J[2, 1]
            det = g00 * g11 - g01 * g01
            jac = math.sqrt(det)
            i00, i01, i11 = g11 / det, -g01 / det, g00 / det
            for a in range(3):
                c0 = i00 * dphi[q, 0, a] + i01 * dphi[q, 1, a]
                c1 = i01 * dphi[q, 0, a] + i11 * dphi[q, 1, a]
                for d in range(3):
                    gradients[k, a, d] = J[d, 0] * c0 + J[d, 1] * c1
            wj = weights[q] * jac
            areas[k] += wj
            for a in range(3):
                mass[k, a] += wj * phi[q, a]
                for b in range(3):
                    dot = 0.0
                    for d in range(3):
                        dot += gradients[k, a, d] * gradients[k, b, d]
                    stiffness[k, a, b] += wj * dot
    return 0


def p1_triangle_reference(x, tris, ref: P1Reference):
    """NumPy reference of :func:`p1_triangle_kernel`: ``(stiffness, mass, gradients, areas)``."""
    X = x[tris]  # (m, corner, d)
    J = np.einsum("kad,qra->kqdr", X, ref.dphi)
    G = np.einsum("kqdr,kqds->kqrs", J, J)
    jac = np.sqrt(np.linalg.det(G))
    Ginv = np.linalg.inv(G)
    grads = np.einsum("kqdr,kqrs,qsa->kqad", J, Ginv, ref.dphi)
    wj = ref.weights[None, :] * jac
    stiffness = np.einsum("kq,kqad,kqbd->kab", wj, grads, grads)
    mass = np.einsum("kq,qa->ka", wj, ref.phi)
    return stiffness, mass, grads[:, -1], wj.sum(axis=1)


# -- the assembled operator ---------------------------------------------------------------------
@numba.njit(cache=True)
def laplacian_kernel(u, out, ptr, nbr, w, mass):
    """``out_i = (1/M_i) Σ_j w_ij (u_j - u_i)`` over the CSR neighbour lists."""
    n = u.shape[0]
    for i in range(n):
        s = 0.0
        ui = u[i]
        for p in range(ptr[i], ptr[i + 1]):
            s += w[p] * (u[nbr[p]] - ui)
        out[i] = s / mass[i]
    return 0


@numba.njit(cache=True)
def heat_stage_kernel(q_prev, q0, out, alpha, beta, dt, nu, ptr, nbr, w, mass):
    """One Shu–Osher stage of ``u_t = ν Δ_h u``: ``out = α q0 + β (q_prev + dt ν Δ_h q_prev)``.

    Returns the largest ``|out|`` (non-finite when the state blew up)."""
    n = q_prev.shape[0]
    big = 0.0
    for i in range(n):
        s = 0.0
        ui = q_prev[i]
        for p in range(ptr[i], ptr[i + 1]):
            s += w[p] * (q_prev[nbr[p]] - ui)
        v = alpha * q0[i] + beta * (ui + dt * nu * s / mass[i])
        out[i] = v
        a = abs(v)
        if not a <= big:  # also catches NaN
            big = a
    return big


@dataclass(frozen=True, eq=False)
class LaplaceBeltrami:
    """The P1 Laplace–Beltrami operator with lumped mass on ``mesh`` (see the module docstring).

    ``mass`` (per vertex), ``edge_weights`` (per edge, ``w_ij = -K_ij``), ``weights`` (aligned with
    ``mesh.neighbours``), ``gradients`` (per triangle, ``∇_Γφ_a``), ``stiffness`` (per triangle, 3×3).
    """

    mesh: TriangleMesh
    degree: int = 2
    reference: P1Reference = field(init=False, repr=False)
    stiffness: np.ndarray = field(init=False, repr=False)
    gradients: np.ndarray = field(init=False, repr=False)
    triangle_mass: np.ndarray = field(init=False, repr=False)
    mass: np.ndarray = field(init=False, repr=False)
    edge_weights: np.ndarray = field(init=False, repr=False)
    weights: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.mesh, TriangleMesh):
            raise SolverInputError(f"mesh: expected a solvers.surfaces.mesh.TriangleMesh, found {type(self.mesh).__name__}")
        ref = P1Reference(self.degree)
        mesh = self.mesh
        m = mesh.n_triangles
        stiffness, tmass = np.empty((m, 3, 3)), np.empty((m, 3))
        gradients, areas = np.empty((m, 3, 3)), np.empty(m)
        p1_triangle_kernel(mesh.vertices, mesh.triangles, ref.weights, ref.phi, ref.dphi, stiffness, tmass, gradients, areas)
        mass = np.zeros(mesh.n_vertices)
        np.add.at(mass, mesh.triangles, tmass)
        edge_weights = np.zeros(mesh.n_edges)
        for c in range(3):  # the edge opposite corner c joins corners c+1 and c+2
            np.add.at(edge_weights, mesh.triangle_edges[:, c], -stiffness[:, (c + 1) % 3, (c + 2) % 3])
        for name, value in (
            ("reference", ref),
            ("stiffness", stiffness),
            ("gradients", gradients),
            ("triangle_mass", tmass),
            ("mass", mass),
            ("edge_weights", edge_weights),
            ("weights", np.ascontiguousarray(edge_weights[mesh.neighbour_edges])),
        ):
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            object.__setattr__(self, name, value)

    @property
    def weight_sums(self) -> np.ndarray:
        """``W_i = Σ_j w_ij`` per vertex."""
        return np.add.reduceat(self.weights, self.mesh.neighbour_ptr[:-1])

    def check_monotone(self, who: str) -> None:
        """Raise, naming the edge, if a cotangent weight is not positive (the scheme of ``who`` would not be monotone)."""
        bad = np.flatnonzero(self.edge_weights <= 0)
        if bad.size:
            e = int(bad[0])
            a, b = (int(v) for v in self.mesh.edges[e])
            raise SolverInputError(
                f"mesh: {who} needs positive cotangent weights, but edge ({a}, {b}) has weight "
                f"{self.edge_weights[e]:.3g} (the two angles opposite it sum to π or more: the mesh is not "
                f"Delaunay there; {bad.size} such edges); refine or flip those edges"
            )

    def apply(self, u, out: np.ndarray | None = None) -> np.ndarray:
        """``Δ_h u`` (compiled)."""
        u = np.ascontiguousarray(u, dtype=np.float64)
        if u.shape != (self.mesh.n_vertices,):
            raise SolverInputError(f"u: expected one value per vertex ({self.mesh.n_vertices},), found {u.shape}")
        out = np.empty_like(u) if out is None else out
        laplacian_kernel(u, out, self.mesh.neighbour_ptr, self.mesh.neighbours, self.weights, self.mass)
        return out

    def stiffness_matrix(self) -> scipy.sparse.csr_matrix:
        """The assembled P1 stiffness matrix ``K`` (symmetric positive semidefinite)."""
        t = self.mesh.triangles
        rows = np.repeat(t, 3, axis=1).ravel()
        cols = np.tile(t, (1, 3)).ravel()
        n = self.mesh.n_vertices
        return scipy.sparse.csr_matrix((self.stiffness.ravel(), (rows, cols)), shape=(n, n))

    def apply_reference(self, u) -> np.ndarray:
        """NumPy/SciPy reference of :meth:`apply`: ``-M⁻¹ K u`` from the assembled stiffness matrix."""
        return -(self.stiffness_matrix() @ np.asarray(u, dtype=np.float64)) / self.mass

    def heat_step_bound(self, nu: float) -> float:
        """The largest monotone forward-Euler step of ``u_t = ν Δ_h u``: ``1 / max_i (ν W_i / M_i)``."""
        rate = float(np.max(nu * self.weight_sums / self.mass))
        return math.inf if rate == 0 else 1.0 / rate


def solve_surface_heat(mesh: TriangleMesh, u0, times, *, nu: float, integrator: str = "ssprk3", cfl: float = 0.9,
                       t0: float = 0.0, degree: int = 2, max_steps: int = 10_000_000) -> SurfaceSolution:
    """Solve ``u_t = ν Δ_Γ u`` on the closed surface ``mesh`` from ``u0`` (a function ``f(x, y, z)`` or one
    value per vertex) at ``t0`` to each of ``times``; P1 with lumped mass, SSP Runge–Kutta with
    ``dt = cfl / max_i (ν W_i / M_i)``.  Returns a :class:`SurfaceSolution` of vertex values."""
    if not isinstance(mesh, TriangleMesh):
        raise SolverInputError(f"mesh: expected a solvers.surfaces.mesh.TriangleMesh, found {type(mesh).__name__}")
    mesh.check_closed("solve_surface_heat")
    nu = require_positive("nu", nu)
    rk = tableau(integrator)
    t0 = float(t0)
    times = require_times(t0, times)
    u = mesh.sample(u0, name="u0")
    op = LaplaceBeltrami(mesh, degree)
    op.check_monotone("solve_surface_heat")
    clock = Clock(t0, times, cfl, max_steps)
    snapshots = [u.copy() for _ in range(clock.initial_outputs)]
    q = u.copy()
    buffers = [np.empty_like(q), np.empty_like(q)]
    ptr, nbr, w, mass = mesh.neighbour_ptr, mesh.neighbours, op.weights, op.mass
    dt_stable = op.heat_step_bound(nu)
    while not clock.done:
        dt, lands = clock.next_step(dt_stable)
        prev = q
        for s, (alpha, beta) in enumerate(rk):
            out = buffers[s % 2]
            big = heat_stage_kernel(prev, q, out, alpha, beta, dt, nu, ptr, nbr, w, mass)
            if not math.isfinite(big):
                found = first_nonfinite(out)
                raise BlowUpError("u", clock.step + 1, clock.t + dt, found[0] if found else (), found[1] if found else big)
            prev = out
        old, q = q, prev
        buffers = [b for b in (*buffers, old) if b is not q][:2]
        if clock.advance(dt, lands):
            snapshots.append(q.copy())
    settings = {"equation": "heat", "nu": nu, "integrator": integrator, "cfl": float(cfl), "degree": int(degree)}
    return SurfaceSolution(mesh, times.copy(), np.array(snapshots), "vertices", clock.step, settings)
