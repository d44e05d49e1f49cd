"""Task functions for the sweep tests (pickled by value to the workers, see the tests).

``counted`` appends its ``x`` to a log file before working, so a test can count how many times
each task ran; ``fails_at`` raises for one value.
"""

from __future__ import annotations

import json
import os
import time


def counted(params: dict) -> dict:
    with open(params["log"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(params["x"]) + "\n")
    time.sleep(float(params.get("sleep", 0.0)))
    import numba

    return {"x2": params["x"] ** 2, "pid": os.getpid(), "numba_threads": int(numba.config.NUMBA_NUM_THREADS),
            "env_numba": os.environ.get("NUMBA_NUM_THREADS", ""), "omp": os.environ.get("OMP_NUM_THREADS", ""),
            "seed_seen": params["seed"]}


def fails_at(params: dict) -> dict:
    if params["x"] == params["bad"]:
        raise ValueError(f"task x = {params['x']} fails on purpose")
    return {"x2": params["x"] ** 2}


def counting_sweep(log: str, n: int, sleep: float):
    from shockflow.sweeps import function_sweep

    return function_sweep(counted, {"x": list(range(n))}, fixed={"log": log, "sleep": sleep}, seed=11,
                          name="counting")


def log_counts(log) -> dict:
    counts: dict = {}
    if os.path.exists(log):
        with open(log, encoding="utf-8") as fh:
            for line in fh:
                x = json.loads(line)
                counts[x] = counts.get(x, 0) + 1
    return counts
