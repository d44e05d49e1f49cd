"""The 3-D Hamilton–Jacobi fast kernel against the general kernel, side by side in one run (not a test).

The problem is the block chart of three coupled modes' (shockflow.prediction.coupled): ``u_t + ½ Σ a_k(x_k) p_k² = 0``
from a concave quadratic ridge, ENO2 / Godunov / SSP-RK3, even mirrors at the lower walls and outflow at the upper
ones, on ``--cells`` cells per axis.  Both kernels give bitwise the same answer (checked here, and in
tests/solvers/hamilton_jacobi/test_hj_fast_path.py).  Prints one JSON line: best-of-``--repeats`` seconds of
each whole ``solve_hj`` call (warm: compilation excluded), their ratio, cell updates per second and the load.

    python benchmarks/bench_hj_3d.py [--cells 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from solvers.grid import Grid
from solvers.hamilton_jacobi import solve_hj


def problem(cells: int):
    grid = Grid((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), (cells,) * 3)
    x = grid.mesh()
    u0 = -0.5 * (x[0] ** 2 + 0.5 * x[1] ** 2 + 0.25 * x[2] ** 2)
    a = np.stack([1.0 + 0.1 * x[k] for k in range(3)])
    kw = dict(a=a, nu=0.0, boundary=[("symmetric", "outflow")] * 3)
    return grid, u0, np.linspace(0.0, 0.9, 41), kw


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    grid, u0, times, kw = problem(args.cells)
    small = problem(8)
    for fast in (True, False):                     # warm-up: compile or load the cache
        solve_hj(small[0], small[1], small[2][:3], fast_path=fast, **small[3])
    best = {True: float("inf"), False: float("inf")}
    answers = {}
    for _ in range(args.repeats):                  # interleaved, so both see the same machine
        for fast in (True, False):
            start = time.perf_counter()
            sol = solve_hj(grid, u0, times, fast_path=fast, **kw)
            best[fast] = min(best[fast], time.perf_counter() - start)
            answers[fast] = sol
    f, g = answers[True], answers[False]
    updates = int(np.prod(grid.cells)) * f.steps
    print(json.dumps({
        "name": "hj_3d_eno2_godunov_ssprk3", "cells": list(grid.cells), "steps": f.steps,
        "fast_s": round(best[True], 4), "general_s": round(best[False], 4),
        "fast_over_general": round(best[False] / best[True], 2),
        "fast_updates_per_s": float(f"{updates / best[True]:.4g}"),
        "bitwise_equal": bool(f.steps == g.steps and np.array_equal(f.u, g.u)),
        "load_average": round(os.getloadavg()[0], 2),
    }), flush=True)


if __name__ == "__main__":
    main()
