"""What counts as a transition when a chart's escape starts at its ridge (a degenerate ridge: d0 = 0) and what the
parameter truth counts as learned: a unit that settles next to its start predicts nothing and is not learned; a
ReLU channel that must change its output weight's sign is followed through q = 0 (shockflow.geometry.rescaling)."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from shockflow.cli import main
from shockflow.prediction.mapping import ChartShock, InvalidPrediction, Optimiser, predict_chart
from shockflow.prediction.truth import parameter_truth


def _escape_chart(rate):
    x = np.geomspace(1e-6, 1.0, rate.size)
    return ChartShock(label="q", x0=1e-6, x_min=1.0, nu=0.0, mobility_at_ridge=1.0, gamma_star=math.inf,
                      location=1e-6, strength=0.0, escape_x=x, escape_rate=rate)


def test_an_escape_from_the_ridge_needs_the_flow_to_speed_up():
    opt = Optimiser(np.full(10_000, 0.01))
    x = np.geomspace(1e-6, 1.0, 200)
    grows = _escape_chart(np.minimum(x, 1.0 - x + 1e-3))        # speed grows with the distance: a plateau
    p = predict_chart(grows, opt)
    assert p.method == "escape_integral" and p.step > 0
    settles = _escape_chart(np.linspace(1.0, 1e-3, 200))        # fastest at the start: no plateau
    with pytest.raises(InvalidPrediction, match="rate of fall grows by"):
        predict_chart(settles, opt)


def _truth_chart(traj, x_min):
    steps = np.arange(len(traj), dtype=float)
    return SimpleNamespace(label="q", trajectory_steps=steps, trajectory=np.asarray(traj, dtype=float),
                           trajectory_strength=None, strength_at_min=float(x_min), geometry="rescaling",
                           coordinate="q", x_min=float(x_min))


def test_a_unit_that_moves_away_from_its_minimum_is_not_learned():
    learned = _truth_chart([1e-6, 2e-6, 0.3, 0.9, 1.0], 1.0)
    died = _truth_chart([9.0e-7, 3e-7, 1e-9, 1e-11, 1e-12], 9.4e-7)   # its minimum next to its start, it decays
    truth = parameter_truth(SimpleNamespace(charts=(learned, died)))
    assert [t.chart for t in truth.transitions] == ["q"] and truth.not_learned == ("q",)
    # half way from 1e-6 to 1.0, between the snapshots at steps 2 (0.3) and 3 (0.9), interpolated linearly
    half = 1e-6 + 0.5 * (1.0 - 1e-6)
    assert truth.transitions[0].step == pytest.approx(2.0 + (half - 0.3) / 0.6, rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("seed, transitions", [(0, 2), (1, 1), (2, 0), (3, 2), (4, 1)])
def test_cnn_relu_channels_across_seeds(seed, transitions, tmp_path, capsys):
    """Seeds 0–4 (README): every true transition predicted within 10 %, nothing predicted that the run does not
    learn (seed 2: both channels die, the loss never moves; seed 3: the second channel's output weight changes
    sign, its input weights keep theirs)."""
    import json

    assert main(["run", "cnn-relu-channels", "--seed", str(seed), "--json", "--no-figures", "--quiet",
                 "--out", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["truth"]) == transitions
    score = report["score"]
    if transitions == 0:
        assert report["predicted"] == [] and report["observed"] == []
        return
    assert score["recall"] == 1.0 and score["precision"] == 1.0
    assert score["median_relative_error_all"] < 0.10
