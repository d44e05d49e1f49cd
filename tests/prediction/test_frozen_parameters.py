"""Frozen parameters (``[training] frozen``) in the prediction: the charts move the free parameters only.

The automatic charts find their modes over each unit's free entries at the origin of the free parameters
(the frozen ones at their initial values); a geometry whose section moves a frozen parameter, a frozen
parameter that differs between units, or a chain are refused before any work, naming the frozen key (exit 2).
A frozen layer that leaves the origin sloped starts from the symmetric plateau instead
(shockflow/prediction/plateau.py); where that plateau has no exit to predict it is refused the same way."""

from __future__ import annotations

import numpy as np
import pytest

from shockflow import models
from shockflow.cases import RunOptions, load_case
from shockflow.cli import main
from shockflow.data.teacher_student import linear_teacher
from shockflow.geometry.auto import AutoGeometry, find_modes

NET = dict(name="mlp", input_dim=6, width=8, output_dim=2, activation="erf", bias=True, init_scale=1e-3, seed=0)


def _net():
    return models.build(**NET), linear_teacher(512, 6, [3.0, 1.5], noise=0.01, seed=0)


def test_the_modes_of_a_net_with_frozen_biases_are_those_of_its_free_entries_and_never_move_the_biases():
    model, data = _net()
    free = find_modes(model, data.X, data.y, frozen=("b",))
    p_w = NET["input_dim"]                                   # unit i = [W_i (6); b_i (1); a_i (2)]
    assert free.rates.size == 2 and np.all(free.directions[p_w] == 0.0)
    # over the free entries [W_i; a_i] the origin's Y is [[0, c Σ_xy], [c Σ_yx, 0]] (c = φ'(0)): its
    # positive eigenvalues are c times the singular values of Σ_yx = E[y xᵀ]
    c = model.activation.grad_at_zero
    sigma = np.linalg.svd(data.y.T @ data.X / data.n, compute_uv=False)
    assert free.rates == pytest.approx(c * sigma, rel=1e-6)
    # with b trained too its row enters Y (the sample mean of y couples a_i and b_i): the rates move
    both = find_modes(model, data.X, data.y)
    assert both.rates[:2] != pytest.approx(c * sigma, rel=1e-4)
    b0 = np.array(model.params["b"])
    for k in range(free.rates.size):
        geo = AutoGeometry(model=model, modes=free.directions, mode=k, frozen=("b",), extent=8.0)
        section = geo.section(np.array([[0.0], [1.0], [4.0]]))
        assert np.array_equal(section["b"], np.broadcast_to(b0, section["b"].shape))
        assert np.ptp(section["W"], axis=0).max() > 0.1         # the free ones do move along the chart


def _case(tmp_path, model: str, frozen: str, extra: str = "") -> str:
    path = tmp_path / "case.toml"
    path.write_text('kind = "network"\nname = "frozen-check"\n' + model +
                    '[data]\nname = "linear_teacher"\nn = 256\nd = 6\nsingular_values = [3.0, 1.5]\n'
                    f'[training]\nsteps = 50\nfrozen = {frozen}\n{extra}')
    return str(path)


MLP = '[model]\nname = "mlp"\ninput_dim = 6\nwidth = 8\noutput_dim = 2\nactivation = "erf"\ninit_scale = 1e-3\n'


@pytest.mark.parametrize("why, model, frozen, extra, words", [
    ("a readout frozen at its random initial values: units no longer interchangeable", MLP, '["a"]', "",
     ["'a'", "interchangeable"]),
    ("a chain: the balanced section moves every layer",
     '[model]\nname = "deep_mlp"\nactivation = "tanh"\ninput_dim = 6\nwidths = [5, 5]\noutput_dim = 2\n', '["W3"]',
     "", ["'W3'", "every layer"]),
])
def test_a_frozen_parameter_the_charts_cannot_hold_is_refused_naming_it_before_any_work(tmp_path, capsys, why, model,
                                                                                        frozen, extra, words):
    out = tmp_path / "out"
    assert main(["forecast", _case(tmp_path, model, frozen, extra), "--out", str(out)]) == 2, why
    err = capsys.readouterr().err
    assert "training.frozen" in err and all(w in err for w in words) and "Traceback" not in err
    assert not out.exists() or not any(out.rglob("*.h5"))


