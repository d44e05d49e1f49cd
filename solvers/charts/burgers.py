"""Burgers' equation for ``p = ∂_x u`` on a 1-D chart with a metric, in conservation form (docs/theory.md §1).

Differentiating the chart HJ equation ``u_t + ½ a(x) u_x² = ν (1/w) ∂_x (w a u_x)`` (``a = g^{xx}``
the mobility, ``w`` the volume density, ``w = a^{-1/2} = |g|^{1/2}`` by default) gives, for ``p = u_x``,

    p_t + ∂_x [ ½ a(x) p²  -  ν (1/w) ∂_x (w a p) ] = 0.

Expanded, ``(1/w) ∂_x (w a p) = a p_x + b p`` with ``b = a_x + a (ln w)_x`` (``b = a_x / 2`` for the
default density): a smooth coefficient even where ``w`` is singular, which is why the scheme uses
this form (differencing ``w a p`` itself across a ``sqrt``-singular ``w a`` is inconsistent at the
first face, an O(1) flux error there).  ``∫ p dx = u(b) - u(a)``
is conserved up to the boundary fluxes.  In flat space (``a = w = 1``) this is the viscous
Burgers equation ``p_t + (p²/2)_x = ν p_xx``.

Discretisation (finite volumes on cell averages ``p_i``):

* convective flux at face ``i+½``: the Godunov flux of ``f(p) = ½ a_{i+½} p²`` with the mobility
  sampled at the face, ``F = ½ a_{i+½} max(max(p_L, 0)², min(p_R, 0)²)``, of first-order or
  MUSCL–minmod face states ``p_L, p_R``;
* viscous flux ``-ν (a_{i+½} (p_{i+1} - p_i)/dx + b_{i+½} (p_i + p_{i+1})/2)`` with ``a`` sampled at the
  face and ``b_{i+½} = (a_{i+1} - a_i)/(2dx)`` (default density) or
  ``(a_{i+1} - a_i)/dx + a_{i+½} (ln w_{i+1} - ln w_i)/dx`` (a given ``w``) from cell-centre samples
  (extrapolated linearly where a ghost position lies outside the chart);
* Shu–Osher SSP-RK, step ``cfl / (max_faces a |p| / dx + ν max_faces (2 a / dx² + |b| / dx))``.

**Degenerate metrics.**  Where the mobility vanishes (``a → 0``, ``w → ∞``) on a boundary face the
convective flux ``½ a p²`` and the diffusive part ``a p_x`` vanish there and ``b = a_x/2`` stays
bounded (the gram chart ``a = 4z``: ``b = 2``), so no rate grows.  The drift flux ``-ν b p`` through
such a face is *not* zero (for the gram chart it is ``-2ν p(0)``: ``u(0)`` moves at ``2ν u_z(0)``), so
it uses ``p`` extrapolated linearly from the interior, whatever the ghost fill.  ``a`` must be finite and ``≥ 0``
at faces and centres and ``w`` finite and ``> 0`` at centres (an error names the first point that
is not).

Boundary conditions are ghost fills (:mod:`solvers.grid.boundary`); ``reflecting`` (``p`` odd, i.e.
``u`` even: no flux) is the default and matches ``symmetric`` for the HJ potential.

:func:`chart_burgers_stage` is the fused Numba stage; :func:`chart_burgers_rhs_reference` its
NumPy reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np

from solvers.grid import BoundaryConditions, fill_ghosts, fill_ghosts_compiled
from solvers.errors import (
    BlowUpError,
    SolverInputError,
    first_nonfinite,
    require_cfl,
    require_choice,
    require_finite,
    require_positive,
    require_times,
)
from solvers.grid import Grid
from solvers.time_stepping import Clock, tableau

FIRST_ORDER, MUSCL = 0, 1
RECONSTRUCTIONS = {"first_order": FIRST_ORDER, "muscl": MUSCL}


@dataclass(frozen=True)
class ChartBurgersSettings:
    """Scheme settings, validated in one place."""

    reconstruction: str = "muscl"
    integrator: str = "ssprk2"
    cfl: float = 0.45
    nu: float = 0.0
    boundary: BoundaryConditions | str = "reflecting"
    max_steps: int = 10_000_000

    def __post_init__(self):
        require_choice("reconstruction", self.reconstruction, RECONSTRUCTIONS)
        tableau(self.integrator)
        object.__setattr__(self, "cfl", require_cfl(self.cfl))
        object.__setattr__(self, "nu", require_positive("nu", self.nu, allow_zero=True))
        object.__setattr__(self, "boundary", BoundaryConditions.parse(self.boundary, 1))
        if isinstance(self.max_steps, bool) or not float(self.max_steps).is_integer() or int(self.max_steps) < 1:
            raise SolverInputError(f"max_steps: expected a whole number >= 1, found {self.max_steps!r}")
        object.__setattr__(self, "max_steps", int(self.max_steps))


@numba.njit(cache=True)
def _minmod(a, b):
    if a * b <= 0.0:
        return 0.0
    return a if abs(a) < abs(b) else b


@numba.njit(cache=True)
def _face_flux(qm, q0, q1, q2, recon, a_f, b_f, wm, w0, w1, w2, nu, dx):
    """Total flux through the face between cells ``0`` and ``1`` (neighbours ``m`` and ``2``) and ``a |p|``.

    Scalars only: an array argument to a non-inlined helper costs reference counting per call.
    """
    pl = q0
    pr = q1
    if recon == MUSCL:
        pl += 0.5 * _minmod(q0 - qm, q1 - q0)
        pr -= 0.5 * _minmod(q1 - q0, q2 - q1)
    lo = max(pl, 0.0)
    hi = min(pr, 0.0)
    flux = 0.5 * a_f * max(lo * lo, hi * hi)
    if nu > 0.0:
        flux -= nu * (a_f * (q1 - q0) / dx + b_f * (wm * qm + w0 * q0 + w1 * q1 + w2 * q2))
    return flux, a_f * max(abs(pl), abs(pr))


@numba.njit(cache=True)
def chart_burgers_stage(q_prev, q0, out, rk_alpha, rk_beta, dt, ghost, dx, recon, a_face, b_face, theta_face, nu):
    """Stage ``out = rk_alpha q0 + rk_beta (q_prev - dt/dx (F_{i+½} - F_{i-½}))`` on the interior.

    ``a_face[i]``, ``b_face[i]``, ``theta_face[i]``: the face between padded cells ``i`` and ``i+1``
    (``p`` on the face is ``Σ_j θ_j p_{i-1+j}``, normally ``(p_i + p_{i+1})/2``).  Returns the largest ``a |p| / dx`` over the faces (NaN if ``out`` is not finite).
    """
    n = q_prev.size - 2 * ghost
    finite = True
    i = ghost - 1
    f_lo, rate = _face_flux(q_prev[i - 1], q_prev[i], q_prev[i + 1], q_prev[i + 2], recon, a_face[i], b_face[i],
            theta_face[i, 0], theta_face[i, 1], theta_face[i, 2], theta_face[i, 3], nu, dx)
    for i in range(ghost, ghost + n):
        f_hi, s = _face_flux(q_prev[i - 1], q_prev[i], q_prev[i + 1], q_prev[i + 2], recon, a_face[i], b_face[i],
            theta_face[i, 0], theta_face[i, 1], theta_face[i, 2], theta_face[i, 3], nu, dx)
        if s > rate:
            rate = s
        value = rk_alpha * q0[i] + rk_beta * (q_prev[i] - dt * (f_hi - f_lo) / dx)
        out[i] = value
        if not math.isfinite(value):
            finite = False
        f_lo = f_hi
    return rate / dx if finite else math.nan


def chart_burgers_rhs_reference(q, ghost, dx, recon, a_face, b_face, theta_face, nu):
    """NumPy reference of the stage's ``-(F_{i+½} - F_{i-½})/dx`` and its rate."""
    n = q.size - 2 * ghost
    i = np.arange(ghost - 1, ghost + n)  # faces i+½
    pl, pr = q[i].copy(), q[i + 1].copy()
    if recon == MUSCL:
        def mm(a, b):
            return np.where(a * b <= 0, 0.0, np.where(np.abs(a) < np.abs(b), a, b))

        pl += 0.5 * mm(q[i] - q[i - 1], q[i + 1] - q[i])
        pr -= 0.5 * mm(q[i + 1] - q[i], q[i + 2] - q[i + 1])
    flux = 0.5 * a_face[i] * np.maximum(np.maximum(pl, 0) ** 2, np.minimum(pr, 0) ** 2)
    if nu > 0:
        flux = flux - nu * (a_face[i] * (q[i + 1] - q[i]) / dx + b_face[i] * (theta_face[i, 0] * q[i - 1] + theta_face[i, 1] * q[i] + theta_face[i, 2] * q[i + 1] + theta_face[i, 3] * q[i + 2]))
    rate = float(np.max(a_face[i] * np.maximum(np.abs(pl), np.abs(pr)))) / dx
    return -(flux[1:] - flux[:-1]) / dx, rate


