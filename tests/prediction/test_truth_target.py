"""The parameter truth's target does not depend on the prediction (shockflow/prediction/truth.py): a chart counts as
learned within the run against its strength where every chart is learned (``Landscape.learned_strengths``, the
landscape alone) or its section's minimum at the origin, never against the minimum at the saddle the chain says it
escapes from."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

import shockflow.prediction.saddle_chain as saddle_chain
from shockflow.prediction.truth import parameter_truth

STEPS = np.arange(0.0, 101.0)


def _chart(label, strength, at_min):
    s = np.asarray(strength, dtype=np.float64)
    return SimpleNamespace(label=label, trajectory_steps=STEPS, trajectory=s, trajectory_strength=s,
                           strength_at_min=at_min, geometry=None, coordinate="x", x_min=at_min)


def test_a_correlated_mode_is_read_against_its_strength_where_every_mode_is_learned():
    # diagonal-correlated's fourth mode: its section's minimum at the origin holds 15.8, where every mode is learned
    # it holds 1.40, and the run ends at 1.40
    s = 1e-6 + (1.40 - 1e-6) / (1.0 + np.exp(-(STEPS - 60.0) / 4.0))
    chart = _chart("r3", s, 15.8)
    assert parameter_truth(SimpleNamespace(charts=(chart,))).not_learned == ("r3",)
    truth = parameter_truth(SimpleNamespace(charts=(chart,)), {"r3": 1.40})
    assert [t.chart for t in truth.transitions] == ["r3"] and abs(truth.transitions[0].step - 60.0) < 0.6
    # a mode still on its plateau at the end is not learned against either
    plateau = _chart("r3", 1e-6 * np.exp(STEPS / 25.0), 15.8)
    assert parameter_truth(SimpleNamespace(charts=(plateau,)), {"r3": 1.40}).transitions == ()


def _truth(case, out):
    import h5py

    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    run_prediction_case(load_case(case, []), RunOptions(out=str(out), quiet=True, progress=False, figures=False))
    with h5py.File(out / f"{case}.h5") as f:
        score = f["score"]
        steps = np.asarray(score["true_step"]).tolist()
        charts = [c.decode() if isinstance(c, bytes) else str(c) for c in np.asarray(score["true_chart"])]
        return charts, steps, json.loads(score.attrs["not_learned"]), np.asarray(f["transitions/predicted/step"]).tolist(), \
            json.loads(score.attrs["targets"])


def test_the_truth_is_the_same_whatever_saddles_the_chain_says_the_modes_escape_from(tmp_path, monkeypatch):
    """``diagonal-correlated``: a prediction whose chain says every mode escapes from the origin (its minimum there
    15.8 for the fourth mode, against 1.17 at the saddle it escapes from) changes the predicted steps, not the truth:
    the truth read the chain's minimum before, and called the fourth mode not learned under that prediction."""
    charts, steps, not_learned, predicted, targets = _truth("diagonal-correlated", tmp_path / "a")
    real = saddle_chain.chain_transitions

    def from_the_origin(landscape, first, optimiser, **kwargs):
        out_steps, saddle_of, saddles, escaped_from = real(landscape, first, optimiser, **kwargs)
        origin = landscape.saddle(())
        return [2.0 * s for s in out_steps], saddle_of, saddles, [origin] * len(escaped_from)

    monkeypatch.setattr(saddle_chain, "chain_transitions", from_the_origin)
    other = _truth("diagonal-correlated", tmp_path / "b")
    assert other[3] != predicted                     # another prediction ...
    assert other[:3] == (charts, steps, not_learned)  # ... the same truth
    assert sorted(c for c in charts if c.startswith("r")) == ["r0", "r1", "r2", "r3"]
    # the result file says what each chart was read against: the fourth mode's 1.40, not its origin minimum's 15.8
    assert {c: t["against"] for c, t in targets.items()} == dict.fromkeys(["r0", "r1", "r2", "r3"], "learned")
    assert abs(targets["r3"]["target"] - targets["r3"]["final"]) < 1e-3 * targets["r3"]["final"]


@pytest.mark.parametrize("name", ["diagonal-correlated", "diagonal-noncommuting"])
def test_where_every_mode_is_learned_is_where_the_run_ends(name):
    """The landscape's learned strengths against the run's last parameter snapshot, read on the same charts: every
    mode of these diagonal nets is learned within the run, and their sections reach the least-squares minimum the run
    ends at (measured: within 1.1e-5 and 6.1e-5; the origin's section minima are 0.38-11x the run's end).  A deep
    chain's sections keep each mode along the origin's direction: ``deep-linear-3``'s are within 2.4 % of its end."""
    from shockflow.cases import load_case
    from shockflow.prediction.trajectory import with_trajectory
    from shockflow.runners.prediction import predict_from_start
    from shockflow.runners.training import build_model_and_data
    from shockflow.training import train

    case = load_case(name, [])
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    settings = case.settings.training.train_settings(case.seed or 0)
    initial = model.copy()
    stage = predict_from_start(case, initial.copy(), data, settings, progress=False)
    learned = stage.landscape.learned_strengths()
    record = train(model, data, settings, quiet=True)
    read = with_trajectory(stage, initial, dict(record.snapshots), chart_key=case.settings.extraction.chart_key,
                           X=data.X, y=data.y)
    chain = {c.label for c in stage.landscape.charts}
    assert set(learned) == chain and len(chain) == 4
    for c in read.extraction.charts:
        if c.label in chain:
            end = float(c.trajectory_strength[-1])
            assert abs(learned[c.label] - end) <= 1e-3 * abs(end), (c.label, learned[c.label], end)


def test_the_table_says_what_a_chart_not_learned_was_read_against():
    """The run's table names, for each chart not learned within the run, its strength at the start and the end and
    the target it was to pass half way to, and whether that is where every chart is learned or its origin minimum."""
    from shockflow.runners.prediction import RunOutcome

    plateau = _chart("r3", 1e-6 * np.exp(STEPS / 25.0), 15.8)
    learned = parameter_truth(SimpleNamespace(charts=(plateau,)), {"r3": 1.40})
    origin = parameter_truth(SimpleNamespace(charts=(plateau,)))
    assert RunOutcome._not_learned(SimpleNamespace(truth=learned), "r3") == "r3 (1e-06 -> 5.46e-05 of 1.4, learned)"
    assert RunOutcome._not_learned(SimpleNamespace(truth=origin), "r3") == "r3 (1e-06 -> 5.46e-05 of 15.8, origin)"
