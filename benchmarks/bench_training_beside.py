"""``shockflow run`` with its training in a second process beside the prediction, against one process, side by side.

    python benchmarks/bench_training_beside.py [--case NAME ...] [--repeat N] [--json]

For each case (default: the default case, ``linear2-momentum``, ``cnn2d-images``, ``mlp-tanh-teacher``), in one
process with warm Numba caches (one run first), :func:`shockflow.runners.prediction.run_prediction_case` without
figures, alternately with ``train_beside=False`` (train, then predict, in this process) and ``train_beside=True``
(the training and its loss curve's detection forked beside the prediction: :class:`shockflow.forking.Beside`),
``--repeat`` times each (default 3); the medians and their ratio are printed with the training time the run
expects (:func:`shockflow.runners.prediction.expected_training_seconds`: by default a run trains beside from
``BESIDE_FROM_SECONDS`` on, on an idle core).  The two share the machine's two cores: the timings are indicative
on a loaded machine, and the one-minute load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

CASES = ("two-layer-staircase", "linear2-momentum", "cnn2d-images", "mlp-tanh-teacher")


def measure(name: str, repeat: int) -> dict:
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import expected_training_seconds, run_prediction_case
    from shockflow.runners.training import build_model_and_data

    case = load_case(name)
    seed = case.seed or 0
    model, _, data, _ = build_model_and_data(case, seed)
    expected = expected_training_seconds(model, data, case.settings.training.train_settings(seed))

    def once(beside: bool) -> float:
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            run_prediction_case(case, RunOptions(out=out, quiet=True, progress=False, figures=False,
                                                 train_beside=beside))
            return time.perf_counter() - start

    once(False)   # warm: kernels loaded, modules imported
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(repeat):
        for beside in (False, True):
            times[beside].append(once(beside))
    one, two = statistics.median(times[False]), statistics.median(times[True])
    return {"case": name, "expected_training_seconds": expected, "one_process_seconds": one,
            "beside_seconds": two, "ratio": two / one, "load": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", help="a network case (repeatable)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(name, args.repeat) for name in (args.case or CASES)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    from shockflow.runners.prediction import BESIDE_FROM_SECONDS

    print(f"shockflow run --no-figures, warm, median of {args.repeat} (trains beside by default from an expected "
          f"{BESIDE_FROM_SECONDS:g} s of training)")
    print(f"{'case':>22}  {'expected training':>17}  {'one process':>11}  {'beside':>7}  {'beside/one':>10}  {'load':>5}")
    for r in rows:
        print(f"{r['case']:>22}  {r['expected_training_seconds']:16.2f}s  {r['one_process_seconds']:10.3f}s  "
              f"{r['beside_seconds']:6.3f}s  {r['ratio']:10.2f}  {r['load']:5.1f}")


if __name__ == "__main__":
    main()