@dataclass(frozen=True)
class ChartBurgersSolution:
    """Snapshots ``p[n]`` (interior cell averages) at ``times[n]``."""

    grid: Grid
    times: np.ndarray
    p: np.ndarray
    steps: int
    settings: ChartBurgersSettings


def _sample(name: str, func: Callable, x: np.ndarray, *, nonnegative: bool) -> np.ndarray:
    with np.errstate(all="ignore"):
        v = np.broadcast_to(np.asarray(func(x), dtype=np.float64), x.shape).copy()
    bad = ~np.isfinite(v) | ((v < 0) if nonnegative else False)
    if np.any(bad):
        i = int(np.argmax(bad))
        raise SolverInputError(f"{name}: expected finite{' non-negative' if nonnegative else ''} values, found {float(v[i])!r} at x = {x[i]:.6g}")
    return v


def solve_chart_burgers(
    grid: Grid,
    p0,
    times,
    *,
    mobility: Callable,
    density: Callable | None = None,
    nu: float = 0.0,
    reconstruction: str = "muscl",
    integrator: str = "ssprk2",
    cfl: float = 0.45,
    boundary="reflecting",
    t0: float = 0.0,
    max_steps: int = 10_000_000,
) -> ChartBurgersSolution:
    """Solve ``p_t + ∂_x(½ a p² - ν (1/w) ∂_x(w a p)) = 0`` on a 1-D chart (see the module docstring).

    ``mobility(x)`` is ``a = g^{xx}``; ``density(x)`` is ``w`` (default ``a^{-1/2}``).  ``p0``: cell
    averages (array of ``grid.shape``) or a function of ``x`` (averaged by Gauss–Legendre quadrature).
    """
    if not isinstance(grid, Grid) or grid.ndim != 1:
        raise SolverInputError(f"grid: expected a 1-D solvers.grid.uniform.Grid, found {grid!r}")
    settings = ChartBurgersSettings(reconstruction, integrator, cfl, nu, boundary, max_steps)
    if grid.ghost < 2:
        raise SolverInputError(f"grid: the chart Burgers solver needs ghost >= 2, found {grid.ghost}")
    if not callable(mobility):
        raise SolverInputError(f"mobility: expected a callable a(x), found {type(mobility).__name__}")
    if callable(p0):
        with np.errstate(all="ignore"):
            p0 = grid.cell_averages(p0)
    p0 = np.asarray(p0, dtype=np.float64)
    if p0.shape != grid.shape:
        raise SolverInputError(f"p0: expected cell averages of shape {grid.shape}, found {p0.shape}")
    p0 = require_finite("p0", p0)
    times = require_times(float(t0), times)
    g, dx = grid.ghost, grid.dx[0]
    # faces between padded cells i and i+1 that the stage reads: ghost-1 .. ghost+n-1
    faces_x = grid.faces(0)
    a_f = _sample("mobility", mobility, faces_x, nonnegative=True)
    centres = grid.centers(0)
    a_c = _sample("mobility", mobility, centres, nonnegative=True)
    # cell-centre samples one cell beyond the interior on each side (ghost positions), for b at the boundary faces
    xc = grid.padded_centers(0)[g - 1 : g + grid.cells[0] + 1]
    with np.errstate(all="ignore"):
        a_ext = np.asarray(mobility(xc), dtype=np.float64) * np.ones_like(xc)
        w_ext = (a_ext ** -0.5) if density is None else np.asarray(density(xc), dtype=np.float64) * np.ones_like(xc)
    inner = slice(1, -1)
    if density is not None:
        _sample("density", density, centres, nonnegative=True)
        if np.any(w_ext[inner] <= 0):
            i = int(np.argmax(w_ext[inner] <= 0))
            raise SolverInputError(f"density: expected values > 0, found {float(w_ext[inner][i])!r} at x = {centres[i]:.6g}")
    # beyond a boundary the chart may end (a < 0, w undefined): extrapolate a and ln w linearly there
    with np.errstate(all="ignore"):
        logw = np.log(w_ext)
    if grid.cells[0] >= 2:
        for end, n1, n2 in ((0, 1, 2), (-1, -2, -3)):
            if not (np.isfinite(a_ext[end]) and a_ext[end] >= 0 and np.isfinite(logw[end])):
                a_ext[end] = 2 * a_ext[n1] - a_ext[n2]
                logw[end] = 2 * logw[n1] - logw[n2]
    da = np.diff(a_ext) / dx
    with np.errstate(all="ignore"):
        dlogw = np.diff(logw) / dx
    # the default density w = a^{-1/2} gives b = a_x/2 exactly (a (ln w)_x = -a_x/2 has a finite limit
    # where a -> 0, which a sampled product a_f (ln w)_x would lose); a user density uses the product
    b_f = 0.5 * da if density is None else da + np.where(a_f > 0, a_f * dlogw, 0.0)
    b_f = require_finite("the drift b = a_x + a (ln w)_x at the faces", b_f)
    npad = grid.padded_shape[0]
    a_face = np.zeros(npad - 1)
    b_face = np.zeros(npad - 1)
    a_face[g - 1 : g + grid.cells[0]] = a_f
    b_face[g - 1 : g + grid.cells[0]] = b_f
    # p on a face is the mean of its cells, except on a degenerate boundary face (a = 0): the drift
    # flux -ν b p there is the limit from inside, so p is extrapolated linearly from the two interior
    # cells (the ghost fill does not enter; the cell average sits dx/2 away from the face)
    theta_face = np.tile(np.array([0.0, 0.5, 0.5, 0.0]), (npad - 1, 1))
    if not settings.boundary.periodic[0] and grid.cells[0] >= 2:
        if a_f[0] == 0.0:
            theta_face[g - 1] = (0.0, 0.0, 1.5, -0.5)
        if a_f[-1] == 0.0:
            theta_face[g + grid.cells[0] - 1] = (-0.5, 1.5, 0.0, 0.0)
    recon = RECONSTRUCTIONS[settings.reconstruction]
    visc_rate = 0.0
    if settings.nu > 0:
        visc_rate = float(settings.nu * np.max(2.0 * a_f / dx**2 + np.abs(b_f) / dx))
    kinds, values = settings.boundary.arrays()
    rk = tableau(settings.integrator)
    q = fill_ghosts(grid.pad(p0), g, settings.boundary)
    buffers = [grid.zeros(), grid.zeros()]
    clock = Clock(float(t0), times, settings.cfl, settings.max_steps)
    snapshots = [p0.copy() for _ in range(clock.initial_outputs)]
    scratch = grid.zeros()
    rate = chart_burgers_stage(q, q, scratch, 0.0, 1.0, 0.0, g, dx, recon, a_face, b_face, theta_face, settings.nu)
    while not clock.done:
        total = rate + visc_rate
        dt, lands = clock.next_step(math.inf if total == 0 else 1.0 / total)
        prev = q
        for s, (alpha, beta) in enumerate(rk):
            out = buffers[s % 2]
            r = chart_burgers_stage(prev, q, out, alpha, beta, dt, g, dx, recon, a_face, b_face, theta_face, settings.nu)
            if not math.isfinite(r):
                found = first_nonfinite(out[grid.interior])
                cell, value = found if found is not None else ((), math.nan)
                raise BlowUpError("p", clock.step + 1, clock.t + dt, cell, value)
            fill_ghosts_compiled(out, g, kinds, values)
            prev = out
        old = q
        q = prev
        buffers = [b for b in (*buffers, old) if b is not q][:2]
        rate = chart_burgers_stage(q, q, scratch, 0.0, 1.0, 0.0, g, dx, recon, a_face, b_face, theta_face, settings.nu)
        if clock.advance(dt, lands):
            snapshots.append(q[grid.interior].copy())
    p = np.array(snapshots)
    p.flags.writeable = False
    times = times.copy()
    times.flags.writeable = False
    return ChartBurgersSolution(grid, times, p, clock.step, settings)
