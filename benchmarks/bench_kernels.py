"""Burgers fast path, one thread: shockflow one-pass and temporally blocked against the fair C loop and the
one-step bandwidth bound, in one run.

    python benchmarks/bench_kernels.py [--repeats 5] [--steps 64] [--json]

For 1-D 10⁶ and 4·10⁶ cells and 2-D 1024² (first order, forward Euler, periodic, from the benchmark problems'
data past the shock), every tool solves the same interval, interleaved (each repeat runs every tool once, the order
rotated), best of ``--repeats``:

* ``shockflow``: ``solve_conservation(threads=1)``, one step per pass;
* ``shockflow_blocked_K``: the same with ``time_blocking=K`` (K steps per pass over cache-sized tiles);
* ``c_{plain,blocked}_{strict,fair}``: ``benchmarks/c/godunov_burgers.c`` built with ``-O3 -march=native
  -ffp-contract=off`` (strict) and with ``-ffinite-math-only -fno-signed-zeros`` added (fair: the flags with which
  gcc vectorises the flux's max/min).  Each C answer is compared with shockflow's one-pass answer bit for bit
  (``bitwise``) and the number of steps is compared.

A copy of the field (``np.copyto``, 16 bytes per cell: one read, one write) measured in the same run gives the
copy bandwidth; one update of the one-step scheme moves at least those 16 bytes (read q, write out), so the
one-step bound is ``copy GB/s / 16 B`` updates/s.  The ratios are formed from the best times of one run; the load
average is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from benchmarks.c_reference import CBurgers, compile_reference  # noqa: E402
from benchmarks.machine import cpu_model  # noqa: E402
from benchmarks.problems import PROBLEMS  # noqa: E402
from benchmarks.ratios import rotated  # noqa: E402
from benchmarks.throughput import step_estimate  # noqa: E402
from solvers.conservation import solve_conservation  # noqa: E402

CASES = (("burgers_1d", 1_000_000), ("burgers_1d", 4_000_000), ("burgers_2d", 1024))
BLOCKING = (8, 16, 32)
BYTES_PER_UPDATE = 16  # the one-step scheme reads q and writes out: 8 + 8 bytes per cell and step


def copy_bandwidth(cells: int, repeats: int) -> float:
    """Bytes per second of ``np.copyto`` between two fields of ``cells`` doubles (read + write), best of runs."""
    src, dst = np.random.default_rng(0).random(cells), np.empty(cells)
    best = np.inf
    for _ in range(max(3, repeats) * 4):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return 16.0 * cells / best


def runners_for(problem, grid, q0, t0, t_end, libraries):
    runs = {"shockflow": lambda: _shockflow(grid, q0, t0, t_end, None)}
    for k in BLOCKING:
        runs[f"shockflow_blocked_{k}"] = lambda k=k: _shockflow(grid, q0, t0, t_end, k)
    work = np.empty(grid.padded_shape)
    rows = np.empty(3 * (grid.padded_shape[-1] + 1))
    for build, lib in libraries.items():
        for variant in ("plain", "blocked"):
            def c_run(lib=lib, variant=variant):
                q = grid.pad(q0)
                steps = lib.solve(q, grid.ghost, grid.dx, t0, t_end, variant=variant, work=work, rows=rows)
                return q[grid.interior].copy(), steps
            runs[f"c_{variant}_{build}"] = c_run
    return runs


def _shockflow(grid, q0, t0, t_end, blocking):
    sol = solve_conservation(grid, q0, [t_end], t0=t0, integrator="euler", threads=1, time_blocking=blocking)
    return sol.final, sol.steps


def measure(repeats: int, steps: int, log=print) -> dict:
    libraries = {}
    for build in ("strict", "fair"):
        library, message = compile_reference(build)
        if library is None:
            log(f"[skip] C {build}: {message}")
        else:
            libraries[build] = CBurgers(library)
            log(f"[C {build}] {message}")
    results = {"cpu": cpu_model(), "cores": os.cpu_count(), "cases": []}
    for name, n in CASES:
        problem = PROBLEMS[name]
        grid = problem.grid(n)
        cells = int(np.prod(grid.cells))
        q0 = problem.exact(grid, problem.t_start)
        t0 = problem.t_start
        t_end = t0 + steps * step_estimate(problem, grid)
        runs = runners_for(problem, grid, q0, t0, t_end, libraries)
        answers = {k: run() for k, run in runs.items()}  # compile / warm up, and the answers
        reference, ref_steps = answers["shockflow"]
        best = {k: np.inf for k in runs}
        loads = []
        bandwidth = 0.0
        for r in range(repeats):
            bandwidth = max(bandwidth, copy_bandwidth(cells, 1))
            loads.append(os.getloadavg()[0])
            for k in rotated(list(runs), r):
                start = time.perf_counter()
                runs[k]()
                best[k] = min(best[k], time.perf_counter() - start)
        bound = bandwidth / BYTES_PER_UPDATE
        rate = {k: cells * answers[k][1] / best[k] for k in runs}
        fair = [k for k in runs if k.endswith("_fair")]
        fastest_c = max(fair, key=lambda k: rate[k]) if fair else None
        case = {
            "problem": name, "cells": cells, "steps_one_pass": int(ref_steps), "load_1min": [round(v, 2) for v in loads],
            "copy_GB_s": round(bandwidth / 1e9, 2), "one_step_bound_updates_s": float(f"{bound:.3g}"),
            "tools": {k: {"updates_s": float(f"{rate[k]:.4g}"), "best_s": round(best[k], 5), "steps": int(answers[k][1]),
                          "bitwise_vs_shockflow": bool(np.array_equal(answers[k][0], reference)),
                          "max_abs_diff_vs_shockflow": float(f"{np.max(np.abs(answers[k][0] - reference)):.3g}")}
                      for k in runs},
            "shockflow_over_fastest_fair_c": (float(f"{rate['shockflow'] / rate[fastest_c]:.3g}") if fastest_c else None),
            "fastest_fair_c": fastest_c,
            "blocked_over_one_pass": {k: float(f"{rate[k] / rate['shockflow']:.3g}") for k in runs if "blocked_" in k
                                      and k.startswith("shockflow")},
            "over_one_step_bound": {k: float(f"{rate[k] / bound:.3g}") for k in runs},
        }
        results["cases"].append(case)
        log(f"\n{name} {cells:,} cells, {ref_steps} steps; load {loads}; copy {bandwidth / 1e9:.1f} GB/s -> one-step "
            f"bound {bound:.3g} updates/s")
        for k in runs:
            t = case["tools"][k]
            log(f"  {k:22s} {t['updates_s']:.3g} updates/s  x{rate[k] / rate['shockflow']:.3f} of shockflow one-pass  "
                f"{case['over_one_step_bound'][k]:.2f} of the bound  steps {t['steps']}  bitwise {t['bitwise_vs_shockflow']}")
        if fastest_c:
            log(f"  shockflow one-pass / fastest fair C ({fastest_c}): {case['shockflow_over_fastest_fair_c']}")
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=64, help="steps of the one-pass solve per timed run")
    parser.add_argument("--json", action="store_true", help="print the results as JSON at the end")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.steps < 1:
        parser.error("--repeats and --steps: expected whole numbers >= 1")
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    print(f"{started}; {cpu_model()}, {os.cpu_count()} logical cores; load {os.getloadavg()}", flush=True)
    results = measure(args.repeats, args.steps, log=lambda m: print(m, flush=True))
    if args.json:
        print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
