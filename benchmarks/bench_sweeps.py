"""The same 40-task sweep serially and on a 2-worker Dask LocalCluster: speed-up and engine overhead.

The sweep is the built-in case ``burgers-sine`` over ``initial.amplitude=linspace:0.5:2.0:N``
(``--tasks``) at ``domain.cells=--cells``, through the full engine path (validation, one result
file per task, hash stamping, index).  Reported:

  serial      wall time of ``run_sweep(..., scheduler="serial")`` in this process (after one
              warm-up task, so Numba's cache is loaded)
  cluster     wall time of ``run_sweep(..., client=...)`` on a LocalCluster of ``--workers``
              processes, after a warm-up sweep of two tasks per worker; the cluster's start-up
              and the warm-up are reported separately
  speedup     serial / cluster
  task_s      the sum over tasks of the wall time inside the task (case run + file writing)
  task_cpu_s  the same in CPU time of the process running it: when task_s is much larger than
              task_cpu_s the processes were waiting for a core (a loaded machine)
  overhead    per task: (wall x workers - task time) / tasks.  For the cluster it includes the
              scheduling round trips and idle workers at the tail of the sweep
  noop        per-task wall time of a sweep of ``--tasks`` no-op function tasks (pure engine cost:
              serialisation, scheduling, the task file, the index)

With ``--repeats R`` the serial and cluster sweeps alternate R times (fresh directories) and
the medians are printed.  On a loaded machine the timings are indicative only.

    python benchmarks/bench_sweeps.py [--tasks 40] [--cells 800] [--workers 2] [--repeats 1] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import cloudpickle

from shockflow.sweeps import case_sweep, function_sweep, local_cluster, run_sweep

cloudpickle.register_pickle_by_value(sys.modules[__name__])


def noop(params: dict) -> dict:
    return {"x": params["x"]}


def _sweep(tasks: int, cells: int, low: float = 0.5, high: float = 2.0):
    return case_sweep("burgers-sine", [f"initial.amplitude=linspace:{low}:{high}:{tasks}", f"domain.cells={cells}",
                                       "output.snapshots=41"])


def _timed(sweep, out, **kw):
    start = time.perf_counter()
    summary = run_sweep(sweep, out, progress=False, **kw)
    wall = time.perf_counter() - start
    if not summary.ok:
        raise RuntimeError(summary.table())
    task = sum(r.seconds for r in summary.reports)
    cpu = sum(r.cpu_seconds for r in summary.reports)
    return wall, task, cpu


def _median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--cells", type=int, default=800)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=1, help="interleaved serial/cluster repeats; medians reported")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    from distributed import Client

    runs = {"serial": [], "cluster": []}
    with tempfile.TemporaryDirectory(prefix="bench-sweeps-") as tmp:
        tmp = Path(tmp)
        sweep = _sweep(args.tasks, args.cells)
        noop_sweep = function_sweep(noop, {"x": list(range(args.tasks))}, name="noop")
        _timed(_sweep(2, args.cells, 3.0, 4.0), tmp / "warm-serial", scheduler="serial")
        start = time.perf_counter()
        with local_cluster(args.workers) as cluster, Client(cluster) as client:
            client.wait_for_workers(args.workers)
            startup = time.perf_counter() - start
            t0 = time.perf_counter()
            _timed(_sweep(2 * args.workers, args.cells, 3.0, 4.0), tmp / "warm-cluster", client=client)
            warm = time.perf_counter() - t0
            for k in range(args.repeats):  # interleaved, so a change of the machine's load hits both
                for name, where in (("serial", {"scheduler": "serial"}), ("cluster", {"client": client})):
                    wall, task, cpu = _timed(sweep, tmp / f"{name}-{k}", **where)
                    wall_noop, _, _ = _timed(noop_sweep, tmp / f"noop-{name}-{k}", **where)
                    n_proc = 1 if name == "serial" else args.workers
                    runs[name].append({"wall_s": wall, "task_s": task, "task_cpu_s": cpu,
                                       "overhead_ms": 1e3 * (wall * n_proc - task) / args.tasks,
                                       "noop_ms": 1e3 * wall_noop / args.tasks})
    rows = {name: {key: _median([r[key] for r in rs]) for key in rs[0]} for name, rs in runs.items()}
    rows["cluster"].update({"startup_s": startup, "warmup_s": warm})
    result = {"tasks": args.tasks, "cells": args.cells, "workers": args.workers, "repeats": args.repeats, **rows,
              "speedup": rows["serial"]["wall_s"] / rows["cluster"]["wall_s"]}
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.tasks} tasks of burgers-sine at {args.cells} cells; LocalCluster of {args.workers} workers; "
          f"median of {args.repeats} interleaved repeat(s)")
    print(f"{'':8s} {'wall s':>8s} {'task s':>8s} {'task CPU s':>11s} {'overhead ms/task':>17s} {'no-op ms/task':>14s}")
    for name in ("serial", "cluster"):
        r = rows[name]
        print(f"{name:8s} {r['wall_s']:8.2f} {r['task_s']:8.2f} {r['task_cpu_s']:11.2f} {r['overhead_ms']:17.1f} "
              f"{r['noop_ms']:14.1f}")
    c = rows["cluster"]
    print(f"speed-up {result['speedup']:.2f}x (cluster start-up {c['startup_s']:.1f} s and warm-up "
          f"{c['warmup_s']:.1f} s not included)")


if __name__ == "__main__":
    main()
