"""shockflow's solvers as benchmark tools: the library call, the multi-core fast path, and the NumPy references."""

from __future__ import annotations

import math

import numpy as np

from solvers.conservation import kernels as ck
from solvers.conservation import burgers_fast_path as fp
from solvers.grid import BoundaryConditions, fill_ghosts_compiled, fill_ghosts_reference
from solvers.conservation import solve_conservation
from solvers.conservation import BURGERS
from solvers.hamilton_jacobi import HJDiscretisation, HJSettings, solve_hj
from solvers.hamilton_jacobi.boundary import fill_hj_ghosts
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
    """``solve_conservation`` / ``solve_hj``, the whole call (set-up, step loop and ghost fills included);
    ``kernel`` is the kernel the last run used ("fast", "general", ...)."""

    name = "shockflow"
    label = "shockflow (Numba, 1 thread)"

    def __init__(self, scheme: str | None = None):
        self.scheme = scheme
        self.kernel = None

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
                self.kernel = sol.kernel
                return sol.u[-1], sol.steps
        else:
            def run():
                # one thread: the side-by-side rows compare single cores (the prange rows use both)
                sol = solve_conservation(grid, q0, [t_end], t0=t0, nu=problem.nu, threads=1, **opts)
                self.kernel = sol.kernel
                return sol.final, sol.steps
        return run


class ShockflowParallel:
    """``solve_conservation`` with ``threads`` chunks (default: Numba's thread count) on the multi-core fast path.

    The caller sets the thread count (``numba.set_num_threads``).  Gives bitwise the answer of :class:`Shockflow`.
    """

    name, label = "shockflow_parallel", "shockflow prange"
    #: below it solve_conservation stays on the serial kernel (the fork/join of every step costs more than it saves)
    min_cells = fp.PARALLEL_THRESHOLD

    def __init__(self, threads: int | None = None):
        self.threads = threads

    def unavailable(self):
        return None

    def supports(self, problem) -> bool:
        return problem.kind in ("burgers", "viscous_burgers")

    def prepare(self, problem, grid, q0, t0, t_end):
        import numba

        threads = self.threads or numba.get_num_threads()
        q0 = np.array(q0)

        def run():
            sol = solve_conservation(grid, q0, [t_end], t0=t0, nu=problem.nu, integrator="euler", threads=threads)
            if threads > 1 and sol.kernel != "fast-parallel":
                raise RuntimeError(f"expected the prange kernels, solve_conservation ran {sol.kernel!r}")
            return sol.final, sol.steps

        return run


class ShockflowBlocked:
    """``solve_conservation(threads=1, time_blocking=K)``: K first-order Euler steps per pass over cache-sized tiles
    (:mod:`solvers.conservation.temporal_blocking`); differs from :class:`Shockflow` by O(dt), see there."""

    def __init__(self, steps: int = 16):
        self.steps = int(steps)
        self.name = "shockflow_blocked"
        self.label = f"shockflow time_blocking={self.steps} (1 thread)"
        self.kernel = None

    def unavailable(self):
        return None

    def supports(self, problem) -> bool:
        return problem.kind in ("burgers", "viscous_burgers")

    def prepare(self, problem, grid, q0, t0, t_end):
        q0 = np.array(q0)

        def run():
            sol = solve_conservation(grid, q0, [t_end], t0=t0, nu=problem.nu, integrator="euler", threads=1,
                                     time_blocking=self.steps)
            self.kernel = sol.kernel
            return sol.final, sol.steps

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

    def scheme_for(self, problem) -> str:
        return self.scheme or DEFAULT_SCHEME[problem.kind]

    def prepare(self, problem, grid, q0, t0, t_end):
        opts = schemes_for(problem.kind)[self.scheme_for(problem)]
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
