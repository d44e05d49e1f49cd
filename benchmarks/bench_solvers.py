"""Throughput of the finite-volume conservation-law solver (not a test).

Prints one JSON line per case: cell updates per second of a full ``solve_conservation`` call
(one update = one cell advanced by one whole time step, all Runge–Kutta stages included; the
Python step loop, ghost fills and CFL bookkeeping are inside the timing), best and median of
``--repeats`` runs after a warm-up that excludes JIT compilation / cache loading, and
``updates_per_cpu_s`` (the same per second of process CPU time: less sensitive to other
processes competing for the cores, not to shared caches), and
``kernel_updates_per_s`` / ``kernel_updates_per_cpu_s`` (the compiled step alone, all stages,
ghost cells filled once, best of 7x5 steps), and
``numpy_ratio``, the speed-up of the whole solve over the NumPy reference stage (:func:`stage_reference` plus
the NumPy ghost fill) timed in the same run on ``numpy_cells`` cells.

Run single-threaded:  NUMBA_NUM_THREADS=1 python benchmarks/bench_solvers.py
(solve_conservation runs its prange kernels only with more than one thread).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from solvers.conservation import burgers_fast_path as fp  # noqa: E402
from solvers.conservation import kernels as ck  # noqa: E402
from solvers.grid import BoundaryConditions, fill_ghosts_reference  # noqa: E402
from solvers.conservation import solve_conservation  # noqa: E402
from solvers.conservation import BURGERS  # noqa: E402
from solvers.grid import Grid  # noqa: E402
from solvers.time_stepping import INTEGRATORS  # noqa: E402


def initial(grid: Grid) -> np.ndarray:
    if grid.ndim == 1:
        return grid.sample(lambda x: 0.5 * np.sin(2 * np.pi * x) + 0.2)
    return grid.sample(lambda x, y: 0.5 * np.sin(2 * np.pi * x) * np.cos(2 * np.pi * y) + 0.2)


def time_solver(grid, steps, repeats, **kwargs):
    q0 = initial(grid)
    small = Grid.line(64) if grid.ndim == 1 else Grid((0, 0), (1, 1), (16, 16))
    solve_conservation(small, initial(small), [0.01], **kwargs)  # warm-up: compile or load the cache
    speed = 0.5 + 0.2  # max |q0|
    cfl = kwargs.get("cfl") or (0.9 if kwargs.get("reconstruction", "first_order") == "first_order" else 0.45)
    dt = cfl / (speed * sum(1.0 / d for d in grid.dx))
    t_end = steps * dt * 0.999
    runs, cpu, taken, kernel = [], [], 0, ""
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        sol = solve_conservation(grid, q0, [t_end], **kwargs)
        runs.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        taken, kernel = sol.steps, sol.kernel
    return runs, cpu, taken, kernel


def time_kernel(grid, kernel, repeats=7, **kwargs):
    """Best wall-clock and CPU-time updates per second of the compiled step alone (all stages, no Python loop)."""
    from solvers.grid import fill_ghosts_compiled
    from solvers.conservation import NUMERICAL_FLUXES
    from solvers.conservation import LIMITERS, RECONSTRUCTIONS

    g = grid.ghost
    q = grid.pad(initial(grid))
    kinds, values = BoundaryConditions.parse("periodic", grid.ndim).arrays()
    fill_ghosts_compiled(q, g, kinds, values)
    bufs = [grid.zeros(), grid.zeros()]
    ones, zeros = np.ones(grid.padded_shape), grid.zeros()
    arate = grid.zeros()
    arate[grid.interior] = sum(1.0 / d for d in grid.dx)
    row = [np.zeros(grid.padded_shape[-1]) for _ in range(2)]
    tab = INTEGRATORS[kwargs.get("integrator", "ssprk2")]
    codes = (False, NUMERICAL_FLUXES[kwargs.get("numerical_flux", "godunov")],
             RECONSTRUCTIONS[kwargs.get("reconstruction", "first_order")], LIMITERS[kwargs.get("limiter", "minmod")], 0,
             zeros, arate)
    dt = 0.2 / arate.max()

    scratch = fp.scratch_1d() if grid.ndim == 1 else fp.scratch_2d(grid.cells[1])

    def step():
        if kernel == "fast" and grid.ndim == 1:
            fp.burgers_godunov_euler_1d(q, bufs[0], dt, g, grid.dx[0], 1.0, None, None, None, scratch)
        elif kernel == "fast":
            fp.burgers_godunov_euler_2d(q, bufs[0], dt, g, grid.dx[0], grid.dx[1], 1.0, 1.0, None, None, None, scratch)
        else:
            prev = q
            for s, (alpha, beta) in enumerate(tab):
                out = bufs[s % 2]
                if grid.ndim == 1:
                    ck.stage_1d(prev, q, out, alpha, beta, dt, g, grid.dx[0], ones, zeros, *codes)
                else:
                    ck.stage_2d(prev, q, out, alpha, beta, dt, g, grid.dx[0], grid.dx[1], ones, ones, zeros, zeros,
                                *codes, row[0], row[1])
                prev = out

    step()
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(5):
            step()
        wall.append((time.perf_counter() - start) / 5)
        cpu.append((time.process_time() - start_cpu) / 5)
    cells = int(np.prod(grid.cells))
    return cells / min(wall), cells / min(cpu)


def time_numpy(grid, steps, **kwargs):
    """Updates per second of the NumPy reference (same scheme) on ``grid``."""
    g = grid.ghost
    bc = BoundaryConditions.parse("periodic", grid.ndim)
    q = grid.pad(initial(grid))
    faces = [np.ones(grid.padded_shape)] * grid.ndim
    arate = grid.zeros()
    arate[grid.interior] = sum(1.0 / d for d in grid.dx)
    zeros = grid.zeros()
    tab = INTEGRATORS[kwargs.get("integrator", "ssprk2")]
    dt = 0.2 / arate.max()
    start = time.perf_counter()
    for _ in range(steps):
        prev = q
        for alpha, beta in tab:
            fill_ghosts_reference(prev, g, bc)
            out, _ = ck.stage_reference(prev, q, alpha, beta, dt, g, grid.dx, faces, None,
                                        kwargs.get("numerical_flux", "godunov"),
                                        kwargs.get("reconstruction", "first_order"), kwargs.get("limiter", "minmod"),
                                        BURGERS, 0, zeros, arate)
            prev = grid.pad(out)
        q = prev
    elapsed = time.perf_counter() - start
    return int(np.prod(grid.cells)) * steps / elapsed


CASES = [
    ("godunov_burgers_1d_first_order_euler", Grid.line(1_000_000), 1000, Grid.line(100_000), 5,
     dict(integrator="euler")),
    ("godunov_burgers_2d_first_order_euler", Grid((0, 0), (1, 1), (1024, 1024)), 200, Grid((0, 0), (1, 1), (256, 256)), 5,
     dict(integrator="euler")),
    ("godunov_burgers_1d_muscl_mc_ssprk2", Grid.line(1_000_000), 200, Grid.line(100_000), 3,
     dict(integrator="ssprk2", reconstruction="muscl", limiter="mc")),
    ("godunov_burgers_2d_muscl_mc_ssprk2", Grid((0, 0), (1, 1), (1024, 1024)), 50, Grid((0, 0), (1, 1), (256, 256)), 3,
     dict(integrator="ssprk2", reconstruction="muscl", limiter="mc")),
    ("godunov_burgers_1d_first_order_euler_general_kernel", Grid.line(1_000_000), 1000, Grid.line(100_000), 5,
     dict(integrator="euler", fast_path=False)),
]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="a tenth of the steps")
    args = parser.parse_args(argv)
    for name, grid, steps, np_grid, np_steps, kwargs in CASES:
        steps = max(2, steps // 10) if args.quick else steps
        runs, cpu, taken, kernel = time_solver(grid, steps, args.repeats, **kwargs)
        cells = int(np.prod(grid.cells))
        best = min(runs)
        numpy_rate = time_numpy(np_grid, np_steps, **kwargs)
        kernel_wall, kernel_cpu = time_kernel(grid, kernel, **kwargs)
        record = {
            "name": name,
            "kernel": kernel,
            "cells": cells,
            "steps": taken,
            "stages": int(INTEGRATORS[kwargs.get("integrator", "ssprk2")].shape[0]),
            "seconds": round(best, 4),
            "seconds_median": round(statistics.median(runs), 4),
            "updates_per_s": float(f"{cells * taken / best:.4g}"),
            "updates_per_s_median": float(f"{cells * taken / statistics.median(runs):.4g}"),
            "updates_per_cpu_s": float(f"{cells * taken / min(cpu):.4g}"),
            "kernel_updates_per_s": float(f"{kernel_wall:.4g}"),
            "kernel_updates_per_cpu_s": float(f"{kernel_cpu:.4g}"),
            "numpy_updates_per_s": float(f"{numpy_rate:.4g}"),
            "numpy_cells": int(np.prod(np_grid.cells)),
            "numpy_ratio": round(cells * taken / best / numpy_rate, 1),
            "threads": os.environ.get("NUMBA_NUM_THREADS"),
            "load_average": round(os.getloadavg()[0], 2),
        }
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
