"""Every built-in network case with a [geometry] table, at reduced size, through `shockflow run`:
its key figure (the median relative error of predicted vs observed transition steps) and the
quantity the case is about."""

import math

import pytest

from shockflow.cases import RunOptions, load_case
from shockflow.cases.builtin import builtin_names
from shockflow.runners.prediction import run_prediction_case

#: name -> (size overrides, matches expected, what the case is about)
CASES = {
    "two-layer-staircase": (["data.n=4096", "extraction.cells=401"], 4, "shock"),
    "saxe-linear": (["data.n=1024", "extraction.cells=401"], 1, "escape_integral"),
}


def test_every_builtin_run_case_is_checked_here():
    runnable = {n for n in builtin_names() if load_case(n).kind == "network" and load_case(n).settings.geometry is not None}
    import importlib.util
    from pathlib import Path

    # the attention and CNN cases are checked in test_prediction_more_cases.py
    spec = importlib.util.spec_from_file_location("more_cases", Path(__file__).with_name("test_prediction_more_cases.py"))
    more = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(more)
    MORE = more.CASES

    assert runnable == set(CASES) | set(MORE)


@pytest.mark.parametrize("name", sorted(CASES))
def test_builtin_case_predicts_its_transitions(name, tmp_path):
    overrides, n_matches, method = CASES[name]
    outcome = run_prediction_case(load_case(name, overrides=overrides),
                                  RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
    assert len(outcome.comparison.matches) == n_matches
    assert outcome.comparison.median_relative_error <= 0.10
    # against the parameter truth (issue 17), and the loss detections scored on their own
    assert outcome.comparison.truth == "parameters" and outcome.comparison.recall == 1.0
    assert outcome.comparison.precision == 1.0 and len(outcome.comparison.observed) == n_matches
    assert outcome.loss_comparison.truth == "loss" and outcome.loss_comparison.median_relative_error <= 0.10
    assert {p.method for p in outcome.stage.predicted} == {method}
    if name == "saxe-linear":
        # escape integral against the closed form of the balanced-or-not rescaling flow:
        # q' = sqrt(c^2 + 4 q^2) var (b - q) with b the least-squares slope of the data, from q0 = a w to b/2
        import numpy as np
        from scipy.integrate import quad

        from shockflow.runners.training import build_model_and_data

        model, _, data, _ = build_model_and_data(load_case(name, overrides=overrides), 0)
        a, w = float(model.params["W2"][0, 0]), float(model.params["W1"][0, 0])
        q0, c = a * w, a * a - w * w
        X, y = data.X[:, 0], data.y.reshape(-1)
        b, var = float(X @ y / (X @ X)), float(X @ X / X.size)   # L = var/2 (q - b)^2 + const
        rate = lambda q: 1.0 / (math.sqrt(c * c + 4 * q * q) * var * (b - q))
        t = quad(rate, q0, 0.0, limit=200)[0] + quad(rate, 0.0, b / 2, limit=200)[0] if q0 < 0 else quad(rate, q0, b / 2, limit=200)[0]
        (p,) = outcome.stage.predicted
        assert p.escape_time == pytest.approx(t, rel=0.01)
