"""What a forecast costs against the training it forecasts, and what a training step costs against
its bare matrix products; all measured side by side in one process.

    python benchmarks/bench_prediction_cost.py [--sizes 2048 8192 32768] [--suite] [--json]

1. **Training step / bare products** (``step``): ``model.loss_and_grad`` plus the GD update, against
   the minimal NumPy forward + backward + update of the same network (the floor any NumPy
   implementation pays), for a tanh MLP 256 → 512 → 10 (batch 1024) and the default case's diagonal
   network (d = 4, n = 8192).  Median of the ratios of interleaved pairs (A B, B A, ...), one BLAS thread.
2. **Default case at n samples** (``default``): the built-in default case with ``[data] n`` set,
   run through the library with the phases timed as ``benchmarks/bench_run.py`` does: training,
   extraction, solves (the chart solves with their shock reports and the resolution rule's coarser grids); the ratio ``(extraction + solves) / training``.
3. ``--suite``: the same ratio on the automatic-charts suite's largest cases
   (``cases/mlp-tanh-teacher.toml``, ``cases/linear2-momentum.toml``; minutes on a busy machine).

The one-minute load average is printed with every block: on a shared machine absolute times are
indicative, the ratios (both sides measured in the same process, interleaved) less so.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def step_ratios(repeats: int = 15, steps: int = 200) -> list[dict]:
    """Per-step time of the library's loss_and_grad + GD update over the bare NumPy step: the median of the
    ratios of ``repeats`` interleaved pairs (with the smallest and largest), one BLAS thread on both sides."""
    from shockflow import models
    from shockflow.data import Dataset
    from shockflow.training import TrainSettings
    from shockflow.training.optimizers import make_optimizer

    rng = np.random.default_rng(0)
    out = []

    # tanh MLP 256 -> 512 -> 10, batch 1024
    n, d, m, o = 1024, 256, 512, 10
    X = rng.standard_normal((n, d))
    Y = np.tanh(X[:, :o])
    data = Dataset(X, Y, {"name": "bench"})
    mlp = models.build(name="mlp", input_dim=d, width=m, output_dim=o, activation="tanh", seed=1)
    W, a = mlp.params["W"].copy(), mlp.params["a"].copy()

    def bare_mlp(S):
        t0 = time.perf_counter()
        for _ in range(S):
            Z = data.X @ W.T
            H = np.tanh(Z)
            F = H @ a.T
            G = (F - data.y) / n
            da = G.T @ H
            dZ = (G @ a) * (1.0 - H * H)
            dW = dZ.T @ data.X
            W.__isub__(1e-3 * dW)
            a.__isub__(1e-3 * da)
        return (time.perf_counter() - t0) / S

    def lib(model, ds):
        opt = make_optimizer(model.params, TrainSettings(optimizer="gd", lr=1e-3, steps=1))

        def run(S):
            t0 = time.perf_counter()
            for _ in range(S):
                _, g = model.loss_and_grad(ds.X, ds.y)
                opt.step(model.params, g, 1e-3)
            return (time.perf_counter() - t0) / S
        return run

    # the default case's network: f = X (u²/4), d = 4, n = 8192
    n2, d2 = 8192, 4
    X2 = rng.standard_normal((n2, d2))
    y2 = X2 @ np.array([8.0, 3.0, 1.0, 0.35])
    data2 = Dataset(X2, y2, {"name": "bench"})
    diag = models.build(name="diagonal", input_dim=d2, form="u2", init="constant", init_scale=1e-3)
    u = diag.params["u"].copy()

    def bare_diag(S):
        t0 = time.perf_counter()
        for _ in range(S):
            f = data2.X @ (0.25 * u * u)
            r = (f - data2.y) / n2
            gu = (r @ data2.X) * (0.5 * u)
            u.__isub__(1e-3 * gu)
        return (time.perf_counter() - t0) / S

    from threadpoolctl import threadpool_limits

    for name, bare, library, S in (("mlp 256-512-10 tanh, batch 1024", bare_mlp, lib(mlp, data), max(steps // 10, 5)),
                                   ("diagonal d=4, n=8192 (default case)", bare_diag, lib(diag, data2), 10 * steps)):
        # one BLAS thread on both sides (on a shared machine a second one waits for a busy core: noise, not cost);
        # pairs run A B, B A, ... and the ratio is formed within each pair, then its median taken
        with threadpool_limits(limits=1, user_api="blas"):
            bare(S), library(S)   # warm
            b, l, loads = [], [], []
            for r in range(repeats):
                loads.append(os.getloadavg()[0])
                pair = (bare, library) if r % 2 == 0 else (library, bare)
                times = {fn: fn(S) for fn in pair}
                b.append(times[bare])
                l.append(times[library])
        ratios = [tl / tb for tl, tb in zip(l, b)]
        out.append({"model": name, "bare_s": statistics.median(b), "library_s": statistics.median(l),
                    "ratio": statistics.median(ratios), "ratio_low": min(ratios), "ratio_high": max(ratios),
                    "pairs": repeats, "blas_threads": 1, "load": statistics.median(loads),
                    "load_range": [min(loads), max(loads)]})
    return out


def case_phases(case, overrides=()) -> dict:
    """Training, extraction and solve seconds of one `shockflow run` of ``case`` (no figures)."""
    import shockflow.prediction.extraction as extraction
    import shockflow.prediction.predict as predict
    import shockflow.training as training
    from shockflow.cli import main

    phases = {"training": 0.0, "extraction": 0.0, "solves": 0.0}
    saved, active = [], []

    def timed(owner, attr, phase):
        if not hasattr(owner, attr):   # an older tree (the before/after runs): no resolution rule
            return
        inner = getattr(owner, attr)
        saved.append((owner, attr, inner))

        def wrapper(*args, **kwargs):
            if active:   # inside a timed phase already (a solve inside the resolution rule): counted there
                return inner(*args, **kwargs)
            active.append(phase)
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                phases[phase] += time.perf_counter() - t0
                active.pop()
        setattr(owner, attr, wrapper)

    timed(training, "train", "training")
    timed(extraction, "extract", "extraction")
    timed(predict, "_solve_resolved", "solves")   # the chart solves under the resolution rule, with their reports
    timed(predict, "_solve", "solves")
    timed(predict, "_report", "solves")
    try:
        with tempfile.TemporaryDirectory() as out:
            args = ["run", case, "--quiet", "--no-figures", "--out", out]
            for o in overrides:
                args += ["--set", o]
            load = os.getloadavg()[0]
            code = main(args)
            if code != 0:
                raise SystemExit(f"shockflow run {case} exited with {code}")
    finally:
        for owner, attr, inner in saved:
            setattr(owner, attr, inner)
    phases["ratio"] = (phases["extraction"] + phases["solves"]) / phases["training"]
    phases["load"] = (load + os.getloadavg()[0]) / 2
    return phases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[2048, 8192, 32768])
    ap.add_argument("--suite", action="store_true", help="also the automatic-charts suite's largest cases")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = {"cpus": os.cpu_count(), "step": step_ratios()}
    case_phases("two-layer-staircase")   # warm: imports and JIT cache, not counted
    result["default"] = [{"n": n, **case_phases("two-layer-staircase", [f"data.n={n}"])} for n in args.sizes]
    if args.suite:
        result["suite"] = [{"case": c, **case_phases(os.path.join(HERE, "..", "cases", c))}
                           for c in ("linear2-momentum.toml", "mlp-tanh-teacher.toml")]
    if args.json:
        print(json.dumps(result))
        return
    print(f"training step / bare matrix products ({result['cpus']} cores)")
    for r in result["step"]:
        print(f"  {r['model']:<40} bare {1e6 * r['bare_s']:9.1f} µs  library {1e6 * r['library_s']:9.1f} µs  "
              f"ratio {r['ratio']:.2f} [{r['ratio_low']:.2f}-{r['ratio_high']:.2f}]  (load {r['load']:.1f})")
    print("(extraction + solves) / training")
    for r in result["default"] + result.get("suite", []):
        what = f"default case n = {r['n']}" if "n" in r else r["case"]
        print(f"  {what:<40} training {r['training']:7.3f} s  extraction {r['extraction']:7.3f} s  "
              f"solves {r['solves']:7.3f} s  ratio {r['ratio']:.3f}  (load {r['load']:.1f})")


if __name__ == "__main__":
    sys.exit(main())
