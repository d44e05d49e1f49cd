"""The two readings of one event (issue 7, "the link to the shock pipeline").

Five modes with halving strengths on the default network (tied diagonal net, gram geometry):
`shockflow run` predicts each switch-on from the shock of its quotient HJ chart,
t = gamma* ln(d_exit / d_0) (docs/theory.md §1 [model]); the Lotka-Volterra closed form of docs/theory.md §2 gives
the exact half-learned time t*_k(rho = 1/2) of the same network on the same data.  Both are in
gradient-flow time.
"""

import json

import numpy as np
import pytest

from shockflow.cases import load_case
from shockflow.cli import main
from shockflow.runners.training import build_model_and_data
from shockflow.nqf.experiments import mode_analysis
from shockflow.nqf.lotka_volterra import integrate_lv
from shockflow.nqf.switch_on import measured_switch_on, switch_on_time

OVERRIDES = ("model.input_dim=5", "data.d=5", "data.teacher_weights=[8.0, 4.0, 2.0, 1.0, 0.5]",
             "extraction.charts=[0, 1, 2, 3, 4]")


def test_shock_predictions_agree_with_the_lotka_volterra_switch_on_times(tmp_path, capsys):
    args = ["run", "two-layer-staircase", "--out", str(tmp_path), "--json", "--no-figures", "--quiet"]
    for o in OVERRIDES:
        args += ["--set", o]
    assert main(args) == 0
    run = json.loads(capsys.readouterr().out)
    predicted = sorted(p["time"] for p in run["predicted"])          # gradient-flow time, fastest first

    case = load_case("two-layer-staircase", OVERRIDES)
    model, _, data, _ = build_model_and_data(case, case.seed)
    modes = mode_analysis(model, data.X, data.y)
    # Finite data (n = 8192) couple the modes (C is not diagonal: cross-correlations of the inputs), so
    # the reference is the generalised Lotka-Volterra system, integrated; the orthogonal-feature closed
    # form ignores the coupling and is off by up to 19% here for the weakest modes (measured: shock
    # readings within 0.0, 0.2, 0.5, 1.6, 3.0% of the integrated system).
    t = np.linspace(0.0, 80.0, 16001)
    z = integrate_lv(modes["r"], modes["C"], modes["z0"], t)
    exact = np.sort(measured_switch_on(t, z, z[-1], rho=0.5))
    uncoupled = np.sort(switch_on_time(modes["r"], np.diag(modes["C"]), modes["z0"], rho=0.5))
    assert len(predicted) == 5
    relative = np.abs(np.array(predicted) / exact - 1)
    print("shock-predicted", np.round(predicted, 3), "LV", np.round(exact, 3), "uncoupled", np.round(uncoupled, 3))
    assert relative.max() < 0.05, (predicted, exact.tolist())
