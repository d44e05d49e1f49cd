"""Viscous Hamilton–Jacobi equations on a closed triangulated surface: a monotone scheme on vertex stars.

Solves, for ``u`` at the vertices of a :class:`~solvers.surfaces.mesh.TriangleMesh`,

    u_t + H(∇_Γ u) = ν Δ_Γ u,        u(·, t0) = u0,

the viscous HJ equation of local entropy on a curved quotient (docs/theory.md §1:
``∂_γ u + ½ g^{ij} ∂_i u ∂_j u = ν Δ_g u``; on a surface embedded isometrically in R³,
``g^{ij} ∂_i u ∂_j u = |∇_Γ u|²``), with ``H = ½|p|²`` (``"quadratic"``) or ``H = |p|``
(``"eikonal"``: fronts moving at unit speed, ``u(x,t) = min_{d(x,y) ≤ t} u0(y)``).

Discretisation (ours; a Lax–Friedrichs scheme on vertex stars in the spirit of Abgrall, *Numerical
discretization of the first-order Hamilton–Jacobi equation on triangular meshes*, CPAM 1996):

* every triangle ``T`` carries the P1 surface gradient ``p_T = Σ_a u_a ∇_Γφ_a`` (basis gradients from
  :mod:`solvers.surfaces.fem`, i.e. from the basix tabulation);
* at vertex ``i`` the star gradient is the angle-weighted mean projected on the tangent plane,
  ``p̄_i = P_i Σ_{T ∋ i} (θ_{T,i}/Θ_i) p_T`` (``θ_{T,i}`` the angle of ``T`` at ``i``, ``Θ_i`` their sum,
  ``P_i = I - n_i n_iᵀ`` with ``n_i`` the vertex normal);
* the numerical Hamiltonian is

      Ĥ_i = H(p̄_i) - α_i κ_i Σ_{j ~ i} w_ij (u_j - u_i),

  with ``w_ij > 0`` the cotangent weights of the P1 Laplace–Beltrami operator and
  ``κ_i = max_j |∂p̄_i/∂u_j| / w_ij`` — the smallest dissipation for which ``∂Ĥ_i/∂u_j ≤ 0`` for every
  neighbour ``j`` whenever ``α_i ≥ |∇_p H|`` on the convex hull of the star's gradients.  For the
  quadratic ``H``, with ``a_i = max_{T ∋ i} |P_i p_T|`` (the local bound) and ``A = max_T |p_T|`` (the
  global one), ``α_i`` is

  - ``"smooth_lax_friedrichs"`` (the default): ``α_i = (A² + a_i²) / (2A)``, the parabola in ``a_i``
    tangent to ``a_i`` at ``a_i = A``; so ``a_i ≤ α_i ≤ A``, and ``α_i`` is a smooth function of ``|p|²``;
  - ``"local_lax_friedrichs"``: ``α_i = a_i``;
  - ``"lax_friedrichs"``: ``α_i = A``;

  and ``α_i = 1`` for the eikonal (every option).  Since the weights
  annihilate linear functions in a flat star (and only tangent curvature terms remain on a surface),
  the dissipation is ``O(α h)``: the scheme is consistent and first order;
* the viscous term is the P1 Laplace–Beltrami operator with lumped mass, ``(ν/M_i) Σ_j w_ij (u_j - u_i)``.

So ``u_t = L_i(u) = -H(p̄_i) + (ν/M_i + α_i κ_i) Σ_j w_ij (u_j - u_i)``.  Forward Euler is monotone
(comparison principle, no new extrema) for ``dt ≤ 1/r_i`` at every vertex, with the rate

    r_i = (2 α_i κ_i + ν / M_i) W_i,        W_i = Σ_j w_ij,

which combines the hyperbolic and the parabolic bounds harmonically (``1/dt = 1/dt_hyp + 1/dt_par``);
``κ_i W_i`` is ``O(1/h_i)``, the inverse local mesh size.  SSP Runge–Kutta methods keep the
monotonicity for ``cfl ≤ 1`` (:mod:`solvers.time_stepping`).  The mesh must be closed and its
cotangent weights positive (every icosphere and the generated tori are acute); otherwise the
error names the offending edge.

**Why not plain local Lax–Friedrichs (measured).**  The leading error of any of these schemes is a
numerical viscosity ``∝ h α(x) Δ_Γ u``.  With ``α = a ≈ |∇u|`` it has a kink where ``∇u = 0``, so on a
ridge (a maximum of ``u``, where characteristics converge and the first shock forms, docs/theory.md §1) the
error grows a kink ``∝ -h|s|`` (``s`` the distance to the ridge): first order in the values and the
gradient, but an O(1), non-vanishing error in the curvature at mesh scale.  It is not special to the
surface: first-order LLF and Godunov on a 1-D grid (:mod:`solvers.hamilton_jacobi.solver`) do the same
(``u_t + ½u_θ² = 0``, ``u0 = sin²θ``, ridge at ``θ = π/2``: the second difference at the ridge at
``t = 0.1`` is -3.03 (LLF) and -3.06 (Godunov) against the exact ``-2/(1-2t) = -2.5`` at 31 to 255
cells, where LF converges at first order: -2.40, -2.46, -2.48, -2.49; with second-order ENO2
derivatives the kink is O(h²) and LLF/Godunov converge: -2.52, -2.506, -2.501, -2.5003).  On the icosphere, for
``u0 = 1 - z²`` (the ``hj-sphere`` case, first shock on the equator at ``t* = 1/2``), measured by a
quartic least-squares fit of ``u`` against the latitude over ``|s| < 3h`` (exact Hopf–Lax samples give
-2.495, -2.4996, -2.4999, -2.5000 at n = 12, 24, 36, 48):

  =====================  ==================================  ==================================
  frequency n            12      24      36      48          12      24      36      48
  =====================  ==================================  ==================================
  curvature error        t = 0.1, exact -2.5                 t* fitted to -1/curvature, t ≤ 0.2
  local_lax_friedrichs   -0.20   -0.27   -0.28   -0.29       0.439   0.394   0.385   0.382
  smooth_lax_friedrichs  -0.015  -0.017  -0.011  -0.007      0.521   0.494   0.494   0.496
  lax_friedrichs         +0.114  +0.059  +0.042  +0.034      0.655   0.564   0.543   0.533
  =====================  ==================================  ==================================

(``shockflow``'s Hessian-probe fit over 41 snapshots: t* = 0.353, 0.372 with LLF at n = 24, 36;
0.487, 0.490 with the smooth coefficient.)  A monotone scheme needs ``α ≥ |∇_p H| = |p|``, and a
smooth majorant of ``|p|`` with curvature ``≤ K`` must be ``≥ 1/(2K)`` at ``p = 0``: less value error at
the ridge costs more curvature error, so some extra dissipation at the ridge is unavoidable.  The
tangent parabola spends it where ``|p|`` is small (``α = A/2`` on the ridge, ``α → a`` where
``a → A``): the curvature error then decays at first order (1-D: -0.028, -0.014, -0.007, -0.003 at
63 to 511 cells) and the max-norm value error is 4–15 % above LLF's (Hopf–Cole at n = 16:
1.13e-3 against 0.99e-3; Hopf–Lax through shocks: 3.21e-2 against 2.97e-2; LF: 1.68e-3, 5.01e-2).
The extra dissipation scales with the global ``A``: a steep front anywhere on the mesh raises it on
every ridge (never above LF's).

:func:`stage_kernel` evaluates a whole Runge–Kutta stage in one compiled call (two passes: triangle
gradients, then vertices); :meth:`SurfaceHJ.rhs_reference` is its NumPy reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba
import numpy as np

from solvers.errors import (
    BlowUpError,
    SolverInputError,
    first_nonfinite,
    require_cfl,
    require_choice,
    require_positive,
    require_times,
)
from solvers.surfaces.mesh import TriangleMesh
from solvers.surfaces.fem import LaplaceBeltrami
from solvers.surfaces.solution import SurfaceSolution
from solvers.time_stepping import Clock, tableau

QUADRATIC, EIKONAL = 0, 1
LAX_FRIEDRICHS, LOCAL_LAX_FRIEDRICHS, SMOOTH_LAX_FRIEDRICHS = 0, 1, 2

#: Hamiltonians on a surface, name -> kernel code (the names of :mod:`solvers.hamilton_jacobi.hamiltonians`)
SURFACE_HAMILTONIANS = {"quadratic": QUADRATIC, "eikonal": EIKONAL}

#: numerical Hamiltonians on vertex stars, name -> kernel code
SURFACE_NUMERICAL_HAMILTONIANS = {
    "lax_friedrichs": LAX_FRIEDRICHS,
    "local_lax_friedrichs": LOCAL_LAX_FRIEDRICHS,
    "smooth_lax_friedrichs": SMOOTH_LAX_FRIEDRICHS,
}


@dataclass(frozen=True)
class SurfaceHJSettings:
    """Everything that chooses the scheme, validated in one place."""

    hamiltonian: str = "quadratic"
    numerical_hamiltonian: str = "smooth_lax_friedrichs"
    integrator: str = "ssprk3"
    cfl: float = 0.5
    nu: float = 0.0
    max_steps: int = 10_000_000
    max_dt: float = math.inf

    def __post_init__(self):
        require_choice("hamiltonian", self.hamiltonian, SURFACE_HAMILTONIANS)
        require_choice("numerical_hamiltonian", self.numerical_hamiltonian, SURFACE_NUMERICAL_HAMILTONIANS)
        tableau(self.integrator)
        object.__setattr__(self, "cfl", require_cfl(self.cfl))
        object.__setattr__(self, "nu", require_positive("nu", self.nu, allow_zero=True))
        if isinstance(self.max_steps, bool) or not float(self.max_steps).is_integer() or int(self.max_steps) < 1:
            raise SolverInputError(f"max_steps: expected a whole number >= 1, found {self.max_steps!r}")
        object.__setattr__(self, "max_steps", int(self.max_steps))
        if not (float(self.max_dt) > 0):
            raise SolverInputError(f"max_dt: expected a number > 0 (or inf), found {self.max_dt!r}")
        object.__setattr__(self, "max_dt", float(self.max_dt))

    def as_dict(self) -> dict:
        return {
            "equation": "hamilton_jacobi",
            "hamiltonian": self.hamiltonian,
            "numerical_hamiltonian": self.numerical_hamiltonian,
            "integrator": self.integrator,
            "cfl": self.cfl,
            "nu": self.nu,
        }


# -- kernels -------------------------------------------------------------------------------------
@numba.njit(cache=True)
def triangle_gradients_kernel(u, tris, grads, ptri):
    """``ptri[k] = Σ_a u[tris[k, a]] grads[k, a]`` (the P1 gradient); returns ``max_k |ptri[k]|``."""
    big = 0.0
    for k in range(tris.shape[0]):
        s = 0.0
        for d in range(3):
            v = u[tris[k, 0]] * grads[k, 0, d] + u[tris[k, 1]] * grads[k, 1, d] + u[tris[k, 2]] * grads[k, 2, d]
            ptri[k, d] = v
            s += v * v
        s = math.sqrt(s)
        if not s <= big:
            big = s
    return big


@numba.njit(cache=True)
def _vertex_terms(i, u, ptri, star_ptr, star, star_weight, normals, nbr_ptr, nbr, w, ham, num, global_alpha):
    """``(H(p̄_i), α_i, Σ_j w_ij (u_j - u_i))`` at vertex ``i``."""
    n0, n1, n2 = normals[i, 0], normals[i, 1], normals[i, 2]
    p0 = 0.0
    p1 = 0.0
    p2 = 0.0
    alpha = 0.0
    for s in range(star_ptr[i], star_ptr[i + 1]):
        k = star[s]
        a0, a1, a2 = ptri[k, 0], ptri[k, 1], ptri[k, 2]
        dn = a0 * n0 + a1 * n1 + a2 * n2
        a0 -= dn * n0
        a1 -= dn * n1
        a2 -= dn * n2
        ws = star_weight[s]
        p0 += ws * a0
        p1 += ws * a1
        p2 += ws * a2
        if ham == QUADRATIC and num != LAX_FRIEDRICHS:
            mag = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
            if mag > alpha:
                alpha = mag
    norm2 = p0 * p0 + p1 * p1 + p2 * p2
    if ham == QUADRATIC:
        h = 0.5 * norm2
        if num == LAX_FRIEDRICHS:
            alpha = global_alpha
        elif num == SMOOTH_LAX_FRIEDRICHS and global_alpha > 0.0:
            alpha = 0.5 * (global_alpha + alpha * alpha / global_alpha)
    else:
        h = math.sqrt(norm2)
        alpha = 1.0
    lap = 0.0
    ui = u[i]
    for p in range(nbr_ptr[i], nbr_ptr[i + 1]):
        lap += w[p] * (u[nbr[p]] - ui)
    return h, alpha, lap


@numba.njit(cache=True)
def stage_kernel(q_prev, q0, out, a_rk, b_rk, dt, nu, ham, num, tris, grads, ptri, star_ptr, star, star_weight,
                 normals, nbr_ptr, nbr, w, wsum, mass, kappa):
    """One Shu–Osher stage ``out = a q0 + b (q_prev + dt L(q_prev))`` of the scheme in the module docstring.

    Returns ``max_i r_i`` of ``q_prev`` (the inverse stable step), or NaN if ``out`` is not finite."""
    global_alpha = triangle_gradients_kernel(q_prev, tris, grads, ptri)
    rate = 0.0
    finite = True
    for i in range(q_prev.shape[0]):
        h, alpha, lap = _vertex_terms(i, q_prev, ptri, star_ptr, star, star_weight, normals, nbr_ptr, nbr, w, ham, num,
                                      global_alpha)
        diss = nu / mass[i] + alpha * kappa[i]
        v = a_rk * q0[i] + b_rk * (q_prev[i] + dt * (diss * lap - h))
        out[i] = v
        if not abs(v) < math.inf:
            finite = False
        r = (2.0 * alpha * kappa[i] + nu / mass[i]) * wsum[i]
        if r > rate:
            rate = r
    return rate if finite else math.nan


@numba.njit(cache=True)
def rate_kernel(u, nu, ham, num, tris, grads, ptri, star_ptr, star, star_weight, normals, nbr_ptr, nbr, w, wsum, mass,
                kappa):
    """``max_i r_i`` of ``u``: the inverse of the largest monotone forward-Euler step."""
    global_alpha = triangle_gradients_kernel(u, tris, grads, ptri)
    rate = 0.0
    for i in range(u.shape[0]):
        h, alpha, lap = _vertex_terms(i, u, ptri, star_ptr, star, star_weight, normals, nbr_ptr, nbr, w, ham, num,
                                      global_alpha)
        r = (2.0 * alpha * kappa[i] + nu / mass[i]) * wsum[i]
        if not r <= rate:
            rate = r
    return rate


# -- the discretisation --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SurfaceHJ:
    """The precomputed scheme on ``mesh`` (star weights, projectors, κ, the Laplace–Beltrami weights)."""

    mesh: TriangleMesh
    settings: SurfaceHJSettings
    laplacian: LaplaceBeltrami = field(init=False, repr=False)
    star_weight: np.ndarray = field(init=False, repr=False)
    star_gradient: np.ndarray = field(init=False, repr=False)
    kappa: np.ndarray = field(init=False, repr=False)
    weight_sums: np.ndarray = field(init=False, repr=False)
    ptri: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        mesh = self.mesh
        if not isinstance(mesh, TriangleMesh):
            raise SolverInputError(f"mesh: expected a solvers.surfaces.mesh.TriangleMesh, found {type(mesh).__name__}")
        mesh.check_closed("solve_surface_hj")
        lb = LaplaceBeltrami(mesh)
        lb.check_monotone("solve_surface_hj")
        n, E = mesh.n_vertices, mesh.n_edges
        owner = np.repeat(np.arange(n), np.diff(mesh.star_ptr))  # vertex of each star entry
        tri = mesh.star
        corner = np.argmax(mesh.triangles[tri] == owner[:, None], axis=1)
        theta = mesh.angles[tri, corner]
        total = np.bincount(owner, weights=theta, minlength=n)
        star_weight = theta / total[owner]
        # g_ij = ∂p̄_i/∂u_j = Σ_{T ∋ i, j} ω_iT P_i ∇φ_j^T, stored per neighbour entry (i, j)
        P = np.eye(3)[None] - mesh.vertex_normals[:, :, None] * mesh.vertex_normals[:, None, :]
        entry_vertex = np.repeat(np.arange(n), np.diff(mesh.neighbour_ptr))
        entry_key = entry_vertex * E + mesh.neighbour_edges  # sorted: vertex-major, then by edge (stable csr)
        order = np.argsort(entry_key, kind="stable")
        g = np.zeros((mesh.neighbours.size, 3))
        for d in (1, 2):
            cj = (corner + d) % 3
            edge = mesh.triangle_edges[tri, (corner + 2 * d) % 3]
            pos = order[np.searchsorted(entry_key[order], owner * E + edge)]
            contrib = star_weight[:, None] * np.einsum("sij,sj->si", P[owner], lb.gradients[tri, cj])
            np.add.at(g, pos, contrib)
        ratio = np.linalg.norm(g, axis=1) / lb.weights
        kappa = np.maximum.reduceat(ratio, mesh.neighbour_ptr[:-1])
        for name, value in (
            ("laplacian", lb),
            ("star_weight", star_weight),
            ("star_gradient", g),
            ("kappa", kappa),
            ("weight_sums", lb.weight_sums),
        ):
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
            object.__setattr__(self, name, value)
        object.__setattr__(self, "ptri", np.empty((mesh.n_triangles, 3)))  # scratch

    @property
    def codes(self) -> tuple[int, int]:
        s = self.settings
        return SURFACE_HAMILTONIANS[s.hamiltonian], SURFACE_NUMERICAL_HAMILTONIANS[s.numerical_hamiltonian]

    def _arrays(self):
        m, lb = self.mesh, self.laplacian
        return (m.triangles, lb.gradients, self.ptri, m.star_ptr, m.star, self.star_weight, m.vertex_normals,
                m.neighbour_ptr, m.neighbours, lb.weights, self.weight_sums, lb.mass, self.kappa)

    def stage(self, q_prev, q0, out, alpha, beta, dt) -> float:
        """One compiled Runge–Kutta stage (see :func:`stage_kernel`)."""
        ham, num = self.codes
        return stage_kernel(q_prev, q0, out, alpha, beta, dt, self.settings.nu, ham, num, *self._arrays())

    def max_rate(self, u) -> float:
        """The inverse of the largest monotone forward-Euler step for the state ``u``."""
        ham, num = self.codes
        return rate_kernel(u, self.settings.nu, ham, num, *self._arrays())

    def rhs_reference(self, u) -> tuple[np.ndarray, float]:
        """NumPy reference: ``(L(u), max_i r_i)``."""
        m, lb, s = self.mesh, self.laplacian, self.settings
        u = np.asarray(u, dtype=np.float64)
        ptri = np.einsum("ka,kad->kd", u[m.triangles], lb.gradients)
        n = m.n_vertices
        owner = np.repeat(np.arange(n), np.diff(m.star_ptr))
        nrm = m.vertex_normals[owner]
        proj = ptri[m.star] - np.einsum("sd,sd->s", ptri[m.star], nrm)[:, None] * nrm
        pbar = np.zeros((n, 3))
        np.add.at(pbar, owner, self.star_weight[:, None] * proj)
        if s.hamiltonian == "quadratic":
            h = 0.5 * np.einsum("id,id->i", pbar, pbar)
            if s.numerical_hamiltonian != "lax_friedrichs":
                alpha = np.zeros(n)
                np.maximum.at(alpha, owner, np.linalg.norm(proj, axis=1))
                big = np.linalg.norm(ptri, axis=1).max()
                if s.numerical_hamiltonian == "smooth_lax_friedrichs" and big > 0:
                    alpha = 0.5 * (big + alpha**2 / big)
            else:
                alpha = np.full(n, np.linalg.norm(ptri, axis=1).max())
        else:
            h = np.linalg.norm(pbar, axis=1)
            alpha = np.ones(n)
        entry_vertex = np.repeat(np.arange(n), np.diff(m.neighbour_ptr))
        lap = np.bincount(entry_vertex, weights=lb.weights * (u[m.neighbours] - u[entry_vertex]), minlength=n)
        rhs = (s.nu / lb.mass + alpha * self.kappa) * lap - h
        rate = float(np.max((2 * alpha * self.kappa + s.nu / lb.mass) * self.weight_sums))
        return rhs, rate

    def stage_reference(self, q_prev, q0, alpha, beta, dt) -> tuple[np.ndarray, float]:
        rhs, rate = self.rhs_reference(q_prev)
        return alpha * np.asarray(q0) + beta * (np.asarray(q_prev) + dt * rhs), rate


# -- driver --------------------------------------------------------------------------------------
def solve_surface_hj(
    mesh: TriangleMesh,
    u0,
    times,
    *,
    hamiltonian: str = "quadratic",
    numerical_hamiltonian: str = "smooth_lax_friedrichs",
    nu: float = 0.0,
    integrator: str = "ssprk3",
    cfl: float = 0.5,
    t0: float = 0.0,
    max_steps: int = 10_000_000,
    max_dt: float = math.inf,
) -> SurfaceSolution:
    """Solve ``u_t + H(∇_Γ u) = ν Δ_Γ u`` on the closed surface ``mesh`` from ``u0`` at ``t0`` to each of ``times``.

    ``u0``: a function ``f(x, y, z)`` of the vertex coordinates or one value per vertex.
    ``hamiltonian``: ``"quadratic"`` (``½|p|²``) or ``"eikonal"`` (``|p|``).  ``numerical_hamiltonian``:
    the dissipation coefficient of the module docstring — ``"smooth_lax_friedrichs"`` (default; converging
    curvature at ridges, hence first-shock times), ``"local_lax_friedrichs"`` (smallest value error, but
    an O(1) curvature error at ridges) or ``"lax_friedrichs"``.  ``max_dt`` caps the step (after the CFL factor).  Returns a :class:`~solvers.surfaces.solution.SurfaceSolution` of vertex values.
    Raises :class:`SolverInputError` on bad input, :class:`BlowUpError` if ``u`` stops being finite.
    """
    settings = SurfaceHJSettings(hamiltonian, numerical_hamiltonian, integrator, cfl, nu, max_steps, max_dt)
    if not isinstance(mesh, TriangleMesh):
        raise SolverInputError(f"mesh: expected a solvers.surfaces.mesh.TriangleMesh, found {type(mesh).__name__}")
    u = mesh.sample(u0, name="u0")
    t0 = float(t0)
    times = require_times(t0, times)
    op = SurfaceHJ(mesh, settings)
    rk = tableau(settings.integrator)
    clock = Clock(t0, times, settings.cfl, settings.max_steps)
    snapshots = [u.copy() for _ in range(clock.initial_outputs)]
    q = u.copy()
    buffers = [np.empty_like(q), np.empty_like(q)]
    rate = op.max_rate(q)
    while not clock.done:
        dt_stable = min(1.0 / rate if rate > 0 else math.inf, settings.max_dt / settings.cfl)
        if not math.isfinite(dt_stable):
            raise SolverInputError(
                "max_dt: nothing limits the time step (ν = 0 and a flat initial state); give a finite max_dt"
            )
        dt, lands = clock.next_step(dt_stable)
        prev = q
        for s, (alpha, beta) in enumerate(rk):
            out = buffers[s % 2]
            if not math.isfinite(op.stage(prev, q, out, alpha, beta, dt)):
                found = first_nonfinite(out)
                cell, value = found if found is not None else ((), math.nan)
                raise BlowUpError("u", clock.step + 1, clock.t + dt, cell, value)
            prev = out
        old, q = q, prev
        buffers = [b for b in (*buffers, old) if b is not q][:2]
        rate = op.max_rate(q)
        if clock.advance(dt, lands):
            snapshots.append(q.copy())
    return SurfaceSolution(mesh, times.copy(), np.array(snapshots), "vertices", clock.step, settings.as_dict())
