"""ERM fits per second for the quadratic-network scaling study at d = 100 (docs/theory.md §4).

Configurations (printed as JSON lines), all on the same target (γ = 1, Δ = 0.5, p = d):

  path_warm     a λ path of ``--lams`` values (λ/λ_0 from 0.5 down to 0.02, geometric), solved
                largest first with warm starts and one shared design (λ_max(A*A) computed once)
  cold          the same λ values, each fitted from S = 0 with a fresh design
  direct_lbfgs  one fit on W (L-BFGS, p = d) at the middle λ, for comparison

"fits_per_second" counts converged fits (tol = 1e-6 relative prox-gradient residual). Set
OPENBLAS_NUM_THREADS=1: the fits are chains of small BLAS calls and oversubscribed threads on a
shared 2-core machine slow them by an order of magnitude. Timings on a shared machine are
indicative only.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_scaling.py [--n 1000] [--lams 8]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from shockflow.scaling.convex_erm import ConvexERMSettings, fit_convex, fit_lambda_path, lambda_zero
from shockflow.scaling.design import QuadraticDesign
from shockflow.scaling.direct_erm import DirectERMSettings, fit_direct
from shockflow.scaling.target import make_target, sample_data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=100)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--lams", type=int, default=8)
    ap.add_argument("--no-direct", action="store_true")
    args = ap.parse_args()
    d, n = args.d, args.n
    target = make_target(d, 1.0, noise=0.5, seed=0)
    X, y = sample_data(target, n, seed=0)
    rel = np.geomspace(0.5, 0.02, args.lams)
    settings = ConvexERMSettings(tol=1e-6)

    t = time.perf_counter()
    design = QuadraticDesign(X)
    lz = lambda_zero(design, y)
    path = fit_lambda_path(design, y, rel * lz, settings=settings)
    dt = time.perf_counter() - t
    print(json.dumps({"config": "path_warm", "d": d, "n": n, "fits": len(path), "seconds": dt,
                      "fits_per_second": len(path) / dt, "iterations": [r.iterations for r in path]}))

    t = time.perf_counter()
    cold = [fit_convex(QuadraticDesign(X), y, lam, settings=settings) for lam in rel * lz]
    dt = time.perf_counter() - t
    print(json.dumps({"config": "cold", "d": d, "n": n, "fits": len(cold), "seconds": dt,
                      "fits_per_second": len(cold) / dt, "iterations": [r.iterations for r in cold]}))

    if not args.no_direct:
        lam = float(rel[len(rel) // 2] * lz)
        t = time.perf_counter()
        res = fit_direct(X, y, lam, d, DirectERMSettings(method="lbfgs", tol=1e-6))
        dt = time.perf_counter() - t
        ref = path[len(rel) // 2]
        print(json.dumps({"config": "direct_lbfgs", "d": d, "n": n, "fits": 1, "seconds": dt, "fits_per_second": 1 / dt,
                          "iterations": res.iterations,
                          "rel_diff_S_vs_convex": float(np.linalg.norm(res.S - ref.S) / np.linalg.norm(ref.S))}))


if __name__ == "__main__":
    main()
