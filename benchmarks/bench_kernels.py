"""Burgers fast path, one thread: shockflow one-pass and temporally blocked against the fair C loop and the
one-step bandwidth bound, in one run.

    python benchmarks/bench_kernels.py [--repeats 11] [--steps 64] [--json]

For 1-D 10⁶ and 4·10⁶ cells and 2-D 1024² (first order, forward Euler, periodic, from the benchmark problems'
data past the shock), every tool solves the same interval:

* ``shockflow``: ``solve_conservation(threads=1)``, one step per pass;
* ``shockflow_blocked_K``: the same with ``time_blocking=K`` (K steps per pass over cache-sized tiles);
* ``c_{plain,blocked,fused}_{strict,fair}``: the three step variants of ``benchmarks/c/godunov_burgers.c`` built
  with ``-O3 -march=native -ffp-contract=off`` (strict) and with ``-ffinite-math-only -fno-signed-zeros`` added
  (fair: the flags with which gcc vectorises the flux's max/min).  Each C answer is compared with shockflow's
  one-pass answer bit for bit (``bitwise``) and the number of steps is compared;
* ``copy``: ``np.copyto`` between two fields of the same size, as many times as the one-pass solve takes steps.
  A copy moves 16 bytes per cell (one read, one write) and one update of the one-step scheme moves at least those
  16 bytes (read q, write out), so the copy run's time is the one-step bandwidth bound's time for the solve:
  ``bound = copy bytes/s / 16 B`` updates/s.

**Fair under load.**  The machine is shared: each repeat runs every tool once *and* the copy run, in an order
rotated from repeat to repeat, so that the copy and the kernels meet the same load.  Every ratio (tool against
shockflow one-pass, tool against the bound) is formed within each repeat and summarised by its median (with the
smallest and largest); the ratio of the best times of the run is printed beside it (best of N on both sides
equally).  The 1-minute load average is recorded at every repeat.  Rates are per interval solved: cells times the
one-pass solve's steps over the wall time, so the few extra steps a blocked solve takes (its step is held for
``K`` steps) are not counted as work.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from benchmarks.c_reference import VARIANTS, CBurgers, compile_reference  # noqa: E402
from benchmarks.machine import cpu_model  # noqa: E402
from benchmarks.problems import PROBLEMS  # noqa: E402
from benchmarks.ratios import pairwise_ratios, rotated, summarise  # noqa: E402
from benchmarks.throughput import step_estimate  # noqa: E402
from solvers.conservation import solve_conservation  # noqa: E402

CASES = (("burgers_1d", 1_000_000), ("burgers_1d", 4_000_000), ("burgers_2d", 1024))
BLOCKING = (8, 16, 32, 64)
BYTES_PER_UPDATE = 16  # the one-step scheme reads q and writes out: 8 + 8 bytes per cell and step


def copy_run(cells: int, passes: int):
    """A run of ``passes`` copies of a field of ``cells`` doubles (``np.copyto``, 16 bytes a cell)."""
    src, dst = np.random.default_rng(0).random(cells), np.empty(cells)

    def run():
        for _ in range(passes):
            np.copyto(dst, src)
        return None, passes
    return run


def runners_for(problem, grid, q0, t0, t_end, libraries):
    runs = {"shockflow": lambda: _shockflow(grid, q0, t0, t_end, None)}
    for k in BLOCKING:
        runs[f"shockflow_blocked_{k}"] = lambda k=k: _shockflow(grid, q0, t0, t_end, k)
    work = np.empty(grid.padded_shape)
    rows = np.empty(3 * (grid.padded_shape[-1] + 1))
    for build, lib in libraries.items():
        for variant in VARIANTS:
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
        runs["copy"] = copy_run(cells, int(ref_steps))
        runs["copy"]()
        times = {k: [] for k in runs}
        loads = []
        for r in range(repeats):
            loads.append(round(os.getloadavg()[0], 2))
            for k in rotated(list(runs), r):
                start = time.perf_counter()
                runs[k]()
                times[k].append(time.perf_counter() - start)
        tools = [k for k in runs if k != "copy"]
        updates = {k: cells * ref_steps for k in tools}  # per interval: a blocked solve's extra steps do not count
        copy_bytes = 16.0 * cells * ref_steps
        # per repeat: rates, and the bound from the copy run of the same repeat
        rates = {k: [updates[k] / t for t in times[k]] for k in tools}
        bounds = [copy_bytes / BYTES_PER_UPDATE / t for t in times["copy"]]
        best_rate = {k: updates[k] / min(times[k]) for k in tools}
        best_bound = copy_bytes / BYTES_PER_UPDATE / min(times["copy"])
        over_one_pass = {k: summarise(pairwise_ratios(rates[k], rates["shockflow"])) for k in tools}
        over_bound = {k: summarise(pairwise_ratios(rates[k], bounds)) for k in tools}
        fair = [k for k in tools if k.endswith("_fair")]
        fastest_c = max(fair, key=lambda k: over_one_pass[k].median) if fair else None
        case = {
            "problem": name, "cells": cells, "steps_one_pass": int(ref_steps), "repeats": repeats, "load_1min": loads,
            "copy_GB_s": {"median": round(copy_bytes / statistics.median(times["copy"]) / 1e9, 2),
                          "best": round(copy_bytes / min(times["copy"]) / 1e9, 2)},
            "one_step_bound_updates_s": {"median": float(f"{statistics.median(bounds):.3g}"),
                                         "best": float(f"{best_bound:.3g}")},
            "tools": {k: {"updates_s_median": float(f"{statistics.median(rates[k]):.4g}"),
                          "updates_s_best": float(f"{best_rate[k]:.4g}"), "steps": int(answers[k][1]),
                          "over_one_pass": over_one_pass[k].as_dict(3),
                          "over_one_pass_best": float(f"{best_rate[k] / best_rate['shockflow']:.3g}"),
                          "over_one_step_bound": over_bound[k].as_dict(3),
                          "over_one_step_bound_best": float(f"{best_rate[k] / best_bound:.3g}"),
                          "bitwise_vs_shockflow": bool(np.array_equal(answers[k][0], reference)),
                          "max_abs_diff_vs_shockflow": float(f"{np.max(np.abs(answers[k][0] - reference)):.3g}")}
                      for k in tools},
            "fastest_fair_c": fastest_c,
            "shockflow_over_fastest_fair_c": (
                summarise(pairwise_ratios(rates["shockflow"], rates[fastest_c])).as_dict(3) if fastest_c else None),
            "shockflow_over_fastest_fair_c_best": (
                float(f"{best_rate['shockflow'] / best_rate[fastest_c]:.3g}") if fastest_c else None),
        }
        results["cases"].append(case)
        log(f"\n{name} {cells:,} cells, {ref_steps} steps, {repeats} repeats; load {min(loads)}-{max(loads)}; copy "
            f"{case['copy_GB_s']['median']} GB/s median, {case['copy_GB_s']['best']} best -> one-step bound "
            f"{case['one_step_bound_updates_s']['median']:.3g} updates/s median")
        log(f"  {'tool':22s} {'updates/s':>9s}  {'x one-pass: median [low-high] best':36s}  "
            f"{'x bound: median [low-high] best':34s} steps bitwise")
        for k in tools:
            t = case["tools"][k]
            o, b = t["over_one_pass"], t["over_one_step_bound"]
            log(f"  {k:22s} {t['updates_s_median']:9.3g}  {o['median']:6.3f} [{o['low']:.3f}-{o['high']:.3f}] "
                f"{t['over_one_pass_best']:6.3f}          {b['median']:6.3f} [{b['low']:.3f}-{b['high']:.3f}] "
                f"{t['over_one_step_bound_best']:6.3f}        {t['steps']:4d} {t['bitwise_vs_shockflow']}")
        if fastest_c:
            f = case["shockflow_over_fastest_fair_c"]
            log(f"  shockflow one-pass / fastest fair C ({fastest_c}): median {f['median']} [{f['low']}-{f['high']}], "
                f"best/best {case['shockflow_over_fastest_fair_c_best']}")
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11)
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
