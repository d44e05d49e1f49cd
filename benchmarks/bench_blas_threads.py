"""BLAS threads under training: shockflow's choice, one thread and the library default, alone and beside a busy process.

    python benchmarks/bench_blas_threads.py [--case NAME] [--steps 300] [--repeats 3] [--json]

The training loop of a network case (default ``mlp-tanh-teacher``: 20 → 32 → 5 tanh, n = 4096), ``--steps``
steps, timed with the BLAS thread count set by threadpoolctl to 1, to every core (OpenBLAS's default) and
to what :mod:`shockflow.blas_threads` chooses at that moment, interleaved, best of ``--repeats``; first the
machine as it is, then beside one busy process this script starts (killed at the end, also on errors).
Printed: the seconds of each, ``default / chosen`` and ``one thread / chosen`` (above 1: the choice is
faster; the aim is never below 0.9), with the load average.
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

from benchmarks.bench_threads import start_busy_process  # noqa: E402


def _train_seconds(case_name: str, steps: int, threads: int) -> float:
    from threadpoolctl import threadpool_limits

    from shockflow.cases import load_case
    from shockflow.runners.forecast import forecast_stage
    from shockflow.training import loop

    case = load_case(case_name, [f"training.steps={steps}"])
    _, model, data, settings = forecast_stage(case, case.seed or 0)
    train = getattr(loop.train, "__wrapped__", loop.train)     # without shockflow's own one-thread limit
    with threadpool_limits(limits=threads, user_api="blas"):
        start = time.perf_counter()
        train(model.copy(), data, settings, log_path=None, quiet=True)
        return time.perf_counter() - start


def measure(case: str, steps: int, repeats: int, label: str) -> dict:
    from shockflow.blas_threads import blas_thread_limit

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    _train_seconds(case, 5, 1)                                   # imports and data built once
    best = {"one": float("inf"), "default": float("inf"), "chosen": float("inf")}
    chosen = []
    for _ in range(repeats):
        for name in best:
            threads = {"one": 1, "default": cores}.get(name) or blas_thread_limit({}) or cores
            if name == "chosen":
                chosen.append(threads)
            best[name] = min(best[name], _train_seconds(case, steps, threads))
    return {"condition": label, "case": case, "steps": steps, "one_thread_s": best["one"], "default_threads": cores,
            "default_s": best["default"], "chosen_s": best["chosen"], "chosen_threads": chosen,
            "default_over_chosen": best["default"] / best["chosen"], "one_over_chosen": best["one"] / best["chosen"],
            "load": os.getloadavg()[0]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", default="mlp-tanh-teacher")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [measure(args.case, args.steps, args.repeats, "as it is")]
    busy = start_busy_process()
    try:
        rows.append(measure(args.case, args.steps, args.repeats, "beside one busy process"))
    finally:
        busy.kill()
        busy.wait()
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"{'condition':>24}  {'1 thread s':>10}  {'default s':>10}  {'chosen s':>9} {'(threads)':>9}  "
          f"{'default/chosen':>14}  {'1/chosen':>8}  {'load':>5}")
    for r in rows:
        print(f"{r['condition']:>24}  {r['one_thread_s']:10.3f}  {r['default_s']:10.3f}  {r['chosen_s']:9.3f} "
              f"{','.join(map(str, r['chosen_threads'])):>9}  {r['default_over_chosen']:14.2f}  "
              f"{r['one_over_chosen']:8.2f}  {r['load']:5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
