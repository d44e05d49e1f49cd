"""A relu network with a trained bias, predicted end to end: the fastest mode takes its bias along from the origin
(shockflow.geometry.one_sided_modes; docs/theory.md §6, "A kinked origin").  Without it every chart was 20–29 %
late (median 22.9 %)."""

import json

import pytest

from shockflow.cli import main


@pytest.mark.slow
def test_relu_with_a_trained_bias_is_predicted_within_ten_percent(tmp_path, capsys):
    assert main(["run", "mlp-tanh-teacher", "--set", "model.activation=relu", "--set", "model.bias=true", "--json",
                 "--no-figures", "--quiet", "--out", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    score = report["score"]
    assert score["truth"] == "parameters" and len(report["truth"]) == 5
    assert score["recall"] == 1.0
    assert score["median_relative_error_all"] < 0.10
    first = min(report["matches"], key=lambda m: m["observed_step"])
    assert first["relative_error"] < 0.03       # the fastest mode, which carries the bias: 0.6 % (20 % late before)


def test_relu_units_on_targets_with_a_mean_escape_at_their_faster_sides_rate(tmp_path, capsys):
    """A relu net with a bias on a relu committee teacher (targets with a mean): the unit that fits the mean with a
    positive bias grows at 1.51, its mirror image at 0.0004, and the split turns to the faster side over the plateau
    (docs/theory.md §6, "Two sides that grow apart").  The first drop was predicted at 186 against its truth 57,
    with the two sides' mean rate and every unit at its initial share; now within 5 %."""
    assert main(["run", "mlp-tanh-nonlinear-teacher", "--seed", "17", "--set", "model.activation=relu",
                 "--set", "model.bias=true", "--set", "data.activation=relu", "--set", "model.width=8",
                 "--set", "training.lr=0.1", "--set", "training.steps=1000", "--set", "data.n=2048", "--json",
                 "--no-figures", "--quiet", "--out", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    true = {t["chart"]: t["step"] for t in report["truth"]}
    predicted = {p["chart"]: p["step"] for p in report["predicted"]}
    assert report["score"]["truth"] == "parameters" and 50 < true["r0"] < 65
    assert abs(predicted["r0"] / true["r0"] - 1.0) < 0.05


def test_a_relu_cnn_whose_channels_all_start_on_the_decaying_side_is_predicted(tmp_path, capsys):
    """A relu CNN on a relu teacher (5 x 5 images, targets with a large mean): the mode grows at 76 on one side and
    decays at -41 on the other, where all three channels start.  With the split relaxed per side the chart kept the
    decaying side's direction, its start lay below a minimum that only rises, and it abstained ("the start is no
    plateau"): both drops missed.  The channels flowed over the plateau (two turn over, as in the run) give the first
    drop at 31.8 against its truth 31.6 (docs/theory.md §6, "Units that cross the kink")."""
    assert main(["run", "cnn2d-images", "--set", "model.input_size=[5,5]", "--set", "model.kernel_size=[2,2]",
                 "--set", "model.out_channels=3", "--set", "model.activation=relu", "--set", "data.height=5",
                 "--set", "data.width=5", "--set", "data.teacher.input_size=[5,5]",
                 "--set", "data.teacher.kernel_size=[2,2]", "--set", "data.teacher.activation=relu",
                 "--set", "data.teacher.seed=3", "--set", "training.lr=0.005", "--set", "training.steps=1500",
                 "--json", "--no-figures", "--quiet", "--out", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    true = {t["chart"]: t["step"] for t in report["truth"]}
    predicted = {p["chart"]: p["step"] for p in report["predicted"]}
    assert report["score"]["truth"] == "parameters" and 25 < true["r0"] < 40
    assert abs(predicted["r0"] / true["r0"] - 1.0) < 0.03
