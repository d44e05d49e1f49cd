"""Threads that never lose: the fast path's thread counts beside a busy process, ratios to serial side by side.

    python benchmarks/bench_threads.py [--repeats 5] [--steps 100] [--json]

For 1-D 10⁶ and 4·10⁶ cells and 2-D 1024² (first order, Euler, periodic, 4 output times), interleaved and best of
``--repeats``, in two conditions of one run: the machine as it is, then beside one busy process that this script
starts (a Python busy loop in a subprocess; killed at the end, also on errors).  Variants:

* ``serial``: ``threads=1``; ``serial_again``: the same once more, whose ratio to ``serial`` is the noise floor of
  the run (on a loaded machine identical code differs by tens of per cent);
* ``threads_2``: two threads forced (one barrier per step);
* ``default``: ``threads=None``, the policy of :mod:`solvers.conservation.thread_policy`;
* ``blocked_serial``, ``blocked_threads_2``, ``blocked_default``: the same with ``time_blocking=16`` (one barrier
  per 16 steps).

Printed: ``serial / variant`` wall-time ratios (above 1: faster than serial; the target for ``default`` under a
busy competitor is at least 0.9), the kernel ``threads=None`` chose, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("NUMBA_NUM_THREADS", str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                             else os.cpu_count()))

import numpy as np  # noqa: E402

from benchmarks.machine import cpu_model  # noqa: E402
from benchmarks.problems import PROBLEMS  # noqa: E402
from benchmarks.ratios import rotated  # noqa: E402
from benchmarks.throughput import step_estimate  # noqa: E402
from solvers.conservation import solve_conservation  # noqa: E402

CASES = (("burgers_1d", 1_000_000), ("burgers_1d", 4_000_000), ("burgers_2d", 1024))
VARIANTS = {"serial": (1, None), "serial_again": (1, None), "threads_2": (2, None), "default": (None, None),
            "blocked_serial": (1, 16), "blocked_threads_2": (2, 16), "blocked_default": (None, 16)}


def start_busy_process() -> subprocess.Popen:
    """One competing busy process (a Python busy loop), running before this returns."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.5)
    return proc


def measure_condition(repeats: int, steps: int, label: str, log=print) -> list[dict]:
    import numba

    records = []
    for name, n in CASES:
        problem = PROBLEMS[name]
        grid = problem.grid(n)
        cells = int(np.prod(grid.cells))
        q0 = problem.exact(grid, problem.t_start)
        t0 = problem.t_start
        span = steps * step_estimate(problem, grid)
        times = [t0 + span * (i + 1) / 4 for i in range(4)]
        kernels = {}

        def run(variant, threads=None, blocking=None):
            sol = solve_conservation(grid, q0, times, t0=t0, integrator="euler", threads=threads, time_blocking=blocking)
            kernels[variant] = sol.kernel
            return sol

        for v, (threads, blocking) in VARIANTS.items():  # compile / warm up
            run(v, threads, blocking)
        best = {v: np.inf for v in VARIANTS}
        loads = []
        for r in range(repeats):
            loads.append(round(os.getloadavg()[0], 2))
            for v in rotated(list(VARIANTS), r):
                threads, blocking = VARIANTS[v]
                start = time.perf_counter()
                run(v, threads, blocking)
                best[v] = min(best[v], time.perf_counter() - start)
        rec = {"condition": label, "problem": name, "cells": cells, "steps": steps, "load_1min": loads,
               "numba_threads": numba.config.NUMBA_NUM_THREADS,
               "best_s": {v: round(b, 5) for v, b in best.items()},
               "serial_over": {v: float(f"{best['serial'] / b:.3g}") for v, b in best.items()},
               "blocked_serial_over": {v: float(f"{best['blocked_serial'] / b:.3g}") for v, b in best.items()
                                       if v.startswith("blocked")},
               "kernel": dict(kernels)}
        records.append(rec)
        log(f"[{label}] {name} {cells:,} cells, load {loads}: serial/variant "
            + ", ".join(f"{v} {x:.2f}" for v, x in rec["serial_over"].items())
            + f"; threads=None ran {kernels['default']!r} and {kernels['blocked_default']!r}")
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; {cpu_model()}, {os.cpu_count()} logical cores; "
          f"load {os.getloadavg()}", flush=True)
    log = lambda m: print(m, flush=True)  # noqa: E731
    records = measure_condition(args.repeats, args.steps, "as is", log)
    busy = start_busy_process()
    try:
        records += measure_condition(args.repeats, args.steps, "beside one busy process", log)
    finally:
        busy.kill()
        busy.wait()
    if args.json:
        print(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
