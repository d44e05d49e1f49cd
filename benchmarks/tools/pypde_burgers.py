"""py-pde's viscous Burgers (an expression PDE on a periodic Cartesian grid) as a benchmark tool.

``u_t = -d_dx(u**2/2) + nu laplace(u)`` — py-pde's central finite differences of the conservative
flux at the cell centres, explicit Euler at a fixed step

    dt = 0.9 min( dx² / (2ν),  2ν / max|u|² )

(the diffusive bound and the cell-Reynolds bound of central differences with forward Euler; with
``dx > 2ν / max|u|`` the scheme oscillates, which the accuracy study shows).  py-pde compiles the
right-hand side and the stepping loop with Numba for each grid and step; that is paid once, in
:meth:`PyPDEBurgers.prepare` (``EulerSolver.make_stepper`` and one call), as shockflow's compilation is
paid once per process (its JIT cache): the runner times the compiled stepper alone, so the comparison
pays compilation the same way on both sides.  (``PDE.solve`` builds a new stepper, and compiles, on every call:
4.8-9 s per solve here, which made an earlier "42x at equal error" claim.)  The compile time is kept
in :attr:`PyPDEBurgers.compile_s`.  Only the viscous problem: central differences need ν > 0.
Multithreading is switched off (``backend.numba.multithreading = "never"``) so that per-update
rates compare one core with one core; the multi-core study is shockflow's own.
"""

from __future__ import annotations

import math
import time

import numpy as np


class PyPDEBurgers:
    name = "pypde"
    label = "py-pde (Numba)"

    def scheme_for(self, problem) -> str:
        return "central_fd_euler"

    def __init__(self):
        self.compile_s = None  # seconds py-pde spent compiling in the last prepare()
        self.last_profile = {}  # kept empty: the runner times the compiled stepper alone

    def unavailable(self):
        try:
            import pde  # noqa: F401
        except ImportError:
            return "py-pde is not installed (pip install py-pde): skipped"
        return None

    def supports(self, problem) -> bool:
        return problem.kind == "viscous_burgers" and problem.ndim == 1

    def prepare(self, problem, grid, q0, t0, t_end):
        import logging

        import pde

        logging.getLogger("pde").setLevel(logging.WARNING)  # one INFO line per compiled function otherwise
        try:  # one core, like the shockflow and C loops it is compared with per update
            pde.config["backend.numba.multithreading"] = "never"
        except (KeyError, ValueError):
            pass

        n, dx, nu = grid.cells[0], grid.dx[0], problem.nu
        umax = problem.max_speed()
        dt = 0.9 * min(dx * dx / (2.0 * nu), 2.0 * nu / umax ** 2)
        steps = max(1, math.ceil((t_end - t0) / dt - 1e-9))
        dt = (t_end - t0) / steps
        pgrid = pde.CartesianGrid([[grid.lower[0], grid.upper[0]]], [n], periodic=True)
        eq = pde.PDE({"u": f"-d_dx(u**2) / 2 + {nu!r} * laplace(u)"})
        data = np.array(q0, dtype=np.float64)
        start = time.perf_counter()
        solver = pde.EulerSolver(eq, backend="numba", adaptive=False) if hasattr(pde, "EulerSolver") else \
            pde.ExplicitSolver(eq, scheme="euler", backend="numba", adaptive=False)
        template = pde.ScalarField(pgrid, data.copy())
        stepper = solver.make_stepper(template, dt=dt)
        stepper(template, t0, t0 + dt)  # compiles (once per grid and step, outside the timed runner)
        self.compile_s = time.perf_counter() - start

        def run():
            state = pde.ScalarField(pgrid, data.copy())
            stepper(state, t0, t_end)
            return np.array(state.data), steps

        return run
