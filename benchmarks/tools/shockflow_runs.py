"""shockflow's solvers as benchmark tools: the library call, the multi-core fast path, and the NumPy references."""

from __future__ import annotations

import math

import numpy as np

from solvers import conservation_kernels as ck
from solvers import parallel_kernels as pk
from solvers.boundary import BoundaryConditions, fill_ghosts_compiled, fill_ghosts_reference
from solvers.conservation import solve_conservation
from solvers.flux_functions import BURGERS
from solvers.hamilton_jacobi import HJDiscretisation, HJSettings, solve_hj
from solvers.hj_boundary import fill_hj_ghosts
from solvers.time_stepping import INTEGRATORS, Clock, combine_bounds, tableau

#: Conservation-law schemes: label -> keyword arguments of solve_conservation.
CONSERVATION_SCHEMES = {
    "first_order": dict(integrator="euler"),
    "muscl_mc_ssprk2": dict(reconstruction="muscl", limiter="mc", integrator="ssprk2"),
    "weno5_ssprk3": dict(reconstruction="weno5", integrator="ssprk3"),
}
#: Viscous Burgers: the hyperbolic scheme plus the treatment of the viscous term.
VISCOUS_SCHEMES = {
    "first_order_explicit": dict(integrator="euler", viscous="explicit"),
    "muscl_mc_ssprk2_explicit": dict(reconstruction="muscl", limiter="mc", integrator="ssprk2", viscous="explicit"),
    "muscl_mc_ssprk2_implicit": dict(reconstruction="muscl", limiter="mc", integrator="ssprk2", viscous="implicit"),
}
#: Hamilton–Jacobi schemes: label -> keyword arguments of solve_hj.
HJ_SCHEMES = {
    "first_order_euler": dict(derivative="first_order", integrator="euler", cfl=0.9),
    "eno2_ssprk2": dict(derivative="eno2", integrator="ssprk2", cfl=0.5),
    "weno5_ssprk3": dict(derivative="weno5", integrator="ssprk3", cfl=0.5),
}
DEFAULT_SCHEME = {"burgers": "first_order", "viscous_burgers": "first_order_explicit", "hj": "eno2_ssprk2"}


def schemes_for(kind: str) -> dict:
    return {"burgers": CONSERVATION_SCHEMES, "viscous_burgers": VISCOUS_SCHEMES, "hj": HJ_SCHEMES}[kind]


class Shockflow:
    """``solve_conservation`` / ``solve_hj``, whole solve (Python step loop and ghost fills included)."""

    name = "shockflow"
    label = "shockflow (Numba, 1 thread)"

    def __init__(self, scheme: str | None = None):
        self.scheme = scheme

    def unavailable(self):
        return None

    def supports(self, problem) -> bool:
        return True

    def scheme_for(self, problem) -> str:
        return self.scheme or DEFAULT_SCHEME[problem.kind]

    def prepare(self, problem, grid, q0, t0, t_end):
        opts = schemes_for(problem.kind)[self.scheme_for(problem)]
        q0 = np.array(q0)
        if problem.kind == "hj":
            def run():
                sol = solve_hj(grid, q0, [t_end], t0=t0, boundary="periodic", **opts)
                return sol.u[-1], sol.steps
        else:
            def run():
                # one thread: the side-by-side rows compare single cores (the prange rows use both)
                sol = solve_conservation(grid, q0, [t_end], t0=t0, nu=problem.nu, threads=1, **opts)
                return sol.final, sol.steps
        return run


class ShockflowParallel:
    """The fast path with :mod:`solvers.parallel_kernels` (prange over chunks), driven with shockflow's step rule.

    ``chunks`` defaults to the number of Numba threads; the thread count is set by the caller
    (``numba.set_num_threads``).  Gives bitwise the answer of :class:`Shockflow`.
    """

    def __init__(self, chunks: int | None = None):
        self.chunks = chunks
        if chunks == 1:  # one chunk: the cache-blocked kernel on one thread, a candidate serial fast path
            self.name, self.label, self.min_cells = "shockflow_blocked", "shockflow blocked kernel (1 chunk)", 0
        else:
            self.name, self.label = "shockflow_parallel", "shockflow prange"
            self.min_cells = pk.PARALLEL_THRESHOLD  # below it the fork/join of every step costs more than it saves

    def unavailable(self):
        return None

    def supports(self, problem) -> bool:
        return problem.kind == "burgers"

    def prepare(self, problem, grid, q0, t0, t_end):
        import numba

        chunks = self.chunks or numba.get_num_threads()
        run = parallel_fast_path(grid, q0, t0, t_end, chunks)
        if chunks > 1:
            return run

        def single_thread():
            # One chunk on a pool of several threads wakes the idle workers at every step's fork/join:
            # measured 10x slower (1.3e7 against 1.3e8 updates/s at 2e5 cells), so the pool is cut to one.
            before = numba.get_num_threads()
            numba.set_num_threads(1)
            try:
                return run()
            finally:
                numba.set_num_threads(before)

        return single_thread


