"""Finite volumes for the continuity equation with a sign-changing velocity and diffusion.

    rho_t + div( rho v(x, t) ) = nu div( D(x) grad rho )            (docs/theory.md §1)

on a uniform 1-D or 2-D :class:`~solvers.grid.uniform.Grid`.  This is the transport of a density by a
given velocity field — the McKean–Vlasov equation of a mean-field network's neurons, with
``v = -grad (delta L / delta rho)`` and ``nu`` the SGD temperature — so, unlike
:mod:`solvers.conservation.solver` (flux ``a(x) f(q)`` with ``a > 0``), ``v`` may change sign.

**Data on faces.**  ``v_k`` and ``D_k`` are given on the faces normal to axis ``k``, as arrays of the
*interior-face* shape: ``cells[k] + 1`` entries along axis ``k`` (entry ``i`` is the face between
interior cells ``i - 1`` and ``i``), ``cells[j]`` along the others.  :func:`face_values` samples a
field ``func(*x)`` there.  A constant diffusivity is a number (``D = 1`` by default, so ``nu``
alone sets it); ``D_k`` on faces makes the diffusion diagonal-anisotropic.

**Flux.**  Through face ``i + 1/2`` of axis ``k``

    F = v^+ rho_L + v^- rho_R  -  nu D (rho_{i+1} - rho_i) / dx_k,      v^± = max(±v, 0) · (±1),

the Godunov (exact upwind) flux of linear transport with the face velocity, of the face states
``rho_L``, ``rho_R`` reconstructed first order (cell averages) or by MUSCL with a limited slope on
``rho`` (``minmod``, ``mc``, ``van_leer`` of :mod:`solvers.conservation.reconstruction`).  Each limiter keeps the
face values inside the range of the neighbouring averages.

**Positivity and the step.**  With forward Euler the new value of cell ``i`` is a combination
of old values whose weights are non-negative when ``dt * r_i <= 1`` (first order), with the
cell's *outflow rate*

    r_i = sum_k ( max(v_{k,i+1/2}, 0) + max(-v_{k,i-1/2}, 0) ) / dx_k
          + sum_k nu ( D_{k,i-1/2} + D_{k,i+1/2} ) / dx_k^2.

For MUSCL, write the cell average as a weighted mean of its two face values along each axis:
the same argument then needs ``dt * r_i <= 1/2``.  The driver takes
``dt = cfl / (max_i r_adv + max_i r_diff)`` (:func:`~solvers.time_stepping.combine_bounds` of the
advective and diffusive bounds), so ``rho >= 0`` is preserved for ``cfl <= 1`` (first order) and
``cfl <= 1/2`` (MUSCL), and by the SSP Runge–Kutta methods under the same number (their SSP
coefficient is 1).  The bound uses the *outflow*, not ``max|v|``: in a cell where the flow
diverges both faces export mass.  Defaults: ``cfl = 0.9`` first order, ``0.45`` MUSCL.
The weights of a forward-Euler step sum to ``1 - dt (div v)_i`` (discrete divergence), so also
``max rho`` grows at most by that factor per step: no overshoot where the flow converges.

**Boundaries** (any :meth:`BoundaryConditions.parse` specification, plus ``"wall"``):

``wall``       zero flux (the default): the velocity and the diffusivity on the boundary face are
               set to 0 and the ghost cells mirror the interior (even), so mass is conserved to
               round-off;
``periodic``   the first and last faces are one face: the velocity given there must agree
               (to 1e-10 relative) and the value on the first face is used for both;
``outflow``, ``symmetric``, ``dirichlet``   ghost cells as in :mod:`solvers.grid.boundary`; the upwind
               flux through the boundary face then moves mass out (``v`` outward) or in (``v``
               inward, with the ghost value), so mass changes by the boundary flux.

``reflecting`` (odd mirror, ghost ``= -rho``) is refused: it would feed negative density into the
reconstruction; ``wall`` is the zero-flux condition for a density.

**Velocity in time.**  ``velocity`` is either the face arrays (a steady field) or a callback
``velocity(t, rho) -> faces`` (a tuple of the face arrays; in 1-D a single array is accepted).
``rho`` is the interior density at that moment, a read-only view valid only during the call.
With ``velocity_update="step"`` the callback is evaluated once per step, at ``(t_n, rho^n)``, and
the velocity is frozen over the step: first order in time in the coupling whatever the
integrator.  With ``"stage"`` it is evaluated before every Runge–Kutta stage at the stage's time
``t_n + c_s dt`` and state (``c = 0`` / ``0, 1`` / ``0, 1, 1/2`` for euler / ssprk2 / ssprk3), keeping
the integrator's order; the step is chosen from the first stage's velocity, so positivity then
holds exactly only while the later stages' outflow rates stay within the same bound (they
differ by ``O(dt)`` for a velocity that depends smoothly on ``t`` and ``rho``).  The McKean–Vlasov
velocity ``v = -grad(delta L/delta rho)`` is such a callback (see
:meth:`shockflow.geometry.mean_field.ContinuityProblem.solve`).

**Kernels.**  :func:`stage_1d` and :func:`stage_2d` compute one Shu–Osher stage
``out = alpha q0 + beta (q + dt L(q))`` in one pass (every face flux and reconstruction once; in
2-D the lower x-face fluxes are carried in a row buffer) and return the smallest new value, or
NaN as soon as a non-finite value appears.  :func:`advective_rate_1d` / ``_2d`` give
``max_i r_i`` of the advective part.  NumPy references: :func:`rhs_reference`,
:func:`stage_reference`, :func:`advective_rate_reference`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np

from solvers.grid import BoundaryConditions, Side, fill_ghosts_compiled
from solvers.errors import BlowUpError, SolverInputError, first_nonfinite, require_cfl, require_choice, require_finite
from solvers.errors import require_positive, require_times
from solvers.grid import Grid
from solvers.conservation.reconstruction import LIMITERS, MUSCL, face_states_reference, limited_slope
from solvers.time_stepping import INTEGRATORS, Clock, combine_bounds, tableau

__all__ = [
    "ContinuitySettings", "ContinuitySolution", "solve_continuity", "face_values", "stage_times",
    "stage_1d", "stage_2d", "advective_rate_1d", "advective_rate_2d",
    "rhs_reference", "stage_reference", "advective_rate_reference", "diffusive_rate",
]

#: Reconstructions that keep the density non-negative (WENO5 does not, so it is not offered).
RECONSTRUCTIONS = {"first_order": 0, "muscl": MUSCL}
VELOCITY_UPDATES = ("step", "stage")
PERIODIC_FACE_RTOL = 1e-10


@dataclass(frozen=True)
class ContinuitySettings:
    """Scheme settings of a continuity-equation solve, validated in one place."""

    reconstruction: str = "first_order"
    limiter: str = "minmod"
    integrator: str = "ssprk2"
    cfl: float | None = None
    nu: float = 0.0
    velocity_update: str = "step"
    max_steps: int = 10_000_000

    def __post_init__(self):
        require_choice("reconstruction", self.reconstruction, RECONSTRUCTIONS)
        require_choice("limiter", self.limiter, LIMITERS)
        require_choice("integrator", self.integrator, INTEGRATORS)
        require_choice("velocity_update", self.velocity_update, VELOCITY_UPDATES)
        cfl = (0.9 if self.reconstruction == "first_order" else 0.45) if self.cfl is None else require_cfl(self.cfl)
        object.__setattr__(self, "cfl", cfl)
        object.__setattr__(self, "nu", require_positive("nu", self.nu, allow_zero=True))
        if isinstance(self.max_steps, bool) or int(self.max_steps) != self.max_steps or self.max_steps < 1:
            raise SolverInputError(f"max_steps: expected a whole number >= 1, found {self.max_steps!r}")


@dataclass(frozen=True)
class ContinuitySolution:
    """Snapshots of the interior density at the output times.

    ``mass[n]`` is ``∫ rho`` at ``times[n]``; ``min_value`` the smallest cell value seen in any
    stage of any step (>= 0 when the scheme preserved positivity).
    """

    grid: Grid
    times: np.ndarray
    snapshots: np.ndarray  # (len(times), *grid.shape)
    mass: np.ndarray
    min_value: float
    steps: int
    settings: ContinuitySettings

    @property
    def final(self) -> np.ndarray:
        return self.snapshots[-1]


# -- compiled kernels -------------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def face_states(recon, lim, qm, q, qp):
    """(lower, upper) face values of cell ``q`` with neighbours ``qm``, ``qp``."""
    if recon == MUSCL:
        s = limited_slope(lim, q - qm, qp - q)
        return q - 0.5 * s, q + 0.5 * s
    return q, q


@numba.njit(cache=True)
def upwind(v, left, right):
    """Godunov flux of linear transport ``rho v`` with face states ``left``, ``right``."""
    if v > 0.0:
        return v * left
    return v * right


@numba.njit(cache=True)
def stage_1d(qp, q0, out, alpha, beta, dt, g, dx, vf, df, recon, lim):
    """One fused stage in 1-D: ``out = alpha q0 + beta (qp + dt L(qp))`` on the interior.

    ``qp``, ``q0``, ``out`` padded (ghosts of ``qp`` filled); ``vf``, ``df`` (= nu D) on the
    ``n + 1`` interior faces.  Returns the smallest new value, NaN at the first non-finite one.
    """
    n = qp.shape[0] - 2 * g
    idx = 1.0 / dx
    lo_m, up_m = face_states(recon, lim, qp[g - 2], qp[g - 1], qp[g])
    lo_c, up_c = face_states(recon, lim, qp[g - 1], qp[g], qp[g + 1])
    f_lo = upwind(vf[0], up_m, lo_c) - df[0] * (qp[g] - qp[g - 1]) * idx
    low = np.inf
    for m in range(n):
        i = g + m
        q = qp[i]
        lo_n, up_n = face_states(recon, lim, q, qp[i + 1], qp[i + 2])
        f = upwind(vf[m + 1], up_c, lo_n) - df[m + 1] * (qp[i + 1] - q) * idx
        val = alpha * q0[i] + beta * (q - dt * idx * (f - f_lo))
        out[i] = val
        if not (abs(val) < np.inf):
            return np.nan
        if val < low:
            low = val
        f_lo = f
        up_c = up_n
    return low


@numba.njit(cache=True)
def stage_2d(qp, q0, out, alpha, beta, dt, g, dx, dy, vx, vy, dfx, dfy, recon, lim, row_flux, row_upper):
    """One fused stage in 2-D (axis 0 = x, axis 1 = y); ``row_flux``, ``row_upper``: work rows of length ny.

    ``row_flux[l]`` carries the flux through the lower x-face of the current cell of column ``l``
    and ``row_upper[l]`` that cell's reconstructed value at its upper x-face; the lower y-face
    flux is carried in a register.  Returns the smallest new value, NaN at the first non-finite one.
    """
    nx = qp.shape[0] - 2 * g
    ny = qp.shape[1] - 2 * g
    idx = 1.0 / dx
    idy = 1.0 / dy
    for l in range(ny):
        j = g + l
        lo_m, up_m = face_states(recon, lim, qp[g - 2, j], qp[g - 1, j], qp[g, j])
        lo_c, up_c = face_states(recon, lim, qp[g - 1, j], qp[g, j], qp[g + 1, j])
        row_flux[l] = upwind(vx[0, l], up_m, lo_c) - dfx[0, l] * (qp[g, j] - qp[g - 1, j]) * idx
        row_upper[l] = up_c
    low = np.inf
    for m in range(nx):
        i = g + m
        lo_m, up_m = face_states(recon, lim, qp[i, g - 2], qp[i, g - 1], qp[i, g])
        lo_c, up_c = face_states(recon, lim, qp[i, g - 1], qp[i, g], qp[i, g + 1])
        k_lo = upwind(vy[m, 0], up_m, lo_c) - dfy[m, 0] * (qp[i, g] - qp[i, g - 1]) * idy
        for l in range(ny):
            j = g + l
            q = qp[i, j]
            lo_e, up_e = face_states(recon, lim, q, qp[i + 1, j], qp[i + 2, j])  # cell (m + 1, l) along x
            h = upwind(vx[m + 1, l], row_upper[l], lo_e) - dfx[m + 1, l] * (qp[i + 1, j] - q) * idx
            lo_n, up_n = face_states(recon, lim, q, qp[i, j + 1], qp[i, j + 2])  # cell (m, l + 1) along y
            k = upwind(vy[m, l + 1], up_c, lo_n) - dfy[m, l + 1] * (qp[i, j + 1] - q) * idy
            val = alpha * q0[i, j] + beta * (q - dt * ((h - row_flux[l]) * idx + (k - k_lo) * idy))
            out[i, j] = val
            if not (abs(val) < np.inf):
                return np.nan
            if val < low:
                low = val
            row_flux[l] = h
            row_upper[l] = up_e
            k_lo = k
            up_c = up_n
    return low


@numba.njit(cache=True)
def advective_rate_1d(vf, dx):
    """``max_i (max(v_{i+1/2}, 0) + max(-v_{i-1/2}, 0)) / dx``: the largest outflow rate of a cell."""
    rate = 0.0
    for m in range(vf.shape[0] - 1):
        r = (max(vf[m + 1], 0.0) + max(-vf[m], 0.0)) / dx
        if not (r <= rate):
            rate = r
    return rate


@numba.njit(cache=True)
def advective_rate_2d(vx, vy, dx, dy):
    """The largest outflow rate of a cell in 2-D (sum over both axes)."""
    rate = 0.0
    for m in range(vy.shape[0]):
        for l in range(vx.shape[1]):
            r = (max(vx[m + 1, l], 0.0) + max(-vx[m, l], 0.0)) / dx + (max(vy[m, l + 1], 0.0) + max(-vy[m, l], 0.0)) / dy
            if not (r <= rate):
                rate = r
    return rate


# -- NumPy references -------------------------------------------------------------------------------------------------
def _interior_faces(grid: Grid, axis: int) -> tuple[slice, ...]:
    """Faces between padded cells ``g-1 .. g+n-1`` and their right neighbours, interior elsewhere."""
    g = grid.ghost
    sel = [slice(g, g + n) for n in grid.cells]
    sel[axis] = slice(g - 1, g + grid.cells[axis])
    return tuple(sel)


def rhs_reference(qp: np.ndarray, grid: Grid, velocity, diffusion, reconstruction: str = "first_order",
                  limiter: str = "minmod") -> np.ndarray:
    """NumPy reference of ``L(rho) = -div(rho v) + div(nu D grad rho)`` on the interior.

    ``qp``: padded density with filled ghosts (``grid.ghost >= 3``); ``velocity``, ``diffusion``
    (= nu D): tuples of interior-face arrays, one per axis.
    """
    require_choice("reconstruction", reconstruction, RECONSTRUCTIONS)
    rhs = np.zeros(grid.shape)
    for k, dx in enumerate(grid.dx):
        ql, qr = face_states_reference(qp, k, reconstruction, limiter)
        sel = _interior_faces(grid, k)
        hi = list(sel)
        hi[k] = slice(grid.ghost, grid.ghost + grid.cells[k] + 1)
        v = np.asarray(velocity[k])
        flux = np.where(v > 0, v * ql[sel], v * qr[sel]) - np.asarray(diffusion[k]) * (qp[tuple(hi)] - qp[sel]) / dx
        flux = np.moveaxis(flux, k, 0)
        rhs -= np.moveaxis((flux[1:] - flux[:-1]) / dx, 0, k)
    return rhs


def stage_reference(qp, q0, alpha, beta, dt, grid, velocity, diffusion, reconstruction="first_order", limiter="minmod"):
    """NumPy reference of one stage: ``alpha q0 + beta (q + dt L(q))`` on the interior."""
    inner = grid.interior
    return alpha * q0[inner] + beta * (qp[inner] + dt * rhs_reference(qp, grid, velocity, diffusion, reconstruction, limiter))


def advective_rate_reference(grid: Grid, velocity) -> float:
    """NumPy reference of :func:`advective_rate_1d` / ``_2d``."""
    total = np.zeros(grid.shape)
    for k, dx in enumerate(grid.dx):
        v = np.moveaxis(np.asarray(velocity[k]), k, 0)
        total += np.moveaxis((np.maximum(v[1:], 0.0) + np.maximum(-v[:-1], 0.0)) / dx, 0, k)
    return float(total.max())


def diffusive_rate(grid: Grid, diffusion) -> float:
    """``max_i sum_k (d_{k,i-1/2} + d_{k,i+1/2}) / dx_k^2`` for ``d = nu D`` on faces (0 without diffusion)."""
    total = np.zeros(grid.shape)
    for k, dx in enumerate(grid.dx):
        d = np.moveaxis(np.asarray(diffusion[k]), k, 0)
        total += np.moveaxis((d[1:] + d[:-1]) / dx**2, 0, k)
    return float(total.max())


# -- face data --------------------------------------------------------------------------------------------------------
def face_shape(grid: Grid, axis: int) -> tuple[int, ...]:
    """Shape of the interior-face arrays normal to ``axis``."""
    return tuple(n + 1 if j == axis else n for j, n in enumerate(grid.cells))


def face_points(grid: Grid, axis: int) -> tuple[np.ndarray, ...]:
    """Coordinate arrays ('ij') of the faces normal to ``axis``."""
    axes = [grid.faces(j) if j == axis else grid.centers(j) for j in range(grid.ndim)]
    return tuple(np.meshgrid(*axes, indexing="ij"))


def face_values(grid: Grid, func: Callable) -> tuple[np.ndarray, ...]:
    """Component ``k`` of the vector field ``func(*x)`` on the faces normal to axis ``k``, for every ``k``.

    ``func`` takes the coordinate arrays and returns a sequence of ``ndim`` components (in 1-D a
    single array is accepted).  The result is the ``velocity`` argument of :func:`solve_continuity`.
    """
    out = []
    for k in range(grid.ndim):
        value = func(*face_points(grid, k))
        comp = value if grid.ndim == 1 and not isinstance(value, (tuple, list)) else value[k]
        out.append(np.broadcast_to(np.asarray(comp, dtype=np.float64), face_shape(grid, k)).copy())
    return tuple(out)


def stage_times(integrator: str) -> np.ndarray:
    """Times ``c_s`` (in units of ``dt``) of the states each Shu–Osher stage starts from."""
    tab = INTEGRATORS[require_choice("integrator", integrator, INTEGRATORS)]
    c = np.zeros(tab.shape[0])
    for s in range(1, tab.shape[0]):
        c[s] = tab[s - 1, 1] * (c[s - 1] + 1.0)  # the state q_{s-1} = alpha q0 + beta (q_{s-2} + dt L)
    return c


def _parse_boundary(spec, ndim: int) -> tuple[BoundaryConditions, np.ndarray]:
    """Conditions for the ghost fill and the ``(ndim, 2)`` mask of zero-flux walls."""

    def swap(item):
        if isinstance(item, Side):
            item = item.kind if item.kind != "dirichlet" else (item.kind, item.value)
        if isinstance(item, str):
            if item == "reflecting":
                raise SolverInputError(
                    "boundary: 'reflecting' (ghost = -rho) would feed negative density into the scheme; "
                    "use 'wall' for a zero-flux wall"
                )
            return "reflecting" if item == "wall" else item  # a placeholder, replaced below
        if isinstance(item, (list, tuple)):
            return type(item)(swap(e) for e in item)
        return item

    parsed = BoundaryConditions.parse(swap(spec if not isinstance(spec, BoundaryConditions) else spec.sides), ndim)
    walls = np.array([[s.kind == "reflecting" for s in pair] for pair in parsed.sides])
    sides = tuple(tuple(Side("symmetric") if s.kind == "reflecting" else s for s in pair) for pair in parsed.sides)
    return BoundaryConditions(sides), walls


class _FaceData:
    """Preallocated face arrays (velocity and nu D) with the walls and periodic faces applied."""

    def __init__(self, grid: Grid, bc: BoundaryConditions, walls: np.ndarray):
        self.grid = grid
        self.walls = walls
        self.periodic = bc.periodic
        self.v = tuple(np.zeros(face_shape(grid, k)) for k in range(grid.ndim))

    def check(self, name: str, faces) -> tuple:
        grid = self.grid
        if grid.ndim == 1 and isinstance(faces, np.ndarray) and faces.ndim == 1:
            faces = (faces,)
        if not isinstance(faces, (tuple, list)) or len(faces) != grid.ndim:
            raise SolverInputError(
                f"{name}: expected a tuple of {grid.ndim} face arrays (one per axis), found {type(faces).__name__}"
                + (f" of length {len(faces)}" if isinstance(faces, (tuple, list)) else "")
            )
        out = []
        for k, f in enumerate(faces):
            a = np.asarray(f, dtype=np.float64)
            if a.shape != face_shape(grid, k):
                raise SolverInputError(
                    f"{name}[{k}]: expected values on the faces normal to axis {k}, shape {face_shape(grid, k)}, found {a.shape}"
                )
            out.append(a)
        return tuple(out)

    def apply(self, name: str, faces, target: tuple) -> None:
        """Copy ``faces`` into ``target``, zero the walls, unify periodic faces (errors name ``name``)."""
        for k, (src, dst) in enumerate(zip(faces, target)):
            dst[...] = src
            view = np.moveaxis(dst, k, 0)
            if self.periodic[k]:
                scale = float(np.max(np.abs(view))) if view.size else 0.0
                gap = np.abs(view[0] - view[-1])
                if (gap > PERIODIC_FACE_RTOL * scale).any():
                    index = tuple(int(i) for i in np.argwhere(gap > PERIODIC_FACE_RTOL * scale)[0])
                    raise SolverInputError(
                        f"{name}[{k}]: axis {k} is periodic, so its first and last faces are the same face, but the "
                        f"values there differ ({float(view[0][index])!r} and {float(view[-1][index])!r} at {index})"
                    )
                view[-1] = view[0]
            if self.walls[k, 0]:
                view[0] = 0.0
            if self.walls[k, 1]:
                view[-1] = 0.0


def _face_diffusion(grid: Grid, D, nu: float, faces: _FaceData) -> tuple:
    if D is None:
        D = 1.0
    if callable(D):
        spec = face_values(grid, lambda *x: (D(*x),) * grid.ndim)
    elif isinstance(D, (tuple, list, np.ndarray)) and np.ndim(D[0] if isinstance(D, (tuple, list)) else D) > 0:
        spec = faces.check("D", D)
    else:
        try:
            number = float(D)
        except (TypeError, ValueError):
            raise SolverInputError(f"D: expected None, a number, a callable D(*x) or face arrays, found {type(D).__name__}") from None
        spec = tuple(np.full(face_shape(grid, k), number) for k in range(grid.ndim))
    out = tuple(np.zeros(face_shape(grid, k)) for k in range(grid.ndim))
    for k, s in enumerate(spec):
        s = require_finite(f"D[{k}]", s)
        if (s < 0).any():
            index = tuple(int(i) for i in np.argwhere(s < 0)[0])
            raise SolverInputError(f"D[{k}]: expected a diffusivity >= 0 on every face, found {float(s[index])!r} at face {index}")
    faces.apply("D", tuple(nu * s for s in spec), out)
    return out


# -- the solve --------------------------------------------------------------------------------------------------------
def solve_continuity(
    grid: Grid,
    rho0,
    times,
    velocity,
    *,
    nu: float = 0.0,
    D=None,
    boundary="wall",
    reconstruction: str = "first_order",
    limiter: str = "minmod",
    integrator: str = "ssprk2",
    cfl: float | None = None,
    velocity_update: str = "step",
    t0: float = 0.0,
    max_steps: int = 10_000_000,
) -> ContinuitySolution:
    """Solve ``rho_t + div(rho v) = nu div(D grad rho)`` from ``rho0`` (interior cell averages) at ``t0``.

    ``velocity``: face arrays (a tuple with one array per axis, see :func:`face_values`) or a
    callback ``velocity(t, rho) -> faces`` evaluated per ``velocity_update`` ("step" or "stage").
    ``D``: None (1), a number, a callable ``D(*x)`` sampled on the faces, or face arrays.
    ``boundary``: "wall" (zero flux, default) or any :meth:`BoundaryConditions.parse` specification
    except "reflecting".  Returns a :class:`ContinuitySolution` with snapshots at ``times``.
    """
    if not isinstance(grid, Grid):
        raise SolverInputError(f"grid: expected a solvers.grid.uniform.Grid, found {type(grid).__name__}")
    if grid.ndim not in (1, 2):
        raise SolverInputError(f"grid: the continuity solver takes 1-D or 2-D grids, found {grid.ndim} axes")
    if grid.ghost < 2:
        raise SolverInputError(f"grid.ghost: expected at least 2 ghost cells per side (MUSCL stencils), found {grid.ghost}")
    settings = ContinuitySettings(reconstruction=reconstruction, limiter=limiter, integrator=integrator, cfl=cfl,
                                  nu=nu, velocity_update=velocity_update, max_steps=max_steps)
    rho_init = require_finite("rho0", rho0)
    if rho_init.shape != grid.shape:
        raise SolverInputError(f"rho0: expected the grid shape {grid.shape}, found {rho_init.shape}")
    t0 = float(t0)
    times = require_times(t0, times)
    bc, walls = _parse_boundary(boundary, grid.ndim)
    faces = _FaceData(grid, bc, walls)
    diff = _face_diffusion(grid, D, settings.nu, faces)
    diff_rate = diffusive_rate(grid, diff)
    kinds, values = bc.arrays()
    g = grid.ghost

    q = grid.pad(rho_init)
    bufs = [grid.zeros(), grid.zeros()]
    row_flux = np.zeros(grid.cells[-1])
    row_upper = np.zeros(grid.cells[-1])
    interior = grid.interior

    dynamic = callable(velocity)
    per_stage = dynamic and settings.velocity_update == "stage"
    if dynamic:
        def update(t, state, step):
            view = state[interior]
            view.flags.writeable = False
            new = faces.check("velocity(t, rho)", velocity(t, view))
            for k, a in enumerate(new):
                if not math.isfinite(float(np.sum(a))):  # cheap test first; locate only when it fails
                    found = first_nonfinite(a)
                    if found is not None:
                        raise BlowUpError(f"velocity[{k}] (face)", step, t, found[0], found[1])
            faces.apply("velocity(t, rho)", new, faces.v)
    else:
        faces.apply("velocity", tuple(require_finite(f"velocity[{k}]", a) for k, a in
                                      enumerate(faces.check("velocity", velocity))), faces.v)

    def adv_rate():
        if grid.ndim == 1:
            return advective_rate_1d(faces.v[0], grid.dx[0])
        return advective_rate_2d(faces.v[0], faces.v[1], grid.dx[0], grid.dx[1])

    recon = RECONSTRUCTIONS[settings.reconstruction]
    lim = LIMITERS[settings.limiter]
    tab = tableau(settings.integrator)
    c_stage = stage_times(settings.integrator)
    if grid.ndim == 1:
        def stage(prev, out, a, b, dt):
            return stage_1d(prev, q, out, a, b, dt, g, grid.dx[0], faces.v[0], diff[0], recon, lim)
    else:
        def stage(prev, out, a, b, dt):
            return stage_2d(prev, q, out, a, b, dt, g, grid.dx[0], grid.dx[1], faces.v[0], faces.v[1], diff[0], diff[1],
                            recon, lim, row_flux, row_upper)

    clock = Clock(t0, times, settings.cfl, max_steps=int(settings.max_steps))
    snapshots = np.empty((len(times),) + grid.shape)
    for k in range(clock.initial_outputs):
        snapshots[k] = rho_init
    out_index = clock.initial_outputs
    lowest = float(rho_init.min())
    rate = None if dynamic else adv_rate()
    while not clock.done:
        fill_ghosts_compiled(q, g, kinds, values)
        if dynamic:
            update(clock.t, q, clock.step)
            rate = adv_rate()
        dt_stable = combine_bounds(*(1.0 / r if r > 0 else math.inf for r in (rate, diff_rate)))
        dt, lands = clock.next_step(dt_stable)
        prev = q
        for s in range(tab.shape[0]):
            if s > 0:
                fill_ghosts_compiled(prev, g, kinds, values)
                if per_stage:
                    update(clock.t + c_stage[s] * dt, prev, clock.step + 1)
            out = bufs[s % 2]
            low = stage(prev, out, tab[s, 0], tab[s, 1], dt)
            if not math.isfinite(low):
                found = first_nonfinite(out[interior])
                cell, value = found if found is not None else ((), low)
                raise BlowUpError("rho", clock.step + 1, clock.t + dt, cell, value)
            lowest = min(lowest, low)
            prev = out
        last = (tab.shape[0] - 1) % 2
        q, bufs[last] = bufs[last], q
        if clock.advance(dt, lands):
            snapshots[out_index] = q[interior]
            out_index += 1
    mass = snapshots.reshape(len(times), -1).sum(axis=1) * grid.cell_volume
    return ContinuitySolution(grid, times, snapshots, mass, lowest, clock.step, settings)