def test_a_soft_committee_machine_with_a_frozen_equal_readout_is_forecast_from_its_symmetric_plateau(tmp_path,
                                                                                                    capsys):
    # the erf soft committee machine f = Σ_i a φ(w_i·x) with a held equal in every unit: near zero weights
    # f ≈ a φ'(0) Σ_i w_i·x is linear in the free weights, the loss has slope a φ'(0) |E[y x]| at their origin and
    # no saddle there; its plateau is the symmetric point (shockflow/prediction/plateau.py), charted along its escape
    import json

    assert main(["forecast", "committee-erf-frozen", "--set", "data.n=1024", "--out", str(tmp_path / "out"),
                 "--no-figures", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (only,) = out["predicted"]
    assert only["chart"] == "plateau" and only["method"] == "plateau" and only["step"] < out["horizon"]


@pytest.mark.parametrize("command", ["forecast", "run"])
def test_a_sloped_origin_whose_plateau_cannot_be_left_is_refused_naming_the_frozen_key(tmp_path, capsys, command):
    # every unit starts the same: nothing breaks the symmetry, the plateau has no exit to predict
    model = models.build(**{**NET, "bias": False})
    params = {k: np.array(v) for k, v in model.params.items()}
    params["a"] = np.full_like(params["a"], 0.25)
    params["W"] = np.broadcast_to(params["W"][:1], params["W"].shape).copy()
    np.savez(tmp_path / "init.npz", **params)
    path = _case(tmp_path, MLP, '["a"]', 'initial = "init.npz"\n')
    out = tmp_path / "out"
    assert main([command, path, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "training.frozen" in err and "sloped" in err and "exactly symmetric" in err and "Traceback" not in err
    assert main(["validate", path]) == 2 and "exactly symmetric" in capsys.readouterr().err   # on the case's data
    assert not out.exists() or not any(out.rglob("*.h5"))       # nothing written (a run's log is rolled back)


@pytest.mark.parametrize("command", ["forecast", "run"])
def test_an_explicit_geometry_whose_section_moves_a_frozen_parameter_is_refused_naming_it(tmp_path, capsys, command):
    # the default case's gram charts move u, the only parameter: freezing it cannot be predicted by them
    out = tmp_path / "out"
    assert main([command, "two-layer-staircase", "--set", 'training.frozen=["u"]', "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "training.frozen" in err and "'gram'" in err and "'u'" in err and "Traceback" not in err
    assert not out.exists() or not any(out.rglob("*.h5"))


def test_the_frozen_parameters_are_set_in_training_not_in_the_geometry(tmp_path, capsys):
    assert main(["run", _case(tmp_path, MLP, '[]'), "--set", 'geometry={name = "auto", frozen = ["a"]}',
                 "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "geometry.frozen" in err and "[training] frozen" in err and "Traceback" not in err


@pytest.fixture(scope="module")
def frozen_bias_run(tmp_path_factory):
    from shockflow.runners.prediction import run_prediction_case

    case = load_case("mlp-erf-frozen-bias", ["data.n=1024"])
    out = tmp_path_factory.mktemp("frozen-bias")
    return run_prediction_case(case, RunOptions(out=str(out), quiet=True, progress=False, figures=False))


@pytest.mark.slow
def test_a_net_with_frozen_biases_is_predicted_against_its_parameter_truth(frozen_bias_run):
    """Measured (n = 1024): recall 100 %, the first two modes within 1 % of their learned-strength truth (+0.7,
    +0.2 %), the others −1.3, +5.4, −8.8 %; n = 2048 (the case itself): 100 %, 1.2 % median."""
    from shockflow.logs.hdf5 import read_training_log

    out = frozen_bias_run
    c = out.comparison
    assert c.truth == "parameters" and c.recall >= 0.9
    true = {t.chart: t.step for t in out.truth.transitions}
    predicted = {p.chart: p.step for p in out.stage.predicted}
    for chart in ("r0", "r1"):
        assert abs(predicted[chart] / true[chart] - 1.0) <= 0.05
    log = read_training_log(out.log_file)
    assert np.all(log.snapshots["b"] == 0.0)            # the run really held them
    assert np.ptp(log.snapshots["W"], axis=0).max() > 0.1


@pytest.mark.slow
def test_a_net_with_frozen_biases_meets_the_bar_at_n_1024(frozen_bias_run):
    """Measured: 5/5, median 1.2 % (per mode +0.7, +0.2, −1.3, +5.4, −8.8 %).  It was 12.3 % (+0.7, +0.05,
    +12.3, +16.1, +32.5 %) while the chain read a waiting mode's rate at a saddle from a stencil on |r|, which took
    the section's slope at the ridge for curvature (0.7 % with that fixed, the last two +14.1, +20.9 %), and kept
    the waiting mode on its section instead of following it in its unit subspace (shockflow.prediction.saddle_chain)."""
    assert frozen_bias_run.comparison.median_relative_error <= 0.10


@pytest.mark.parametrize("value", ['""', '["q"]'])
def test_a_frozen_name_that_is_no_parameter_is_refused_by_validate_naming_the_parameters(value, capsys):
    # found by the fuzz: `frozen = ""` reached the extraction's check and raised KeyError (exit 1)
    from shockflow.cli import main

    code = main(["validate", "sphere-direction", "--set", f"training.frozen={value}"])
    err = capsys.readouterr().err
    assert code == 2 and "training.frozen" in err and "'W'" in err and "Traceback" not in err


def test_the_intercepts_slope_does_not_make_the_origin_sloped():
    # sigmoid units with frozen biases (φ(0) = ½): at zero weights every readout a_i adds the constant φ(0) a_i,
    # so the sample mean of y slopes the loss along the readouts; that slope is an intercept's, which the charts'
    # fits take out, not a slope that drives an escape (it refused with "sloped" and failed after training)
    from shockflow.geometry.auto import _layout, free_origin, intercept_directions
    from shockflow.prediction.plateau import sloped_origin

    model, data = _net()
    sigmoid = models.build(**{**NET, "activation": "sigmoid"})
    assert abs(data.y.mean(axis=0)).max() > 1e-3                  # the sample's mean: nonzero
    assert not sloped_origin(sigmoid, data.X, data.y, ("b",))
    # its intercept directions: every free entry (readouts constant, hidden weights without function at a = 0)
    layout = _layout(sigmoid)
    origin, free = free_origin(sigmoid, layout, ("b",))
    assert intercept_directions(sigmoid, origin, layout, free, data.X).shape == (free.sum(), free.sum())
    # the committee machine (a readout frozen at 1, trained biases): the bias alone is an intercept direction
    # (f shifts by a φ'(0) b_i), the weights' slope a φ'(0) E[y x] stays, and the origin stays sloped
    committee = models.build(**{**NET, "output_dim": 1, "readout": 1.0})
    y1 = data.y[:, :1]
    layout = _layout(committee)
    origin, free = free_origin(committee, layout, ("a",))
    N = intercept_directions(committee, origin, layout, free, data.X)
    b_entry = np.zeros(int(free.sum()))
    b_entry[NET["input_dim"]] = 1.0                                  # unit i = [W_i (6); b_i (1)] free
    assert N.shape == (free.sum(), 1) and abs(N[:, 0] @ b_entry) == pytest.approx(1.0, abs=1e-12)
    assert sloped_origin(committee, data.X, y1, ("a",))


def test_a_sigmoid_net_with_frozen_biases_is_predicted_from_its_origin(tmp_path, capsys):
    # before: exit 2 on training.frozen after training (the plateau path, taken for the intercept's slope)
    import json

    model = MLP.replace('"erf"', '"sigmoid"') + "bias = true\n"
    path = _case(tmp_path, model, '["b"]', "lr = 0.05\n")
    assert main(["run", path, "--set", "data.n=512", "--set", "training.steps=1500", "--out", str(tmp_path / "out"),
                 "--no-figures", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["chart"] for p in out["predicted"]] == ["r0", "r1"]
    assert out["score"]["recall"] == 1.0 and out["score"]["median_relative_error_all"] <= 0.10


def test_a_plateau_the_landscape_cannot_predict_fails_after_the_checks_with_exit_1(tmp_path, capsys, monkeypatch):
    # what the initial parameters decide is refused before any work (exit 2, above); what only the landscape
    # decides is a failure of the prediction, naming its chart (exit 1), never a bad case file
    from shockflow.prediction import plateau

    def fails(*args, **kwargs):
        raise plateau.PlateauError("the symmetric plateau (loss 1): the perturbation arrives past the quadratic top")

    monkeypatch.setattr(plateau, "plateau_escape", fails)
    out = tmp_path / "out"
    assert main(["forecast", "committee-erf-frozen", "--set", "data.n=256", "--out", str(out), "--no-figures"]) == 1
    err = capsys.readouterr().err
    assert "chart plateau" in err and "quadratic top" in err and "Traceback" not in err
    assert "case file" not in err and not any(out.rglob("*.h5"))
