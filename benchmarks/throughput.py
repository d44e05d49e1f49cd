"""Cell updates per second of every tool on every problem and size, interleaved, with ratios to shockflow.

One *update* is one cell advanced by one whole time step (all Runge–Kutta stages; for PyClaw's
2-D dimensional splitting, both sweeps).  Where a tool's step covers a different time (PyClaw's split 2-D step
is limited by each direction alone, about twice shockflow's unsplit step), per update and per solve differ: both
are recorded (``shockflow_speedup`` per update, ``shockflow_speedup_per_solve`` per simulated time).  For each problem and size the data are the exact
solution at ``problem.t_start`` (past the first shock for Burgers), every tool solves to the same
end time chosen so that shockflow takes about ``steps`` steps, and before timing each tool's answer is
compared with shockflow's (``max_abs_diff_vs_shockflow``; bitwise 0 for the C loop and the
prange kernel) and, on grids small enough for the exact solution to be cheap, with the exact
solution (``l1_error``).  Tools too slow for the full run (the NumPy references, PyClaw's Python
kernels) run a proportionally shorter interval; their answers are compared with a shockflow run to
the same time.
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks.machine import timed
from benchmarks.problems import PROBLEMS, l1_error
from benchmarks.ratios import pairwise_ratios, rotated, summarise
from benchmarks.tools import Shockflow

#: Updates one timed run of a slow tool may take (the interval is shortened to fit).
UPDATE_BUDGET = {"numpy_reference": 3e6, "pypde": 1e10, "pyclaw": 1e8}
#: Largest number of cells for which the exact solution at the end time is computed.
EXACT_LIMIT = 300_000
#: Longest interval simulated (time units): small grids take fewer steps rather than run to a flat state.
MAX_SPAN = 0.5


def step_estimate(problem, grid) -> float:
    """shockflow's step size on ``grid`` (default scheme): CFL over the hyperbolic plus parabolic rate."""
    inv = sum(1.0 / d for d in grid.dx)
    if problem.kind == "hj":
        return 0.5 / (problem.max_speed() * inv)
    rate = problem.max_speed() * inv + 2.0 * problem.nu * sum(1.0 / d ** 2 for d in grid.dx)
    return 0.9 / rate


def measure_problem(problem_name: str, sizes, tools: dict, *, steps_target: float, repeats: int, log=print) -> list[dict]:
    """Records (one per tool and size) for one problem; ``tools``: name -> tool (available ones only)."""
    problem = PROBLEMS[problem_name]
    records = []
    for n in sizes:
        grid = problem.grid(n)
        cells = int(np.prod(grid.cells))
        dt = step_estimate(problem, grid)
        steps = int(min(5000, max(10, steps_target / cells), max(10, MAX_SPAN / dt)))
        q0 = problem.exact(grid, problem.t_start)
        t0 = problem.t_start
        span = steps * dt
        reference = Shockflow()
        runners, ends = {}, {}
        for name, tool in tools.items():
            if not tool.supports(problem) or cells < getattr(tool, "min_cells", 0):
                continue
            fraction = min(1.0, UPDATE_BUDGET.get(name, math.inf) / (cells * steps))
            if name == "pyclaw" and getattr(tool, "_language", lambda d: "Fortran")(grid.ndim) == "Python":
                fraction = min(fraction, 2e6 / (cells * steps))
            ends[name] = t0 + max(fraction, 3.0 / steps) * span
            runners[name] = tool.prepare(problem, grid, q0, t0, ends[name])
        if "shockflow" not in runners:
            continue
        checks = {}
        answers = {}
        for name, run in runners.items():  # warm-up (JIT compile / cache load) and the correctness check
            (u, taken), first = timed(run)
            if ends[name] not in answers:  # shockflow's answer at this tool's end time
                answers[ends[name]] = reference.prepare(problem, grid, q0, t0, ends[name])()[0]
            diff = float(np.max(np.abs(u - answers[ends[name]])))
            error = l1_error(grid, u, problem.exact(grid, ends[name])) if cells <= EXACT_LIMIT else None
            checks[name] = dict(first_call_s=round(first.wall, 4), max_abs_diff_vs_shockflow=float(f"{diff:.3g}"),
                                l1_error=None if error is None else float(f"{error:.4g}"), steps=int(taken))
            log(f"  {problem_name} n={n} {name}: {taken} steps, diff vs shockflow {diff:.2e}"
                + ("" if error is None else f", L1 error {error:.3e}"))
        walls = {name: [] for name in runners}
        cpus = {name: [] for name in runners}
        loads = {name: [] for name in runners}
        order = list(runners)
        for r in range(repeats):
            for name in rotated(order, r):
                (_, taken), t = timed(runners[name])
                walls[name].append(t.wall)
                cpus[name].append(t.cpu)
                loads[name].append(t.load)
        sf_rate = [cells * checks["shockflow"]["steps"] / w for w in walls["shockflow"]]
        # per solve: simulated time per wall second (a tool whose step covers more time, e.g. PyClaw's
        # dimensionally split 2-D step, takes fewer steps for the same solve)
        sf_pace = [(ends["shockflow"] - t0) / w for w in walls["shockflow"]]
        for name in runners:
            updates = cells * checks[name]["steps"]
            rate = [updates / w for w in walls[name]]
            cpu_rate = [updates / c for c in cpus[name] if c > 0]
            tool = tools[name]
            record = {
                "study": "throughput", "problem": problem_name, "tool": name, "label": tool.label,
                "scheme": getattr(tool, "scheme_for", lambda p: "first_order_godunov")(problem),
                "kernel": getattr(tool, "kernel", "") or None,
                "cells": cells, "n": n, "t_start": t0, "t_end": ends[name], **checks[name],
                "wall_s": [round(w, 5) for w in walls[name]], "cpu_s": [round(c, 5) for c in cpus[name]],
                "updates_per_s": summarise(rate).as_dict(),
                "updates_per_cpu_s": summarise(cpu_rate).as_dict() if cpu_rate else None,
                "shockflow_speedup": summarise(pairwise_ratios(sf_rate, rate)).as_dict(),
                "shockflow_speedup_per_solve": summarise(pairwise_ratios(
                    sf_pace, [(ends[name] - t0) / w for w in walls[name]])).as_dict(),
                "load_average": loads[name],
            }
            if name == "pypde" and getattr(tool, "last_profile", None):
                record["pypde_profile_s"] = {k: round(float(v), 4) for k, v in tool.last_profile.items()}
                stepping = float(tool.last_profile.get("solver", 0.0))
                if stepping > 0:  # py-pde's own profiler: the time stepping alone, without its per-solve compilation
                    record["updates_per_s_stepping_only"] = float(f"{updates / stepping:.4g}")
            records.append(record)
            log(f"    {name:>20s}: {record['updates_per_s']['median']:.3g} updates/s, shockflow x"
                f"{record['shockflow_speedup']['median']:.3g} [{record['shockflow_speedup']['low']:.3g}, "
                f"{record['shockflow_speedup']['high']:.3g}]  (load {np.mean(loads[name]):.1f})")
    return records
