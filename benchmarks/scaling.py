"""Multi-core speed-up of ``solve_conservation``'s fast path (:mod:`solvers.burgers_fast_path`) over threads.

For each size the same solve runs with 1, 2, … threads (``threads=k`` and ``numba.set_num_threads(k)``: the
serial kernel for one thread, the prange kernels with one chunk per thread otherwise), interleaved; the
speed-up is formed pair by pair within each repeat, ``wall(1 thread) / wall(k threads)``.  Needs Numba's thread pool to
hold the largest count: set ``NUMBA_NUM_THREADS`` before Numba is imported (run_all does).
"""

from __future__ import annotations

import numba
import numpy as np

from benchmarks.machine import timed
from benchmarks.problems import PROBLEMS
from benchmarks.ratios import pairwise_ratios, rotated, summarise
from benchmarks.throughput import step_estimate
from benchmarks.tools.shockflow_runs import ShockflowParallel


def measure(problem_name: str, sizes, *, steps: int, repeats: int, threads=None, log=print) -> list[dict]:
    problem = PROBLEMS[problem_name]
    threads = threads or list(range(1, numba.config.NUMBA_NUM_THREADS + 1))
    records = []
    for n in sizes:
        grid = problem.grid(n)
        cells = int(np.prod(grid.cells))
        q0 = problem.exact(grid, problem.t_start)
        t_end = problem.t_start + steps * step_estimate(problem, grid)
        runners = {f"threads_{k}": (k, ShockflowParallel(k).prepare(problem, grid, q0, problem.t_start, t_end))
                   for k in threads}
        answers = {}
        for name, (k, run) in runners.items():
            numba.set_num_threads(k)
            answers[name] = run()
        base = answers["threads_1"][0]
        identical = {name: bool(np.array_equal(u, base)) for name, (u, _) in answers.items()}
        taken = answers["threads_1"][1]
        walls = {name: [] for name in runners}
        cpus = {name: [] for name in runners}
        loads = []
        for r in range(repeats):
            for name in rotated(list(runners), r):
                k, run = runners[name]
                numba.set_num_threads(k)
                _, t = timed(run)
                walls[name].append(t.wall)
                cpus[name].append(t.cpu)
                loads.append(t.load)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        for name in runners:
            speedup = summarise(pairwise_ratios(walls["threads_1"], walls[name]))
            rec = {
                "study": "scaling", "problem": problem_name, "variant": name, "threads": runners[name][0],
                "cells": cells, "n": n, "steps": int(taken), "bitwise_equal_to_serial": identical[name],
                "wall_s": [round(w, 5) for w in walls[name]], "cpu_s": [round(c, 5) for c in cpus[name]],
                "updates_per_s": summarise([cells * taken / w for w in walls[name]]).as_dict(),
                "speedup_over_1_thread": speedup.as_dict(), "load_average": loads,
            }
            records.append(rec)
            log(f"  {problem_name} n={n} {name}: {rec['updates_per_s']['median']:.3g} updates/s, "
                f"x{speedup.median:.2f} over 1 thread [{speedup.low:.2f}, {speedup.high:.2f}], bitwise={identical[name]}")
    return records
