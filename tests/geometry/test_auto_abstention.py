"""Abstention (docs/theory.md §6): no chart without an unstable direction, and a prediction past the run's
last step reported per prediction as beyond the horizon, never matched or dropped."""

import json

import numpy as np
import pytest

from shockflow import models
from shockflow.cli import main
from shockflow.geometry.auto import find_modes
from shockflow.prediction.comparison import match_transitions


def test_a_prediction_beyond_the_horizon_is_never_matched():
    # 2500 is within a factor 2 of the true 1500, but the run stopped at 2000: it cannot show it
    c = match_transitions([100.0, 2500.0], [100.0, 1500.0], truth="parameters", horizon=2000.0)
    assert [m.predicted_step for m in c.matches] == [100.0]
    assert c.recall == 0.5 and c.precision == 1.0
    assert c.score()["beyond_run"] == [2500.0]
    assert c.median_relative_error_all == pytest.approx(0.5)   # the miss counts 1
    # the same prediction inside a longer run is matched
    assert len(match_transitions([100.0, 2500.0], [100.0, 1500.0], horizon=3000.0).matches) == 2


def test_directions_that_are_stable_at_the_origin_get_no_chart():
    # a two-layer linear net on a rank-2 teacher: Y has ±σ_k and zeros; only the two positive ones are modes
    from shockflow.data.teacher_student import linear_teacher

    data = linear_teacher(2000, 5, (2.0, 1.0), seed=1)
    net = models.build("linear2", input_dim=5, hidden=4, output_dim=2, init_scale=1e-3, seed=0)
    modes = find_modes(net, data.X, data.y)
    assert modes.rates.size == 2 and np.all(modes.rates > 0)
    assert np.sum(modes.spectrum < -0.5) == 2 and np.sum(np.abs(modes.spectrum) < 1e-12) == 3


@pytest.mark.slow
def test_run_flags_each_prediction_beyond_the_horizon_in_json_and_the_result_file(tmp_path, capsys):
    import h5py

    code = main(["run", "two-layer-staircase", "--out", str(tmp_path), "--json", "--no-figures",
                 "--set", "training.steps=1200", "--set", "data.n=1024"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    flags = {p["chart"]: p["beyond_horizon"] for p in out["predicted"]}
    steps = {p["chart"]: p["step"] for p in out["predicted"]}
    assert flags == {c: steps[c] > 1200 for c in steps} and sum(flags.values()) == 1   # measured: r3 at 1952
    assert out["score"]["beyond_run"] == [s for c, s in steps.items() if flags[c]]
    assert all(m["predicted_step"] <= 1200 for m in out["matches"])
    with h5py.File(tmp_path / "two-layer-staircase.h5") as f:
        table = f["transitions/predicted"]
        stored = {str(c, "utf-8") if isinstance(c, bytes) else str(c): int(b)
                  for c, b in zip(table["chart"][()], table["beyond_horizon"][()])}
    assert stored == {c: int(v) for c, v in flags.items()}
