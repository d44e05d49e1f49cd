"""Multi-core speed-up of ``solve_conservation``'s fast path (:mod:`solvers.conservation.burgers_fast_path`) over threads.

For each size the same solve runs with 1, 2, … threads (``threads=k`` and ``numba.set_num_threads(k)``: the
serial kernel for one thread, the prange kernels with one chunk per thread otherwise), interleaved; the
speed-up is formed pair by pair within each repeat, ``wall(1 thread) / wall(k threads)``.  Needs Numba's thread pool to
hold the largest count: set ``NUMBA_NUM_THREADS`` before Numba is imported (run_all does).
"""

from __future__ import annotations

import os
import time

import numba
import numpy as np
from numba import prange

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


@numba.njit(parallel=True, cache=True)
def _vector_work(rows, reps):
    """Each row (one per thread) updated in place ``reps`` times: vectorised arithmetic from L1, no memory traffic."""
    for p in prange(rows.shape[0]):
        y = rows[p]
        for _ in range(reps):
            for k in range(y.shape[0]):
                y[k] = y[k] * 0.999 + 0.001


@numba.njit(parallel=True, cache=True)
def _latency_chain(out, reps):
    """One dependent multiply–add chain per thread: bound by latency, leaves the core's units mostly idle."""
    for p in prange(out.shape[0]):
        s = 1.0
        for _ in range(reps):
            s = s * 1.0000001 + 1e-9
        out[p] = s


def core_sharing(repeats: int = 3) -> dict:
    """Do the logical cores share one physical core's execution units?

    Runs twice the work on 2 threads as on 1 (two rows / two chains against one) and reports the speed-ups
    ``2 wall(1 thread) / wall(2 threads)``: about 2 for both on separate cores; on two hyperthreads of one core
    the vectorised work gains little (the units are busy) while the latency-bound chain still doubles.
    """
    if numba.config.NUMBA_NUM_THREADS < 2:
        return {"study": "cores", "skipped": "Numba has a single thread"}
    rows = np.ones((2, 512))
    chains = np.zeros(2)
    kinds = {"vector": lambda k: _vector_work(rows[:k], 100_000), "latency": lambda k: _latency_chain(chains[:k], 50_000_000)}
    result = {"study": "cores"}
    for name, run in kinds.items():
        numba.set_num_threads(2)
        run(1), run(2)  # compile
        ratios = []
        for _ in range(repeats):
            walls = {}
            for k in (1, 2):
                numba.set_num_threads(k)
                start = time.perf_counter()
                run(k)
                walls[k] = time.perf_counter() - start
            ratios.append(2.0 * walls[1] / walls[2])
        result[f"{name}_speedup"] = summarise(ratios).as_dict()
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    result["load_average"] = [round(v, 2) for v in os.getloadavg()]
    return result
