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
3. ``--suite``: the same ratio on the automatic-charts suite's largest cases (:data:`SUITE_LARGEST`:
   ``mlp-tanh-teacher``, ``linear2-momentum``, ``mlp-erf-frozen-bias``, ``fourier-features``, ``deep-mlp-tanh``;
   minutes on a busy machine).
   ``--against PYTHON`` (issue 23): before/after, the rows of 2 (and 3 with ``--suite``) measured by this harness in
   fresh processes of this tree and of another tree's venv (``PYTHON``), alternating A B, B A, ... ``--repeat`` times
   (each process a warm run, then a timed one); medians and ranges per side, the load of each.
4. ``--suite-costs [CASE ...]`` (:func:`suite_costs`; issues 18 and 20): per case of the automatic-charts suite,
   ``(extraction + solves) / training`` of a ``shockflow run`` and ``forecast / training`` of a forecast
   (``benchmarks/bench_forecast.py``'s measurement: the chart work, the chain and the overshoot flag), side by
   side in one process, warm caches, each ``--repeat`` times interleaved (medians), with the network passes of
   the chart losses counted (parameter sets evaluated: pointwise batches and points along lines).

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
    """Training, extraction and solve seconds of one `shockflow run` of ``case`` (no figures), in one process: a
    run whose training is long enough trains beside its prediction (shockflow.forking.Beside), where neither phase
    is timed alone, so the run is made with ``train_beside=False`` where the tree has it."""
    import dataclasses

    import shockflow.prediction.extraction as extraction
    import shockflow.prediction.predict as predict
    import shockflow.training as training
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

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
    one_process = {"train_beside": False} if "train_beside" in {f.name for f in dataclasses.fields(RunOptions)} else {}
    try:
        with tempfile.TemporaryDirectory() as out:
            load = os.getloadavg()[0]
            run_prediction_case(load_case(case, list(overrides)),
                                RunOptions(out=out, quiet=True, progress=False, figures=False, **one_process))
    finally:
        for owner, attr, inner in saved:
            setattr(owner, attr, inner)
    phases["ratio"] = (phases["extraction"] + phases["solves"]) / phases["training"]
    phases["load"] = (load + os.getloadavg()[0]) / 2
    return phases


#: the automatic-charts suite (README, "The automatic-charts suite"), largest cases first
SUITE_CASES = ("mlp-tanh-teacher", "linear2-momentum", "cnn2d-images", "attention-qk-4x2", "fourier-features",
               "deep-linear-3", "deep-linear-4", "deep-mlp-tanh", "wine-linear", "mlp-erf-frozen-bias",
               "committee-erf-frozen", "diagonal-correlated", "diagonal-noncommuting")


def _counted_passes():
    """``(counts, restore)``: the parameter sets the chart losses evaluate, counted while the patches stand."""
    import importlib

    bl = importlib.import_module("shockflow.geometry.batched_loss")
    counts = [0]
    evaluated = bl._evaluated
    line = getattr(bl, "line_losses", None)

    def counted(model, P, X, y, batch, outputs):
        counts[0] += batch
        return evaluated(model, P, X, y, batch, outputs)

    def counted_line(model, base, direction, r, X, y):
        out = line(model, base, direction, r, X, y)
        counts[0] += 0 if out is None else int(np.size(r))
        return out

    bl._evaluated = counted
    if line is not None:
        bl.line_losses = counted_line

    def restore():
        bl._evaluated = evaluated
        if line is not None:
            bl.line_losses = line
    return counts, restore


def suite_costs(cases=SUITE_CASES, repeat: int = 2) -> list[dict]:
    """Per case: the phases of a ``shockflow run`` (:func:`case_phases`) and of a forecast (``bench_forecast.measure``),
    ``repeat`` rounds interleaved, medians; the chart-loss passes of one forecast."""
    sys.path.insert(0, HERE)
    from bench_forecast import _flag, measure

    from shockflow.cases import load_case
    from shockflow.runners.forecast import forecast_stage

    out = []
    for name in cases:
        path = os.path.join(HERE, "..", "cases", name + ".toml")
        case_phases(path)   # warm: kernels compiled, modules imported
        runs, forecasts = [], []
        for _ in range(repeat):
            runs.append(case_phases(path))
            forecasts.append(measure(path))
        counts, restore = _counted_passes()
        try:   # the passes of one forecast (the flag's included), counted apart from the timed ones
            case = load_case(path)
            _flag(*forecast_stage(case, case.seed or 0))
        finally:
            restore()
        med = lambda rows, key: statistics.median(r[key] for r in rows)
        out.append({"case": name, "run_training_s": med(runs, "training"), "extraction_s": med(runs, "extraction"),
                    "solves_s": med(runs, "solves"), "run_ratio": med(runs, "ratio"),
                    "forecast_s": med(forecasts, "forecast_seconds"), "forecast_training_s": med(forecasts, "training_seconds"),
                    "forecast_ratio": med(forecasts, "ratio"), "chain_s": med(forecasts, "chain_seconds"),
                    "flag_s": med(forecasts, "flag_seconds"), "passes": counts[0],
                    "load": statistics.mean([r["load"] for r in runs] + [r["load"] for r in forecasts])})
    return out


def _print_suite_costs(rows) -> None:
    print("automatic-charts suite: (extraction + solves) / training of `run`, forecast / training (medians)")
    print(f"  {'case':<24} {'train s':>8} {'extr s':>7} {'solve s':>7} {'(e+s)/t':>8}  {'fcast s':>7} {'train s':>8} "
          f"{'chain s':>7} {'flag s':>6} {'f/t':>7} {'passes':>7} {'load':>5}")
    for r in rows:
        print(f"  {r['case']:<24} {r['run_training_s']:8.3f} {r['extraction_s']:7.3f} {r['solves_s']:7.3f} "
              f"{r['run_ratio']:8.1%}  {r['forecast_s']:7.3f} {r['forecast_training_s']:8.3f} {r['chain_s']:7.3f} "
              f"{r['flag_s']:6.3f} {r['forecast_ratio']:7.1%} {r['passes']:7.0f} {r['load']:5.1f}")


#: the automatic-charts suite's largest cases (the ``--suite`` rows)
SUITE_LARGEST = ("mlp-tanh-teacher", "linear2-momentum", "mlp-erf-frozen-bias", "fourier-features", "deep-mlp-tanh")


def _case_path(name: str) -> str:
    path = os.path.join(HERE, "..", "cases", name + ".toml")
    return path if os.path.isfile(path) else name


def _one(case, overrides, repeat: int) -> list[dict]:
    """``repeat`` timed :func:`case_phases` of one case after a warm one (imports, JIT cache): the ``--one`` mode."""
    case_phases(case, overrides)
    return [case_phases(case, overrides) for _ in range(repeat)]


def against(other_python: str, rows, repeat: int) -> list[dict]:
    """Before/after: each row ``(label, case, overrides)`` measured by this harness in a fresh process of this tree
    (``sys.executable``) and of another (``other_python``: a venv with the other tree installed), the two processes
    alternating ``repeat`` times (A B, B A, ...), each a warm run and one timed run; medians and ranges per side."""
    import subprocess

    out = []
    for label, case, overrides in rows:
        sides = {"before": [], "after": []}
        for r in range(repeat):
            order = (("before", other_python), ("after", sys.executable))
            for side, python in (order if r % 2 == 0 else order[::-1]):
                cmd = [python, os.path.abspath(__file__), "--one", case, "--repeat", "1"]
                for o in overrides:
                    cmd += ["--set", o]
                done = subprocess.run(cmd, capture_output=True, text=True, check=True)
                sides[side] += json.loads(done.stdout.strip().splitlines()[-1])
        row = {"row": label}
        for side, runs in sides.items():
            for key in ("training", "extraction", "solves", "ratio", "load"):
                values = [r[key] for r in runs]
                row[f"{side}_{key}"] = statistics.median(values)
                row[f"{side}_{key}_range"] = [min(values), max(values)]
        out.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)   # each row as it is measured
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[2048, 8192, 32768])
    ap.add_argument("--suite", action="store_true", help="also the automatic-charts suite's largest cases")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--suite-costs", nargs="*", default=None, metavar="CASE",
                    help="only the automatic-charts suite's run and forecast costs (all its cases if none named)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--against", metavar="PYTHON", default=None,
                    help="before/after: the default-case sizes (and --suite cases) measured by this tree's python and "
                         "PYTHON (another tree's venv), processes alternating --repeat times")
    ap.add_argument("--cases", nargs="*", default=None, metavar="CASE", help="with --against: these cases, not the suite's largest")
    ap.add_argument("--one", metavar="CASE", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--set", action="append", default=[], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(_one(args.one, args.set, args.repeat)))
        return
    if args.against is not None:
        rows = [(f"default case n = {n}", "two-layer-staircase", [f"data.n={n}"]) for n in args.sizes]
        if args.suite or args.cases:
            rows += [(c, _case_path(c), []) for c in (args.cases or SUITE_LARGEST)]
        table = against(args.against, rows, args.repeat)
        if args.json:
            print(json.dumps(table))
            return
        print("(extraction + solves) / training, before (--against) and after (this tree), medians [ranges]")
        for r in table:
            print(f"  {r['row']:<28} ratio {r['before_ratio']:.3f} [{r['before_ratio_range'][0]:.3f}-"
                  f"{r['before_ratio_range'][1]:.3f}] -> {r['after_ratio']:.3f} [{r['after_ratio_range'][0]:.3f}-"
                  f"{r['after_ratio_range'][1]:.3f}]  extraction {r['before_extraction']:.3f} -> {r['after_extraction']:.3f} s"
                  f"  solves {r['before_solves']:.3f} -> {r['after_solves']:.3f} s  training {r['before_training']:.3f} / "
                  f"{r['after_training']:.3f} s  (load {r['before_load']:.1f} / {r['after_load']:.1f})")
        return
    if args.suite_costs is not None:
        rows = suite_costs(tuple(args.suite_costs) or SUITE_CASES, args.repeat)
        print(json.dumps(rows)) if args.json else _print_suite_costs(rows)
        return
    result = {"cpus": os.cpu_count(), "step": step_ratios()}
    case_phases("two-layer-staircase")   # warm: imports and JIT cache, not counted
    result["default"] = [{"n": n, **case_phases("two-layer-staircase", [f"data.n={n}"])} for n in args.sizes]
    if args.suite:
        result["suite"] = [{"case": c, **case_phases(_case_path(c))} for c in SUITE_LARGEST]
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
