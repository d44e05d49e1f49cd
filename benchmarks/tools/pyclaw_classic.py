"""PyClaw's classic (Lax–Wendroff–LeVeque) solver, first order, with the Burgers Riemann solver, as a tool.

``order = 1`` without limiters is Godunov's method; the Burgers Riemann solver with
``efix = True`` (the entropy fix for transonic rarefactions) makes its fluctuations those of the
exact Godunov flux, the scheme of shockflow's fast path.  Step control: ``cfl_desired = 0.9``,
``cfl_max = 1``, variable steps, first step the one shockflow takes.  PyClaw uses its Fortran
kernels (``kernel_language = "Fortran"``, the ``classic1``/``classic2`` extensions and the Fortran
Riemann solvers ``burgers_1D``/``burgers_2D``) when they were built (clawpack's pip build needs
gfortran), and otherwise its Python kernels (``burgers_1D_py``; 1-D only); :attr:`kernel` says which ran.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

import numpy as np


@contextlib.contextmanager
def _quiet_import():
    """Import clawpack.pyclaw from a scratch directory: its logging set-up creates ``pyclaw.log`` in the cwd."""
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="pyclaw-log-") as tmp:
        os.chdir(tmp)
        try:
            from clawpack import pyclaw  # noqa: F401
        finally:
            os.chdir(cwd)
        yield


def _fortran_available(ndim: int) -> bool:
    try:
        from clawpack import riemann
        from clawpack.pyclaw import classic  # noqa: F401

        if ndim == 1:
            from clawpack.pyclaw.classic import classic1  # noqa: F401
            return hasattr(riemann, "burgers_1D")
        from clawpack.pyclaw.classic import classic2  # noqa: F401
        return hasattr(riemann, "burgers_2D")
    except ImportError:
        return False


class PyClawClassic:
    name = "pyclaw"
    label = "PyClaw classic"

    def __init__(self, kernel_language: str | None = None):
        self.kernel_language = kernel_language  # None: Fortran where built, else Python
        self.kernel = ""

    def unavailable(self):
        try:
            with _quiet_import():
                pass
        except ImportError:
            return "clawpack is not installed (pip install clawpack, which needs gfortran to build): skipped"
        return None

    def supports(self, problem) -> bool:
        if problem.kind != "burgers":
            return False
        return problem.ndim == 1 or self._language(problem.ndim) == "Fortran"

    def _language(self, ndim: int) -> str:
        if self.kernel_language:
            return self.kernel_language
        return "Fortran" if _fortran_available(ndim) else "Python"

    def prepare(self, problem, grid, q0, t0, t_end):
        from clawpack import pyclaw, riemann

        lang = self._language(grid.ndim)
        if grid.ndim == 1:
            rs = riemann.burgers_1D if lang == "Fortran" else riemann.burgers_1D_py
            solver = pyclaw.ClawSolver1D(rs)
        else:
            if lang != "Fortran":
                raise RuntimeError("PyClaw 2-D Burgers needs the Fortran kernels")
            solver = pyclaw.ClawSolver2D(riemann.burgers_2D)
            solver.dimensional_split = True  # Godunov splitting: first order, no transverse waves
            solver.transverse_waves = 0
        solver.kernel_language = lang
        solver.order = 1
        solver.limiters = pyclaw.limiters.tvd.minmod  # unused at order 1
        solver.cfl_desired = 0.9
        solver.cfl_max = 1.0
        solver.dt_variable = True
        for k in range(grid.ndim):
            solver.bc_lower[k] = pyclaw.BC.periodic
            solver.bc_upper[k] = pyclaw.BC.periodic
        dims = [pyclaw.Dimension(grid.lower[k], grid.upper[k], grid.cells[k], name="xyz"[k]) for k in range(grid.ndim)]
        domain = pyclaw.Domain(dims)
        data = np.array(q0, dtype=np.float64)
        rate0 = float(np.max(np.abs(data))) * sum(1.0 / d for d in grid.dx)
        solver.dt_initial = 0.9 / rate0
        self.kernel = lang

        def run():
            state = pyclaw.State(domain, 1)
            state.problem_data["efix"] = True
            if grid.ndim == 2:
                state.problem_data["vx"] = 1.0
                state.problem_data["vy"] = 1.0
            state.q[0, ...] = data
            state.t = t0
            sol = pyclaw.Solution(state, domain)
            solver.dt = solver.dt_initial
            solver.status["numsteps"] = 0
            solver._is_set_up = False
            solver.setup(sol)
            solver.evolve_to_time(sol, t_end)
            return np.array(sol.state.q[0]), int(solver.status["numsteps"])

        return run
