"""The C reference loop (:mod:`benchmarks.c_reference`) as a benchmark tool."""

from __future__ import annotations

import numpy as np

from benchmarks.c_reference import CBurgers, compile_reference


class CLoop:
    """First-order Godunov Burgers in C, ``variant`` one of ``benchmarks.c_reference.VARIANTS``, ``build`` "strict" or "relaxed"."""

    def __init__(self, variant: str, build: str):
        self.variant, self.build = variant, build
        self.name = f"c_{variant}" + ("" if build == "strict" else f"_{build}")
        flags = {"strict": "", "relaxed": " (-fno-trapping-math -fno-signed-zeros)",
                 "fair": " (-ffinite-math-only -fno-signed-zeros)"}
        self.label = f"C {variant}{flags[build]}"
        self._solver = None
        self._reason = None
        self.message = ""

    def unavailable(self):
        if self._solver is None and self._reason is None:
            library, self.message = compile_reference(self.build)
            if library is None:
                self._reason = self.message
            else:
                self._solver = CBurgers(library)
        return self._reason

    def supports(self, problem) -> bool:
        return problem.kind == "burgers"

    def prepare(self, problem, grid, q0, t0, t_end):
        if self.unavailable():
            raise RuntimeError(self._reason)
        q_start = grid.pad(np.asarray(q0, dtype=np.float64))
        q = np.empty_like(q_start)
        work = np.empty_like(q_start)
        rows = np.empty(3 * (grid.padded_shape[-1] + 1))

        def run():
            q[...] = q_start
            steps = self._solver.solve(q, grid.ghost, grid.dx, t0, t_end, cfl=0.9, variant=self.variant, work=work,
                                       rows=rows)
            return q[grid.interior].copy(), steps

        return run
