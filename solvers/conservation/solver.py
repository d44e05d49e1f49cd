"""Finite-volume solver for scalar conservation laws with convex flux (docs/theory.md §1, §5).

    q_t + sum_k d_k( a_k(x) f(q) ) = div( nu D(x) grad q ) + s(q, c(x))

on a uniform 1-, 2- or 3-D :class:`~solvers.grid.uniform.Grid`, with ``a_k(x) > 0`` (one field for every
axis, or one per axis) and ``D(x) >= 0`` (isotropic).  Through these coefficients a metric of a
quotient chart enters.  In 2-D with ``a = (1, 1)`` the flux is ``f(q) (1, 1)``.

Method of lines: a monotone numerical flux (Godunov, Engquist–Osher, Rusanov) of reconstructed
face states (first order, or MUSCL with a minmod / MC / van Leer limiter), with the face value of
``a`` the mean of the two neighbouring cells, and an SSP Runge–Kutta method (Euler, SSP-RK2,
SSP-RK3).  Each stage is one fused Numba pass (:mod:`solvers.conservation.kernels`) that also
returns the largest hyperbolic rate of the new state, so the step

    dt = cfl / ( max_i |f'(q_i)| sum_k a_k/dx_k  +  2 sum_k max(nu D)/dx_k^2  +  max|c| )

(the viscous rate only with ``viscous="explicit"``, the last term only for a linear source
``s = c q``) costs no extra pass.  With ``viscous="implicit"`` the step is Strang split,
``D(dt/2) H(dt) D(dt/2)``, with Crank–Nicolson diffusion half-steps (``theta=0.5``; second order
overall with a second-order hyperbolic step) or backward Euler (``theta=1``, first order, no
ringing at very large ``dt nu / dx^2``): the step is then limited by the hyperbolic rate only,
rounded down to one of 8 values per octave so that the sparse LU factorisations of the
diffusion steps are reused (:class:`~solvers.conservation.diffusion.ImplicitDiffusion`); these implicit
half-steps are the only part of the step loop that allocates (the sparse solve).

Defaults: ``cfl`` is 0.9 for first order and 0.45 for MUSCL and WENO5 (MUSCL is TVD for
CFL <= 1/2).  Reconstructions: "first_order", "muscl" (with ``limiter``), "weno5" (WENO-Z;
pair it with ``integrator="ssprk3"``).
Source terms: ``source="linear"`` with ``source_field=c`` gives ``s = c q`` (relaxation at rate
``k`` for ``c = -k``); ``source="field"`` gives ``s = c``; a Numba-compiled ``s(q, c)`` is
accepted too (x-dependence enters through ``c = source_field(x)``).  A user source, like a user
flux, compiles the kernels once per process (not cached).

The case (Burgers, Godunov, first order or MUSCL, any integrator, constant a, no source, and either no viscosity
or a constant one with ``viscous="explicit"``) runs on the specialised kernels of :mod:`solvers.conservation.burgers_fast_path` in 1-D and
2-D (``fast_path=True``, the default; ``kernel`` is "fast"); tests compare them with the general kernel.  From
``PARALLEL_THRESHOLD`` cells and with more than one thread it runs their ``prange`` variants (``kernel``
"fast-parallel"), bitwise the same result; ``threads=None`` takes a second thread only when a core is idle
(:mod:`solvers.conservation.thread_policy`, decided again at every output time).  With ``time_blocking=K``
(first order, Euler, periodic) the fast path advances ``K`` steps per pass over cache-sized tiles at a step held
for the ``K`` steps (:mod:`solvers.conservation.temporal_blocking`; ``kernel`` "fast-blocked" or
"fast-blocked-parallel").  The fast path holds only the padded
state, one padded work field and the snapshots: the coefficient fields (``a``, ``D``, ``source_field``, their face
values and the rate weights) are built only where given or where the general kernel runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from solvers.conservation import kernels as ck
from solvers.conservation import burgers_fast_path as fp
from solvers.conservation import temporal_blocking as tb
from solvers.conservation import thread_policy
from solvers.grid import BoundaryConditions, fill_ghosts_compiled
from solvers.conservation.diffusion import ImplicitDiffusion, face_average, parabolic_rate
from solvers.errors import BlowUpError, SolverInputError, first_nonfinite, require_cfl, require_choice, require_finite
from solvers.errors import require_positive, require_times
from solvers.conservation.flux_functions import ConvexFlux, get_flux
from solvers.grid import Grid
from solvers.conservation.numerical_fluxes import NUMERICAL_FLUXES
from solvers.conservation.reconstruction import LIMITERS, RECONSTRUCTIONS
from solvers.time_stepping import INTEGRATORS, Clock, combine_bounds, step_limit_error

VISCOUS = ("explicit", "implicit")
SOURCE_KINDS = ("linear", "field")


@dataclass(frozen=True)
class ConservationSettings:
    """Scheme settings of a conservation-law solve, validated in one place."""

    flux: str = "burgers"
    numerical_flux: str = "godunov"
    reconstruction: str = "first_order"
    limiter: str = "minmod"
    integrator: str = "ssprk2"
    cfl: float | None = None
    nu: float = 0.0
    viscous: str = "explicit"
    theta: float = 0.5
    source: str = "none"
    max_steps: int = 10_000_000
    fast_path: bool = True

    def __post_init__(self):
        require_choice("numerical_flux", self.numerical_flux, NUMERICAL_FLUXES)
        require_choice("reconstruction", self.reconstruction, RECONSTRUCTIONS)
        require_choice("limiter", self.limiter, LIMITERS)
        require_choice("integrator", self.integrator, INTEGRATORS)
        require_choice("viscous", self.viscous, VISCOUS)
        cfl = (0.9 if self.reconstruction == "first_order" else 0.45) if self.cfl is None else require_cfl(self.cfl)
        object.__setattr__(self, "cfl", cfl)
        object.__setattr__(self, "nu", require_positive("nu", self.nu, allow_zero=True))
        theta = float(self.theta)
        if not 0.5 <= theta <= 1.0:
            raise SolverInputError(f"theta: expected a number in [0.5, 1] (1/2 Crank–Nicolson, 1 backward Euler), found {self.theta!r}")
        if isinstance(self.max_steps, bool) or int(self.max_steps) != self.max_steps or self.max_steps < 1:
            raise SolverInputError(f"max_steps: expected a whole number >= 1, found {self.max_steps!r}")


@dataclass(frozen=True)
class ConservationSolution:
    """Snapshots of the interior at the output times."""

    grid: Grid
    times: np.ndarray
    snapshots: np.ndarray  # shape (len(times), *grid.shape)
    steps: int
    settings: ConservationSettings
    kernel: str  # "fast", "fast-parallel", "fast-blocked", "fast-blocked-parallel" or "general"

    @property
    def final(self) -> np.ndarray:
        return self.snapshots[-1]


# -- coefficient fields ----------------------------------------------------------------------------------------------
def _pad_interior(values: np.ndarray, grid: Grid, bc: BoundaryConditions) -> np.ndarray:
    g = grid.ghost
    out = values
    for k, periodic in enumerate(bc.periodic):
        width = [(0, 0)] * grid.ndim
        width[k] = (g, g)
        out = np.pad(out, width, mode="wrap" if periodic else "edge")
    return np.ascontiguousarray(out)


def cell_field(name: str, spec, grid: Grid, bc: BoundaryConditions, default: float) -> np.ndarray:
    """A padded cell field from None (``default``), a number, a callable of the coordinates or an array.

    Callables are sampled at the interior cell centres; interior values (sampled or given) are
    padded periodically on periodic axes and by the edge value otherwise.  An array of the
    padded shape is taken as it is.
    """
    if spec is None:
        return np.full(grid.padded_shape, float(default))
    if callable(spec):
        values = _pad_interior(grid.sample(spec), grid, bc)
    else:
        arr = np.asarray(spec, dtype=np.float64)
        if arr.ndim == 0:
            values = np.full(grid.padded_shape, float(arr))
        elif arr.shape == grid.shape:
            values = _pad_interior(arr, grid, bc)
        elif arr.shape == grid.padded_shape:
            values = np.ascontiguousarray(arr.copy())
        else:
            raise SolverInputError(
                f"{name}: expected a number, a callable or an array of the grid shape {grid.shape} "
                f"(or padded {grid.padded_shape}), found shape {arr.shape}"
            )
    return require_finite(name, values)


def _check_sign(name: str, values: np.ndarray, grid: Grid, strict: bool) -> None:
    inner = values[grid.interior]
    bad = inner <= 0 if strict else inner < 0
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise SolverInputError(
            f"{name}: expected values {'> 0' if strict else '>= 0'} in every cell, found {inner[index]!r} at cell {index}"
        )
    if (values <= 0).any() if strict else (values < 0).any():  # a padded array given by the user
        raise SolverInputError(f"{name}: expected values {'> 0' if strict else '>= 0'} also in the ghost cells")


def _a_fields(spec, grid: Grid, bc: BoundaryConditions) -> list[np.ndarray]:
    if isinstance(spec, tuple) and grid.ndim > 1:
        if len(spec) != grid.ndim:
            raise SolverInputError(f"a: expected one coefficient per axis ({grid.ndim}), found a tuple of {len(spec)}")
        fields = [cell_field(f"a[{k}]", s, grid, bc, 1.0) for k, s in enumerate(spec)]
        names = [f"a[{k}]" for k in range(grid.ndim)]
    else:
        fields = [cell_field("a", spec, grid, bc, 1.0)] * grid.ndim
        names = ["a"] * grid.ndim
    for name, f in zip(names, fields):
        _check_sign(name, f, grid, strict=True)
    return fields


def _constant_a(spec, ndim: int):
    """Per-axis constants if ``a`` is None, a number or a tuple of numbers; else None."""
    def number(v):
        return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)

    if spec is None:
        return (1.0,) * ndim
    if number(spec):
        return (float(spec),) * ndim
    if isinstance(spec, tuple) and len(spec) == ndim and all(number(v) for v in spec):
        return tuple(float(v) for v in spec)
    return None


def _check_constant_a(spec, const_a: tuple) -> None:
    """The checks :func:`_a_fields` makes, for constant coefficients (no field is built)."""
    names = [f"a[{k}]" for k in range(len(const_a))] if isinstance(spec, tuple) and len(const_a) > 1 else ["a"] * len(const_a)
    for name, v in zip(names, const_a):
        if not math.isfinite(v):
            raise SolverInputError(f"{name}: expected finite values, found {v!r}")
        if not v > 0:
            raise SolverInputError(f"{name}: expected values > 0 in every cell, found {v!r}")


def _require_threads(threads) -> int | None:
    if threads is None:
        return None
    limit = numba.config.NUMBA_NUM_THREADS
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= limit:
        raise SolverInputError(f"threads: expected None or a whole number in [1, {limit}] (numba.config.NUMBA_NUM_THREADS), "
                               f"found {threads!r}")
    return int(threads)


def _require_time_blocking(time_blocking) -> int | None:
    """None (one step per pass) or the steps per pass: ``True`` gives ``temporal_blocking.DEFAULT_STEPS``."""
    if time_blocking is None or time_blocking is False:
        return None
    if time_blocking is True:
        return tb.DEFAULT_STEPS
    if not isinstance(time_blocking, (int, np.integer)) or time_blocking < 1:
        raise SolverInputError(f"time_blocking: expected None, True or a whole number of steps per pass >= 1, "
                               f"found {time_blocking!r}")
    return int(time_blocking)


# -- the solve -------------------------------------------------------------------------------------------------------
def solve_conservation(
    grid: Grid,
    q0,
    times,
    *,
    flux="burgers",
    numerical_flux: str = "godunov",
    reconstruction: str = "first_order",
    limiter: str = "minmod",
    integrator: str = "ssprk2",
    cfl: float | None = None,
    nu: float = 0.0,
    a=None,
    D=None,
    source=None,
    source_field=None,
    boundary="periodic",
    viscous: str = "explicit",
    theta: float = 0.5,
    t0: float = 0.0,
    max_steps: int = 10_000_000,
    fast_path: bool = True,
    threads: int | None = None,
    time_blocking: int | bool | None = None,
    t_final: float | None = None,
) -> ConservationSolution:
    """Solve from ``q0`` (interior cell averages) at ``t0`` and return snapshots at ``times``.

    ``flux``: a built-in name ("burgers") or a :class:`~solvers.conservation.flux_functions.ConvexFlux`.
    ``a``: None (1), a number, a callable ``a(*x)``, an array (interior or padded shape), or in
    2-D and 3-D a tuple with one of those per axis.  ``D``: the same, isotropic (default 1, so ``nu`` alone
    sets a constant viscosity).  ``source``: None, "linear" (s = c q), "field" (s = c) or a Numba
    function ``s(q, c)``, with ``c`` from ``source_field`` (same forms as ``D``, default 0).
    ``boundary``: any specification :meth:`BoundaryConditions.parse` accepts.
    ``threads``: chunks of the multi-core fast path; the fast path runs the ``prange`` kernels of
    :mod:`solvers.conservation.burgers_fast_path` when the grid has at least ``PARALLEL_THRESHOLD`` cells and
    ``threads > 1`` (``kernel="fast-parallel"``), the serial kernel otherwise (bitwise the same result).  None: at
    most ``numba.get_num_threads()``, and a second thread only while a core is idle
    (:func:`solvers.conservation.thread_policy.default_threads`, decided at every output time).
    ``time_blocking``: None, or ``K`` steps per pass over cache-sized tiles (``True``: 16) at a step fixed for the
    ``K`` steps (:mod:`solvers.conservation.temporal_blocking`); needs the first-order fast path, ``integrator=
    "euler"`` and periodic boundaries.  It differs from the one-step solve by O(dt) (the step is not re-chosen
    inside a block); ``K = 1`` is bitwise the one-step solve.
    ``t_final``: the time ``max_steps`` must reach (default: the last of ``times``), for a caller that solves in
    segments with one budget: a solve whose explicit viscous bound (every step at most ``cfl / Σ 2νD/dx²``) needs
    more steps than ``max_steps`` to get there stops before its first step.
    """
    if not isinstance(grid, Grid):
        raise SolverInputError(f"grid: expected a solvers.grid.uniform.Grid, found {type(grid).__name__}")
    if grid.ghost < 3:
        raise SolverInputError(f"grid.ghost: expected at least 3 ghost cells per side (the kernels read five-cell "
                               f"stencils), found {grid.ghost}")
    flux_obj: ConvexFlux = get_flux(flux)
    user_source = None
    if source is None:
        source_name = "none"
    elif isinstance(source, str):
        source_name = require_choice("source", source, SOURCE_KINDS)
    elif isinstance(source, numba.core.registry.CPUDispatcher):
        source_name, user_source = "user", source
    else:
        raise SolverInputError(
            f"source: expected None, 'linear', 'field' or a numba.njit-compiled s(q, c), found {type(source).__name__}"
        )
    settings = ConservationSettings(
        flux=flux_obj.name, numerical_flux=numerical_flux, reconstruction=reconstruction, limiter=limiter,
        integrator=integrator, cfl=cfl, nu=nu, viscous=viscous, theta=theta, source=source_name,
        max_steps=max_steps, fast_path=bool(fast_path),
    )
    q_init = require_finite("q0", q0)
    if q_init.shape != grid.shape:
        raise SolverInputError(f"q0: expected the grid shape {grid.shape}, found {q_init.shape}")
    t0 = float(t0)
    times = require_times(t0, times)
    bc = BoundaryConditions.parse(boundary, grid.ndim)
    threads = _require_threads(threads)
    blocking = _require_time_blocking(time_blocking)
    g = grid.ghost

    # Coefficient fields are padded full-size arrays: built only where given or where the general kernel runs,
    # so that the fast path holds just q, one work field and the snapshots (docs/theory.md §5; docs/benchmarks.md).
    const_a = _constant_a(a, grid.ndim)
    fast = (
        settings.fast_path and grid.ndim <= 2 and flux_obj.builtin and settings.numerical_flux == "godunov"
        and settings.reconstruction in ("first_order", "muscl") and const_a is not None and source_name == "none"
    )
    # a constant viscosity (no D) treated explicitly stays on the fast path, with no coefficient field
    fast = fast and (settings.nu == 0 or (D is None and settings.viscous == "explicit"))
    D_cells = None
    if D is not None or not fast:
        D_cells = cell_field("D", D, grid, bc, 1.0)
        _check_sign("D", D_cells, grid, strict=False)
    s_cells = None
    if source_field is not None or not fast:
        s_cells = cell_field("source_field", source_field, grid, bc, 0.0)
    nud_faces, has_diff = None, settings.nu > 0
    if D_cells is not None:
        nud_faces = [settings.nu * face_average(D_cells, k) for k in range(grid.ndim)]
        has_diff = settings.nu > 0 and any(float(np.max(c)) > 0 for c in nud_faces)
    implicit = has_diff and settings.viscous == "implicit"
    if fast:
        _check_constant_a(a, const_a)
    if blocking is not None:
        needs = {"the fast path (Burgers, Godunov, constant a, no source, explicit or no viscosity, 1-D or 2-D)": fast,
                 "reconstruction='first_order'": settings.reconstruction == "first_order",
                 "integrator='euler'": settings.integrator == "euler", "periodic boundaries": all(bc.periodic)}
        missing = [name for name, ok in needs.items() if not ok]
        if missing:
            raise SolverInputError(f"time_blocking: expected a solve with {', '.join(missing)}, found otherwise")
        if blocking > min(grid.shape):
            raise SolverInputError(f"time_blocking: expected at most {min(grid.shape)} steps per pass (the cells of "
                                   f"the shortest axis), found {blocking}")
    fast_nu = settings.nu if fast and has_diff else None
    kernels = ck.kernels_for(flux_obj, user_source)
    tab = INTEGRATORS[settings.integrator]
    kinds, values = bc.arrays()

    # buffers, allocated once
    q = grid.pad(q_init)
    fill_ghosts_compiled(q, g, kinds, values)
    if fast:
        bufs = [grid.zeros()] * 2 if tab.shape[0] == 1 else [grid.zeros(), grid.zeros()]  # Euler needs one buffer
        # the initial rate max|q| sum_k a_k/dx_k (the fast kernels return the same expression for each new state)
        rate = ck.max_abs(q_init.reshape(-1) if q_init.flags.c_contiguous else q_init.ravel())
        rate = rate * (const_a[0] / grid.dx[0]) if grid.ndim == 1 else rate * (const_a[0] / grid.dx[0] + const_a[1] / grid.dx[1])
        cells = math.prod(grid.shape)
        pool = numba.get_num_threads()
        if threads is not None:
            chunks = threads if cells >= fp.PARALLEL_THRESHOLD else 1  # one chunk on a pool of threads: 10x slower
            decide = lambda: chunks  # noqa: E731
        else:
            chunks = min(pool, thread_policy.usable_cores()) if cells >= fp.PARALLEL_THRESHOLD else 1
            decide = lambda: min(chunks, thread_policy.default_threads(cells, pool))  # noqa: E731
        if blocking is not None:
            scratch = (tb.blocked_scratch_1d(grid.shape[0], blocking, chunks) if grid.ndim == 1
                       else tb.blocked_scratch_2d(grid.shape, blocking, chunks))
        else:
            scratch = fp.scratch_1d(chunks) if grid.ndim == 1 else fp.scratch_2d(grid.shape[1], chunks)
        # parabolic_rate with nu D = nu on every face
        par_rate = sum(2.0 * settings.nu / dx**2 for dx in grid.dx) if has_diff else 0.0
    else:
        kernel_name = "general"
        row_flux = np.zeros(grid.padded_shape[-1]) if grid.ndim > 1 else None  # in 1-D it would be a full field
        a_cells = _a_fields(a, grid, bc)
        a_faces = [face_average(a_cells[k], k) for k in range(grid.ndim)]
        del a_cells
        arate = np.zeros(grid.padded_shape)  # sum_k max(a on the two faces)/dx_k in the interior, 0 in the ghosts
        for k in range(grid.ndim):
            af = np.moveaxis(a_faces[k], k, 0)
            view = np.moveaxis(arate, k, 0)
            view[1:] += np.maximum(af[:-1], af[1:]) / grid.dx[k]
        inner_rate = arate[grid.interior].copy()
        arate[:] = 0.0
        arate[grid.interior] = inner_rate
        del inner_rate
        par_rate = parabolic_rate(grid, nud_faces) if has_diff and not implicit else 0.0
        src_rate = float(np.max(np.abs(s_cells[grid.interior]))) if source_name == "linear" else 0.0
        diffusion = ImplicitDiffusion(grid, nud_faces, bc, settings.theta) if implicit else None
        bufs = [grid.zeros(), grid.zeros()]
        row_upper = np.zeros(grid.padded_shape[-1]) if grid.ndim > 1 else None
        plane_flux = np.zeros(grid.padded_shape[-2:]) if grid.ndim == 3 else None
        plane_upper = np.zeros(grid.padded_shape[-2:]) if grid.ndim == 3 else None
        rate = kernels.hyperbolic_rate(q, arate)
        stage_args = (g,) + tuple(grid.dx)
        nf = NUMERICAL_FLUXES[settings.numerical_flux]
        rc = RECONSTRUCTIONS[settings.reconstruction]
        lc = LIMITERS[settings.limiter]
        sc = ck.SOURCES[source_name]
        scheme = (has_diff and not implicit, nf, rc, lc, sc, s_cells, arate)
        if grid.ndim == 1:
            coeffs = (a_faces[0], nud_faces[0]) + scheme
        elif grid.ndim == 2:
            coeffs = (a_faces[0], a_faces[1], nud_faces[0], nud_faces[1]) + scheme + (row_flux, row_upper)
        else:
            coeffs = tuple(a_faces) + tuple(nud_faces) + scheme + (plane_flux, plane_upper, row_flux, row_upper)
        stage = (kernels.stage_1d, kernels.stage_2d, kernels.stage_3d)[grid.ndim - 1]

    span = (float(times[-1]) if t_final is None else max(float(t_final), float(times[-1]))) - float(t0)
    if par_rate > 0 and span * par_rate / settings.cfl > settings.max_steps:
        # every step is at most cfl / par_rate long (the explicit viscous bound), so this solve cannot reach its end
        # within max_steps: said before the first step, not after max_steps of them
        raise SolverInputError(
            f"max_steps: the explicit viscous term alone needs at least {span * par_rate / settings.cfl:.3g} steps to "
            f"reach t = {float(t0) + span!r} (each step at most cfl / Σ 2ν/dx² = {settings.cfl / par_rate:.3g}, "
            f"ν = {settings.nu:g}), more than max_steps = {settings.max_steps}; lower nu, coarsen the grid, raise "
            f"max_steps or take the viscous term implicitly")
    clock = Clock(t0, times, settings.cfl, max_steps=int(settings.max_steps))
    snapshots = np.empty((len(times),) + grid.shape)
    for k in range(clock.initial_outputs):
        snapshots[k] = q_init
    out_index = clock.initial_outputs

    pool = numba.get_num_threads()
    try:
        if fast:
            limiter = LIMITERS[settings.limiter] if settings.reconstruction == "muscl" else None
            steps, ran_parallel = _run_fast(q, bufs, tab, grid, clock, snapshots, rate, par_rate, kinds, values,
                                            const_a, fast_nu, limiter, scratch, decide, blocking)
            kernel_name = ("fast-blocked" if blocking is not None else "fast") + ("-parallel" if ran_parallel else "")
        else:
            while not clock.done:
                dt_stable = combine_bounds(*(1.0 / r if r > 0 else math.inf for r in (rate, par_rate, src_rate)))
                if implicit and math.isfinite(dt_stable):  # few distinct steps: the implicit factorisations are reused
                    dt_stable = 2.0 ** (math.floor(8.0 * math.log2(dt_stable)) / 8.0)
                dt, lands = clock.next_step(dt_stable)
                if implicit:
                    q[grid.interior] = diffusion.step(q[grid.interior], 0.5 * dt)
                prev = q
                for s in range(tab.shape[0]):
                    fill_ghosts_compiled(prev, g, kinds, values)
                    out = bufs[s % 2]
                    rate = stage(prev, q, out, tab[s, 0], tab[s, 1], dt, *stage_args, *coeffs)
                    _check_rate(rate, out, grid, clock, dt)
                    prev = out
                last = (tab.shape[0] - 1) % 2
                q, bufs[last] = bufs[last], q
                if implicit:
                    q[grid.interior] = diffusion.step(q[grid.interior], 0.5 * dt)
                    rate = kernels.hyperbolic_rate(q, arate)  # of the state after the last diffusion half-step
                if clock.advance(dt, lands):
                    snapshots[out_index] = q[grid.interior]
                    out_index += 1
            steps = clock.step
    finally:
        numba.set_num_threads(pool)
    return ConservationSolution(grid, times, snapshots, steps, settings, kernel_name)


def _run_fast(q, bufs, tab, grid: Grid, clock: Clock, snapshots, rate, par_rate, kinds, values, const_a, nu, limiter,
              scratch, decide, blocking) -> tuple[int, bool]:
    """The fast path's step loop, compiled from one output time to the next (``burgers_fast_path.advance``,
    which applies the clock's rule, or ``temporal_blocking.advance_blocked`` with ``blocking`` steps per pass);
    ``decide()`` gives the threads of each interval.  Returns the number of steps and whether threads ran."""
    g = grid.ghost
    work, spare = bufs
    t, step = clock.t, 0
    ran_parallel = False
    if grid.ndim == 1:
        geometry = (float(grid.dx[0]), float(const_a[0]))
    else:
        geometry = (float(grid.dx[0]), float(grid.dx[1]), float(const_a[0]), float(const_a[1]))
    for index in range(clock.initial_outputs, len(clock.times)):
        threads = min(decide(), scratch[0].shape[0])
        parallel = threads > 1
        chunk_scratch = type(scratch)(*(a[:threads] if k < len(scratch) - (blocking is not None) else a
                                        for k, a in enumerate(scratch)))  # the pieces of this interval's threads
        if parallel:
            ran_parallel = True
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        if blocking is None:
            q, work, spare, t, dt, rate, step, stage, status = fp.advance(
                q, work, spare, tab, t, float(clock.times[index]), clock.cfl, rate, par_rate, step, clock.max_steps, g,
                kinds, values, geometry, nu, limiter, chunk_scratch, True if parallel else None)
        else:
            q, work, t, dt, rate, step, status = tb.advance_blocked(
                q, work, t, float(clock.times[index]), clock.cfl, rate, par_rate, step, clock.max_steps, blocking, g,
                geometry, nu, chunk_scratch, True if parallel else None)
            spare, stage = work, 0
        if status == fp.BLEW_UP:
            found = first_nonfinite((work if stage % 2 == 0 else spare)[grid.interior])
            cell, value = found if found is not None else ((), math.nan)
            raise BlowUpError("q", step + 1, t + dt, cell, value)
        if status == fp.STEP_LIMIT:
            raise step_limit_error(clock.max_steps, clock.times[-1], t)
        snapshots[index] = q[grid.interior]
    return step, ran_parallel


def _check_rate(rate: float, out: np.ndarray, grid: Grid, clock: Clock, dt: float) -> None:
    if math.isfinite(rate):
        return
    found = first_nonfinite(out[grid.interior])
    cell, value = found if found is not None else ((), rate)
    raise BlowUpError("q", clock.step + 1, clock.t + dt, cell, value)