def parallel_fast_path(grid, q0, t0, t_end, chunks, cfl=0.9):
    """A runner of the Burgers fast path (Euler, Godunov, a = 1, periodic) on the parallel kernels."""
    g = grid.ghost
    kinds, values = BoundaryConditions.parse("periodic", grid.ndim).arrays()
    arate = grid.zeros()
    arate[grid.interior] = 0.0
    for d in grid.dx:
        arate[grid.interior] += 1.0 / d
    scratch = pk.scratch_1d(chunks) if grid.ndim == 1 else pk.scratch_2d(chunks, grid.cells[1])
    q_start = grid.pad(np.asarray(q0, dtype=np.float64))
    out = grid.zeros()

    def run():
        q = q_start.copy()
        buf = out
        fill_ghosts_compiled(q, g, kinds, values)
        rate = ck.hyperbolic_rate(q, arate)
        clock = Clock(t0, [t_end], cfl)
        while not clock.done:
            dt, lands = clock.next_step(combine_bounds(1.0 / rate))
            fill_ghosts_compiled(q, g, kinds, values)
            if grid.ndim == 1:
                rate = pk.burgers_godunov_euler_1d_parallel(q, buf, dt, g, grid.dx[0], 1.0, scratch)
            else:
                rate = pk.burgers_godunov_euler_2d_parallel(q, buf, dt, g, grid.dx[0], grid.dx[1], 1.0, 1.0, scratch)
            if not math.isfinite(rate):
                raise FloatingPointError(f"parallel fast path: non-finite value at step {clock.step + 1}")
            q, buf = buf, q
            clock.advance(dt, lands)
        return q[grid.interior].copy(), clock.step

    return run


class NumPyReference:
    """shockflow's NumPy reference stages (:func:`stage_reference`, :meth:`HJDiscretisation.stage_reference`)
    with NumPy ghost fills, driven with the solver's step rule."""

    name = "numpy_reference"
    label = "shockflow NumPy reference"

    def __init__(self, scheme: str | None = None):
        self.scheme = scheme

    def unavailable(self):
        return None

    def supports(self, problem) -> bool:
        return True

    def prepare(self, problem, grid, q0, t0, t_end):
        opts = schemes_for(problem.kind)[self.scheme or DEFAULT_SCHEME[problem.kind]]
        if problem.kind == "hj":
            return _hj_reference_runner(grid, q0, t0, t_end, opts)
        if opts.get("viscous", "explicit") != "explicit":
            raise ValueError("numpy_reference: only explicit viscosity has a NumPy reference driver here")
        return _conservation_reference_runner(grid, q0, t0, t_end, problem.nu, opts)


def _conservation_reference_runner(grid, q0, t0, t_end, nu, opts):
    g = grid.ghost
    bc = BoundaryConditions.parse("periodic", grid.ndim)
    ones = np.ones(grid.padded_shape)
    faces = [ones] * grid.ndim
    nud = [nu * ones] * grid.ndim if nu > 0 else None
    arate = grid.zeros()
    arate[grid.interior] = sum(1.0 / d for d in grid.dx)
    zeros = grid.zeros()
    tab = INTEGRATORS[opts.get("integrator", "ssprk2")]
    reconstruction = opts.get("reconstruction", "first_order")
    cfl = 0.9 if reconstruction == "first_order" else 0.45
    par_rate = 2.0 * nu * sum(1.0 / d ** 2 for d in grid.dx)

    def run():
        q = grid.pad(np.asarray(q0, dtype=np.float64))
        rate = float(np.max(arate * np.abs(q)))
        clock = Clock(t0, [t_end], cfl)
        while not clock.done:
            bounds = [1.0 / rate] + ([1.0 / par_rate] if par_rate > 0 else [])
            dt, lands = clock.next_step(combine_bounds(*bounds))
            prev = q
            for alpha, beta in tab:
                fill_ghosts_reference(prev, g, bc)
                out, rate = ck.stage_reference(prev, q, alpha, beta, dt, g, grid.dx, faces, nud, "godunov",
                                               reconstruction, opts.get("limiter", "minmod"), BURGERS, 0, zeros, arate)
                prev = grid.pad(out)
            q = prev
            clock.advance(dt, lands)
        return q[grid.interior].copy(), clock.step

    return run


def _hj_reference_runner(grid, q0, t0, t_end, opts):
    settings = HJSettings(grid.ndim, derivative=opts["derivative"], integrator=opts["integrator"], cfl=opts["cfl"],
                          boundary="periodic")
    op = HJDiscretisation.build(grid, settings)
    rk = np.ascontiguousarray(tableau(settings.integrator))

    def run():
        q = fill_hj_ghosts(grid.pad(np.asarray(q0, dtype=np.float64)), grid.ghost, settings.boundary)
        speed = op.max_speed(q)  # the speed bound of the start state (compiled; one pass)
        clock = Clock(t0, [t_end], settings.cfl)
        while not clock.done:
            dt, lands = clock.next_step(op.stable_step(speed))
            prev = q
            for alpha, beta in rk:
                out, _ = op.stage_reference(prev, q, alpha, beta, dt)
                prev = fill_hj_ghosts(grid.pad(out), grid.ghost, settings.boundary)
            q = prev
            speed = op.max_speed(q)
            clock.advance(dt, lands)
        return q[grid.interior].copy(), clock.step

    return run
