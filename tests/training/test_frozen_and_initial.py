"""`[training] frozen` (parameters the optimiser skips) and `[training] initial` (an .npz of initial parameters)."""

import numpy as np
import pytest

from shockflow import models
from shockflow.cases import CaseError, RunOptions, load_case
from shockflow.cli import main
from shockflow.data.teacher_student import linear_teacher
from shockflow.training import TrainSettings, train

CASE = """kind = "network"
name = "tanh-net"
seed = 3
[model]
name = "mlp"
input_dim = 4
width = 6
output_dim = 2
activation = "erf"
init_scale = 0.5
[data]
name = "linear_teacher"
n = 128
d = 4
singular_values = [1.0, 0.5]
[training]
optimizer = "{opt}"
lr = 0.05
steps = 40
{extra}
"""


@pytest.mark.parametrize("opt", ["gd", "momentum", "nesterov", "adam"])
def test_a_frozen_layer_is_not_trained_and_the_rest_is(opt):
    net = models.build("mlp", input_dim=4, width=6, output_dim=2, activation="erf", init_scale=0.5, seed=1)
    data = linear_teacher(n=64, d=4, singular_values=[1.0, 0.5], seed=0)
    a0, W0 = net.params["a"].copy(), net.params["W"].copy()
    train(net, data, TrainSettings(optimizer=opt, lr=0.05, steps=30, frozen=("a",), weight_decay=0.1), quiet=True)
    assert np.array_equal(net.params["a"], a0)            # untouched, weight decay included
    assert np.max(np.abs(net.params["W"] - W0)) > 1e-3


def test_an_unknown_frozen_name_is_refused():
    net = models.build("mlp", input_dim=4, width=6, output_dim=2, seed=1)
    data = linear_teacher(n=64, d=4, singular_values=[1.0, 0.5], seed=0)
    with pytest.raises(ValueError, match=r"frozen: 'b' is not a parameter of the 'mlp' model; its parameters are W, a"):
        train(net, data, TrainSettings(steps=2, frozen=("b",)), quiet=True)


def _case(tmp_path, extra, opt="gd", file="tanh-net.toml"):
    path = tmp_path / file
    path.write_text(CASE.format(opt=opt, extra=extra))
    return path


def test_initial_parameters_come_from_an_npz_beside_the_case(tmp_path):
    from shockflow.runners.training import build_model_and_data

    rng = np.random.default_rng(5)
    W = rng.normal(size=(6, 4))
    np.savez(tmp_path / "start.npz", W=W)                 # 'a' keeps the model's own initialisation
    case = load_case(str(_case(tmp_path, 'initial = "start.npz"')))
    model, _, _, _ = build_model_and_data(case, 3)
    own, _, _, _ = build_model_and_data(load_case(str(_case(tmp_path, "", file="own.toml"))), 3)
    assert np.array_equal(model.params["W"], W) and np.array_equal(model.params["a"], own.params["a"])
    out = main(["train", str(tmp_path / "tanh-net.toml"), "--out", str(tmp_path / "o"), "--no-figures", "--quiet"])
    assert out == 0
    from shockflow.logs import read_training_log

    first = read_training_log(tmp_path / "o" / "tanh-net.h5").snapshots["W"][0]
    assert np.array_equal(first, W)                        # the run started there


@pytest.mark.parametrize("arrays, message", [({"V": np.zeros((6, 4))}, "'V', which is not a parameter"),
                                             ({"W": np.zeros((4, 6))}, "shape (6, 4), found shape (4, 6)"),
                                             ({"W": np.full((6, 4), "x")}, "real numbers, found one of dtype <U1"),
                                             ({"W": np.full((6, 4), np.nan)}, "with non-finite entries"),
                                             ({"W": np.zeros((4, 6)), "a": np.zeros((3, 6))},   # both, at once
                                              "found shape (4, 6); 'a' must be a finite array of shape (2, 6), found "
                                              "shape (3, 6)"),
                                             (None, "no such file")])
def test_a_bad_initial_file_is_an_error_at_training_initial(tmp_path, arrays, message):
    from shockflow.runners.training import build_model_and_data

    if arrays is not None:
        np.savez(tmp_path / "start.npz", **arrays)
    case = load_case(str(_case(tmp_path, 'initial = "start.npz"')))
    with pytest.raises(CaseError, match="training.initial") as exc:
        build_model_and_data(case, 0)
    assert message in str(exc.value)


def test_the_prediction_refuses_frozen_parameters_before_any_work(tmp_path, capsys):
    path = _case(tmp_path, 'frozen = ["a"]')
    assert main(["forecast", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "training.frozen" in err and "Traceback" not in err
    assert not (tmp_path / "o" / "tanh-net-forecast.h5").exists()
    assert main(["train", str(path), "--out", str(tmp_path / "t"), "--no-figures", "--quiet"]) == 0
