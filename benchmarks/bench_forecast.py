"""Wall time of `shockflow forecast` against the training it forecasts, side by side, per suite case.

    python benchmarks/bench_forecast.py [--case NAME ...] [--set KEY=VALUE ...] [--json]

For each case of the automatic-charts suite (default: the default case, ``mlp-tanh-teacher``,
``linear2-momentum``), in one process with warm Numba caches (each is run once first to compile):

- ``forecast``: :func:`shockflow.runners.forecast.forecast_stage` — building the network and data,
  extracting the charts, solving them, mapping the steps — and the overshoot learning-rate flag
  (:func:`shockflow.prediction.stability.overshoot_rate`, phase ``flag``), what ``shockflow forecast``
  computes (no file or figure writes);
- ``training``: :func:`shockflow.training.train` of the same network on the same data with the
  case's settings, no log file (the compute a forecast saves).

The ratio forecast/training is the figure of issue 20 (target ≤ 5 %).  The forecast is split into its
phases: ``extraction`` (``shockflow.prediction.extraction.extract``), ``solves`` (the chart HJ solves and
their shock reports: ``predict._solve_resolved``, ``predict._solve``, ``predict._report``) and ``chain`` (the saddle chain,
``predict.follow_chain``); the rest is building the network and data and the mapping.  Timings on a
shared machine are indicative: the one-minute load average is printed with them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time

SUITE = ("two-layer-staircase", "mlp-tanh-teacher", "linear2-momentum")


def measure(name: str, overrides=()) -> dict:
    from shockflow.cases import load_case
    from shockflow.runners.forecast import forecast_stage
    from shockflow.training import train

    case = load_case(name, list(overrides))
    seed = case.seed or 0
    _flag(*forecast_stage(case, seed))                 # warm: kernels compiled, modules imported
    with _phases() as phases:
        start = time.perf_counter()
        stage, model, data, settings = forecast_stage(case, seed)
        mid = time.perf_counter()
        _flag(stage, model, data, settings)
        t_forecast = time.perf_counter() - start
        phases["flag"] = t_forecast - (mid - start)
    start = time.perf_counter()
    train(model.copy(), data, settings, log_path=None, quiet=True)
    t_train = time.perf_counter() - start
    return {"case": name, "overrides": list(overrides), "forecast_seconds": t_forecast, "training_seconds": t_train,
            "ratio": t_forecast / t_train, "charts": len(stage.extraction.charts), "steps": settings.steps,
            **{f"{k}_seconds": v for k, v in phases.items()}, "load": os.getloadavg()[0]}


def _flag(stage, model, data, settings) -> float:
    """The overshoot flag as ``shockflow forecast`` computes it (shockflow.runners.forecast.forecast_case), under the
    same BLAS thread count (``forecast_case`` runs under :func:`shockflow.blas_threads.blas_threads`; without it the
    landscape's matrix products ran with two spinning threads on a loaded machine: 3.97 s against 0.2 s)."""
    from shockflow.blas_threads import blas_threads
    from shockflow.prediction.stability import overshoot_rate
    from shockflow.runners.forecast import sharpest_curvature, stability_limit

    with blas_threads(interleaved=True):
        kappa = max((sharpest_curvature(c) for c in stage.extraction.charts), default=0.0)
        linear = stability_limit(kappa, settings.optimizer, settings.momentum)
        return min(linear, overshoot_rate(stage.extraction, model.copy(), data.X, data.y, settings, linear)[0])


@contextlib.contextmanager
def _phases():
    """Seconds spent in the forecast's phases (module docstring), by wrapping the functions for the block."""
    import shockflow.prediction.extraction as extraction
    import shockflow.prediction.predict as predict

    phases = {"extraction": 0.0, "solves": 0.0, "chain": 0.0}
    saved, active = [], []
    for owner, attr, phase in ((extraction, "extract", "extraction"), (predict, "_solve_resolved", "solves"),
                               (predict, "_solve", "solves"), (predict, "_report", "solves"),
                               (predict, "follow_chain", "chain")):
        if not hasattr(owner, attr):   # an older tree (the before/after runs): no resolution rule
            continue
        inner = getattr(owner, attr)
        saved.append((owner, attr, inner))

        def wrapper(*args, _inner=inner, _phase=phase, **kwargs):
            if active:   # inside a timed phase already (a solve inside the resolution rule): counted there
                return _inner(*args, **kwargs)
            active.append(_phase)
            t0 = time.perf_counter()
            try:
                return _inner(*args, **kwargs)
            finally:
                phases[_phase] += time.perf_counter() - t0
                active.pop()
        setattr(owner, attr, wrapper)
    try:
        yield phases
    finally:
        for owner, attr, inner in saved:
            setattr(owner, attr, inner)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", action="append", default=None)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = [measure(name, args.set) for name in (args.case or SUITE)]
    if args.json:
        print(json.dumps(rows))
    else:
        print(f"{'case':>22}  {'forecast s':>10}  {'training s':>10}  {'ratio':>8}  {'extraction':>10}  {'solves':>7}  "
              f"{'chain':>7}  {'flag':>7}  {'load':>5}")
        for r in rows:
            print(f"{r['case']:>22}  {r['forecast_seconds']:10.3f}  {r['training_seconds']:10.3f}  "
                  f"{r['ratio']:8.1%}  {r['extraction_seconds']:10.3f}  {r['solves_seconds']:7.3f}  "
                  f"{r['chain_seconds']:7.3f}  {r['flag_seconds']:7.3f}  {r['load']:5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
