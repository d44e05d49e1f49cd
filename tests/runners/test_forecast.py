"""``shockflow forecast``: the prediction of ``run`` without training; its control figures checked by training."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from shockflow.cases import CaseError, RunOptions, load_case
from shockflow.cli import main
from shockflow.runners.forecast import forecast_case, stability_limit


def _options(tmp_path, figures=False):
    return RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=figures)


@pytest.mark.parametrize("name, mu, limit", [("gd", 0.0, 2.0), ("momentum", 0.9, 2 * 1.9),
                                             ("nesterov", 0.9, 2 * 1.9 / 2.8), ("momentum", 0.5, 3.0)])
def test_the_stability_limit_is_the_edge_of_the_update_rules_stable_region(name, mu, limit):
    # ηκ < 2 (gd), 2(1 + μ) (heavy ball), 2(1 + μ)/(1 + 2μ) (Nesterov): found from the spectral radius
    for kappa in (0.5, 7.0):
        assert stability_limit(kappa, name, mu) == pytest.approx(limit / kappa, rel=1e-9)
    assert stability_limit(0.0, name, mu) == math.inf


def test_adam_is_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["forecast", "two-layer-staircase", "--set", "training.optimizer=adam", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "training.optimizer" in err and "adam" in err and "Traceback" not in err
    assert not any(out.rglob("*.h5")) and not any(out.rglob("*.png"))


def test_a_network_without_interchangeable_units_is_refused_naming_the_model(tmp_path, capsys):
    case = tmp_path / "linear.toml"
    case.write_text('kind = "network"\nname = "plain-linear"\n[model]\nname = "linear"\ninput_dim = 4\noutput_dim = 1\n'
                    '[data]\nname = "linear_teacher"\nn = 64\nd = 4\nsingular_values = [1.0]\n[training]\nsteps = 50\n')
    assert main(["forecast", str(case), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "plain-linear" in err or "linear.toml" in err
    assert "model" in err and "Traceback" not in err


def test_a_bad_lr_scan_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["forecast", "two-layer-staircase", "--lr-scan", "0.1:0.01:5"])
    assert exc.value.code == 2 and "LO:HI:N" in capsys.readouterr().err
    # a value starting with '-' gets the option's own check (argparse took it for an option: 'expected one argument')
    for value in ("-1:1:5", "-.5:1:5"):
        with pytest.raises(SystemExit) as exc:
            main(["forecast", "two-layer-staircase", "--lr-scan", value])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and "expected LO:HI:N with 0 < LO <= HI" in err and f"found '{value}'" in err


def test_a_scan_of_more_rates_than_the_limit_is_refused_before_any_work(capsys, tmp_path):
    """A tester's N = 1e8 filled 4.8 GB before any output: N past MAX_SCAN_RATES is refused, on the command line and
    from Python, and no --out is made."""
    import shockflow
    from shockflow.runners.forecast import MAX_SCAN_RATES

    with pytest.raises(SystemExit) as exc:
        main(["forecast", "two-layer-staircase", "--lr-scan", f"0.01:1:{MAX_SCAN_RATES + 1}", "--out", str(tmp_path / "o")])
    assert exc.value.code == 2 and f"N from 1 to {MAX_SCAN_RATES}" in capsys.readouterr().err
    with pytest.raises(CaseError, match=f"lr_scan: expected at most {MAX_SCAN_RATES} learning rates"):
        shockflow.forecast("two-layer-staircase", lr_scan=[0.1] * (MAX_SCAN_RATES + 1), out=tmp_path / "o", figures=False)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name, overrides, factor", [
    ("deep-linear-3", ["data.n=1024"], 2.0),          # the saddle chain times the transitions after the first
    ("moe-experts", ["data.n=1024"], 0.7),            # the mixture's chain runs the update rule in the extraction
])
def test_the_scan_at_a_rate_is_the_forecast_at_that_rate(tmp_path, name, overrides, factor):
    """A scan row is the case forecast at that rate (the same prediction, re-timed: the chain included), and at
    the case's own rate it is the forecast itself.  Re-mapping each chart's escape alone (the scan before) was
    off by up to 12 % on the chained transitions of the default case."""
    case = load_case(name, overrides)
    lr = case.settings.training.lr
    scan = forecast_case(case, _options(tmp_path / "s"), scan_rates=[lr, factor * lr])
    own, other = scan.scan
    assert own.steps == {p["chart"]: p["step"] for p in scan.predicted}
    assert scan.stage.saddles                                   # a chain ran: the scan had to follow it
    faster = forecast_case(load_case(name, overrides + [f"training.lr={factor * lr!r}"]), _options(tmp_path / "f"))
    assert other.steps == {p["chart"]: p["step"] for p in faster.predicted}
    assert other.order == tuple(p["chart"] for p in faster.predicted)


SUITE = [("two-layer-staircase", []),
         ("mlp-tanh-teacher", ["data.n=1024"]),
         ("linear2-momentum", ["data.n=1024"])]


@pytest.mark.slow
@pytest.mark.parametrize("name, overrides", SUITE)
def test_forecast_gives_the_predicted_steps_of_run_without_training(tmp_path, name, overrides):
    from shockflow.runners.monitor import read_forecast_steps
    from shockflow.runners.prediction import run_prediction_case

    case = load_case(name, overrides)
    forecast = forecast_case(case, _options(tmp_path / "f"))
    run = run_prediction_case(case, _options(tmp_path / "r"))
    assert [p["step"] for p in forecast.predicted] == [p.step for p in run.stage.predicted]   # the same numbers
    assert [p["chart"] for p in forecast.predicted] == [p.chart for p in run.stage.predicted]
    steps, charts, horizon = read_forecast_steps(forecast.forecast_file)
    assert steps.tolist() == [p.step for p in run.stage.predicted] and horizon == case.settings.training.steps
    # compare accepts the forecast file as --prediction, against the run's training log
    assert main(["compare", str(run.log_file), "--prediction", str(forecast.forecast_file), "--quiet"]) == 0


@pytest.mark.slow
def test_forecast_json_file_and_figure(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["forecast", "two-layer-staircase", "--set", "data.n=2048", "--out", str(out), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert {"case", "predicted", "seconds"} <= set(obj)
    assert [set(p) >= {"step", "chart", "gamma_star", "critical_lr", "loss_after", "beyond_horizon"}
            for p in obj["predicted"]] == [True] * 4
    levels = [p["loss_after"] for p in obj["predicted"]]
    assert levels == sorted(levels, reverse=True) and levels[0] < obj["initial_loss"]   # a staircase down
    assert (out / "two-layer-staircase-forecast.h5").is_file() and (out / "two-layer-staircase-forecast.png").is_file()
    assert [p for p in out.iterdir() if p.name.startswith(".")] == []                   # no temporaries left
    # `show` on the forecast file draws its staircase again, the same figure, and nothing of a run's (it drew the
    # three figures of a run result, CASE.png among them, over a run's own beside it)
    drawn = (out / "two-layer-staircase-forecast.png").read_bytes()
    (out / "two-layer-staircase-forecast.png").unlink()
    assert main(["show", str(out / "two-layer-staircase-forecast.h5"), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["figures"] == [str(out / "two-layer-staircase-forecast.png")]
    assert (out / "two-layer-staircase-forecast.png").read_bytes() == drawn
    assert sorted(p.name for p in out.iterdir()) == ["two-layer-staircase-forecast.h5", "two-layer-staircase-forecast.png"]


def _train(case, lr, steps=None):
    """Final loss and the chart order of the parameter truth of a run at ``lr`` (None: it diverged)."""
    from shockflow.prediction.trajectory import with_trajectory
    from shockflow.prediction.truth import parameter_truth
    from shockflow.runners.forecast import forecast_stage
    from shockflow.training import train
    from shockflow.training.loop import TrainingDiverged

    stage, model, data, settings = forecast_stage(case, 0)
    s = replace(settings, lr=lr, lr_min=settings.lr_min * lr / settings.lr, steps=steps or settings.steps)
    try:
        record = train(model.copy(), data, s, log_path=None, quiet=True)
    except TrainingDiverged:
        return None, None
    traj = with_trajectory(stage, model.copy(), dict(record.snapshots), chart_key=case.settings.extraction.chart_key,
                           X=data.X, y=data.y)
    truth = parameter_truth(traj.extraction)
    return float(record.series["loss"][-1]), [t.chart for t in truth.transitions]


@pytest.mark.slow
@pytest.mark.parametrize("name, overrides", [SUITE[0], SUITE[2]])
def test_the_flag_is_placed_within_5_percent_of_where_training_turns_unstable(tmp_path, name, overrides):
    """Just below the first flag (0.95x) training gives the same staircase; from just above it (1.03x, and 1.5x)
    it does not.  Measured: two-layer-staircase (gd): flag 0.2507 (2/κ at the top mode's minimum = γ*); training
    converges at 0.245 and 0.25 (loss 5e-5, 1.7e-4), not from 0.255 on (loss 0.69).  linear2-momentum (heavy ball
    0.9, n = 1024): the linear bound at the minimum is 0.364 and γ* 0.19, but the escape overshoots: the flag is
    the update rule run on the charts, 0.1501; training converges at 0.146, diverges at 0.148 and above
    (non-monotone further up: 0.17 converges), so the flag is late by 1.5-2.5 % (it was γ* = 0.19, 28 % late)."""
    case = load_case(name, overrides)
    f = forecast_case(case, _options(tmp_path))
    gamma = min(p["gamma_star"] for p in f.predicted)
    first_flag = min(gamma, f.stability_lr)
    rates = [0.95 * first_flag, 1.03 * first_flag, 1.5 * first_flag]
    scan = forecast_case(case, _options(tmp_path), scan_rates=rates).scan
    assert [r.critical for r in scan] == [False, True, True]
    base_loss, base_order = _train(case, case.settings.training.lr)
    ok_loss, ok_order = _train(case, rates[0])
    assert ok_order == base_order and ok_loss <= 10 * base_loss           # below the flag: the same staircase
    for lr in rates[1:]:
        bad_loss, bad_order = _train(case, lr)
        assert bad_loss is None or bad_loss > 100 * base_loss or bad_order != base_order, lr


@pytest.mark.slow
def test_the_target_rate_makes_the_transition_happen_by_the_target_step(tmp_path):
    case = load_case("two-layer-staircase", ["data.n=2048"])
    f = forecast_case(case, _options(tmp_path), target_step=150.0, transition=2)
    lr = f.target["lr"]
    assert f.target["chart"] == f.predicted[1]["chart"] and 0 < lr < f.stability_lr
    from shockflow.runners.forecast import AtRate, forecast_stage

    stage, model, data, settings = forecast_stage(case, 0)
    retimed = AtRate(stage, settings, case=case, model=model, data=data)
    at, below = (retimed.steps(r)[f.target["chart"]] for r in (lr, 0.99 * lr))
    assert at <= 150.0 < below
    # and training at that rate: the chart is half learned near step 150 (the forecast's own accuracy)
    from shockflow.prediction.trajectory import with_trajectory
    from shockflow.prediction.truth import parameter_truth
    from shockflow.training import train

    record = train(model.copy(), data, replace(settings, lr=lr), log_path=None, quiet=True)
    truth = parameter_truth(with_trajectory(stage, model.copy(), dict(record.snapshots), chart_key="modes",
                                            X=data.X, y=data.y).extraction)
    step = {t.chart: t.step for t in truth.transitions}[f.target["chart"]]
    assert abs(step - 150.0) <= 0.1 * 150.0


def test_the_loss_after_each_forecast_transition_is_the_saddle_it_leads_to(tmp_path):
    """Default net, w* = (8, 3, 1, 0.35), isotropic inputs: the saddle after k modes fits them, so the loss
    left is ½ Σ_{j>k} w_j² (+ the noise floor): 5.06, 0.56, 0.06, ~0 within 5 % (finite n)."""
    out = forecast_case(load_case("two-layer-staircase", overrides=["data.n=4096"]), _options(tmp_path))
    w = np.array([8.0, 3.0, 1.0, 0.35])
    left = [0.5 * float(np.sum(w[k + 1:] ** 2)) for k in range(4)]
    got = [r["loss_after"] for r in sorted(out.predicted, key=lambda r: r["step"])]
    assert got[:3] == pytest.approx(left[:3], rel=0.05)
    assert got[3] < 1e-3


def test_a_planned_rate_at_or_above_the_flag_is_said_critical_as_the_scan_says_it(tmp_path):
    """The forecast's own learning rate gets the scan's verdict: ``critical`` and its reason in the JSON object and
    a line of the table (a user asked linear2-momentum with 4 hidden units at lr 0.2 > 0.174, the overshoot flag:
    the forecast printed its steps without a word, and the training diverged at step 25)."""
    overrides = ["model.hidden=4", "data.n=128", "training.steps=200"]
    at = forecast_case(load_case("linear2-momentum", overrides), _options(tmp_path))
    assert not at.critical and at.as_dict()["critical"] is False
    flag = at.stability_lr
    above = forecast_case(load_case("linear2-momentum", overrides + [f"training.lr={1.1 * flag!r}"]), _options(tmp_path))
    scan = forecast_case(load_case("linear2-momentum", overrides), _options(tmp_path), scan_rates=[1.1 * flag]).scan
    assert above.as_dict()["critical"] is True and scan[0].critical
    assert above.critical == scan[0].reason and "overshoots" in above.critical
    assert "is critical" in above.table()


def test_a_transition_past_the_forecast_ones_is_bad_input_naming_the_option_not_the_case_file(tmp_path, capsys):
    from shockflow.cli import main

    code = main(["forecast", "linear2-momentum", "--set", "data.n=128", "--target-step", "100", "--transition", "9",
                 "--no-figures", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "--transition: expected a number from 1 to 4" in err and err.count("--transition") == 1
    assert "case file" not in err


@pytest.mark.parametrize("options, flags, python, command_line", [
    ({"target_step": -5}, ["--target-step", "-5"], "target_step: expected a finite positive number, found -5",
     "--target-step: expected a finite positive number, found '-5'"),
    ({"target_step": math.inf}, ["--target-step", "inf"], "target_step: expected a finite positive number, found inf",
     "--target-step: expected a finite positive number, found 'inf'"),
    ({"target_step": 200, "transition": 0}, ["--target-step", "200", "--transition", "0"],
     "transition: expected a positive whole number, found 0", "--transition: expected a positive whole number, found '0'"),
    ({"transition": 3}, ["--transition", "3"], "transition: given (3) without a target step",
     "--transition: given (3) without a target step"),
], ids=["negative-step", "infinite-step", "transition-0", "transition-without-step"])
def test_the_control_options_are_checked_alike_in_python_and_on_the_command_line(tmp_path, capsys, options, flags,
                                                                                  python, command_line):
    """target_step=-5 was forecast silently, transition=3 without target_step ignored, transition=0 named the flag
    --transition to a Python caller: one check (control_options), each naming the option as its caller spells it."""
    import shockflow
    from shockflow.cases import CaseError

    with pytest.raises(CaseError) as info:
        shockflow.forecast("two-layer-staircase", out=tmp_path / "py", figures=False, **options)
    assert str(info.value).startswith(python) and "--" not in str(info.value)
    try:
        code = main(["forecast", "two-layer-staircase", "--out", str(tmp_path / "cli"), "--no-figures", *flags])
    except SystemExit as exc:   # a value argparse's type refuses: a usage error
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and command_line in err and "Traceback" not in err
    assert not (tmp_path / "py").exists() and not (tmp_path / "cli").exists()


def test_a_learning_rate_scan_names_the_rate_it_refuses(tmp_path):
    """lr_scan=[-1.0] said 'TrainSettings: lr must be a finite number > 0.0', naming neither the argument nor the rate."""
    import shockflow
    from shockflow.cases import CaseError

    with pytest.raises(CaseError, match=r"^lr_scan\[1\]: expected a finite positive number, found -1\.0$"):
        shockflow.forecast("two-layer-staircase", lr_scan=[0.1, -1.0], out=tmp_path, figures=False)
    with pytest.raises(CaseError, match=r"^lr_scan: expected a sequence of learning rates .*found \[\]$"):
        shockflow.forecast("two-layer-staircase", lr_scan=[], out=tmp_path, figures=False)


def test_a_scanned_rate_the_plateau_cannot_hold_predicts_nothing_and_says_why(tmp_path, capsys):
    """A committee machine's scan re-runs the plateau's approach at each rate; at a rate above the update rule's
    stability limit on the plateau the approach circles (PlateauUnstable): that row predicts nothing and is critical
    with the reason, where the whole scan had failed (after 400 s of the approach's budget on a larger committee)."""
    import json

    from shockflow.cli import main

    assert main(["forecast", "committee-erf-frozen", "--out", str(tmp_path), "--no-figures", "--json",
                 "--lr-scan", "0.5:3:2"]) == 0
    rows = json.loads(capsys.readouterr().out)["lr_scan"]
    assert [r["lr"] for r in rows] == [0.5, 3.0]
    assert rows[0]["steps"]["plateau"] > 0 and not rows[0]["critical"]
    assert rows[1]["steps"] in (None, {}) and rows[1]["critical"]
    assert "above its stability limit" in rows[1]["reason"] and "override" not in rows[1]["reason"]
    assert "circles on a plateau" in rows[1]["reason"]     # and the flag says so: stability_lr is the plateau's limit
