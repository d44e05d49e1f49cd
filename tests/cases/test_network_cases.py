"""Network cases: call tables checked against signatures, `shockflow train`, the built-in staircase."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from shockflow.cases import CaseError, load_case
from shockflow.cli import main
from shockflow.logs import read_training_log

REPO = Path(__file__).resolve().parents[2]
STAIRCASE = (REPO / "cases" / "diagonal-staircase.toml").read_text()


def test_staircase_switch_on_steps_match_the_logistic_modes(tmp_path, capsys):
    assert main(["train", "diagonal-staircase", "--out", str(tmp_path), "--json", "--no-figures"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"case", "log_file", "observed"}
    record = read_training_log(out["log_file"])
    assert record.series["step"][-1] == 2000 and record.seed == 0
    # discrete GD on a balanced mode u = v = eps: z = u v grows by (1 + lr w)^2 per step while small, so
    # z = w/2 is reached after ln((w - eps^2)/eps^2) / (2 ln(1 + lr w)) steps (docs/theory.md §2 logistic switch-on)
    lr, eps2 = 0.05, 1e-6
    expected = [math.log((w - eps2) / eps2) / (2 * math.log1p(lr * w)) for w in (4.0, 1.0, 0.25)]
    observed = [o["step"] for o in out["observed"]]
    assert len(observed) == 3
    for seen, exact in zip(observed, expected):
        assert seen == pytest.approx(exact, rel=0.10)  # measured: -3.6 %, +5.5 %, -3.6 %


def test_train_refuses_pde_cases_and_solve_refuses_network_cases(tmp_path, capsys):
    assert main(["train", "burgers-sine", "--out", str(tmp_path)]) == 2
    assert "run it with `shockflow solve`" in capsys.readouterr().err
    assert main(["solve", "diagonal-staircase", "--out", str(tmp_path)]) == 2
    assert "run it with `shockflow train`" in capsys.readouterr().err


def bad(tmp_path, text, *overrides) -> CaseError:
    path = tmp_path / "net.toml"
    path.write_text(text)
    with pytest.raises(CaseError) as info:
        load_case(path, overrides)
    return info.value


def test_unknown_model_name_lists_the_registered_models(tmp_path):
    err = bad(tmp_path, STAIRCASE.replace('name = "diagonal"', 'name = "diagonl"'))
    assert err.keys == ("model.name",)
    assert 'did you mean "diagonal"?' in str(err) and '"mlp"' in str(err)


def test_model_arguments_are_checked_against_the_constructor(tmp_path):
    err = bad(tmp_path, STAIRCASE.replace("input_dim = 3", "input_dims = 3").replace('form = "uv"', 'form = 2'))
    assert "model.input_dims" in err.keys and "did you mean 'input_dim'?" in str(err)
    assert "model.form" in err.keys and "expected a string" in str(err)
    assert err.missing == ("model.input_dim",)


def test_training_settings_errors_name_the_key(tmp_path):
    err = bad(tmp_path, STAIRCASE, "training.optimizer=sgd")
    assert err.keys == ("training.optimizer",) and "needs a batch_size" in str(err)
    err = bad(tmp_path, STAIRCASE, "training.lr=-1")
    assert err.keys == ("training.lr",)


def test_model_that_does_not_fit_the_data_is_bad_input(tmp_path, capsys):
    path = tmp_path / "net.toml"
    path.write_text(STAIRCASE.replace("input_dim = 3", "input_dim = 5"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "model" in err and "net.toml" in err


def test_a_bad_data_or_model_argument_is_named_by_its_key(capsys):
    """A tester's teacher_weights = [8.0, "x"] was 'data: could not convert string to float', and n = -5
    'data: power_law_covariance: n must be a positive integer': the table, not the key."""
    for override, said in (('data.teacher_weights=[8.0, "x", 1.0, 0.5]', "data.teacher_weights[1]: expected a "
                                                                           "number, as the list's other entries are, "
                                                                           "found the string 'x'"),
                           ("data.n=-5", "data.n: must be a positive integer, got -5"),
                           ("data.noise=-1", "data.noise: must be >= 0"),
                           ("model.init_scale=-1", "model.init_scale: expected a finite non-negative number")):
        assert main(["validate", "two-layer-staircase", "--set", override]) == 2
        assert said in capsys.readouterr().err


@pytest.mark.parametrize("case", ["linear2-momentum", "deep-linear-3"])
def test_a_one_column_target_fits_a_network_of_one_output(tmp_path, capsys, case):
    # a linear teacher of one singular value makes y (n, 1); a network of one output gives (n,): the same targets.
    # It was refused as a model that does not fit the data; now it runs and its one drop is predicted
    sets = ["--set", "model.output_dim=1", "--set", "data.singular_values=[3.0]"]
    assert main(["validate", case, *sets, "--quiet"]) == 0
    assert main(["run", case, *sets, "--out", str(tmp_path), "--json", "--no-figures"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["predicted"]) == 1 and out["score"]["recall"] == 1.0
    assert out["score"]["median_relative_error_all"] <= 0.05       # measured 2.3 % and 0.6 %


def test_validate_says_when_only_the_prediction_refuses_a_case(capsys):
    """A tester's adam case: validate exit 2 with run's refusal, though `shockflow train` trains it; the refusal now
    says the case is valid for train, and a case train refuses too gets no such note."""
    assert main(["validate", "two-layer-staircase", "--set", "training.optimizer=adam"]) == 2
    err = capsys.readouterr().err
    assert "training.optimizer" in err and "valid for `shockflow train`" in err
    assert main(["validate", "two-layer-staircase", "--set", "data.n=-5"]) == 2
    err = capsys.readouterr().err
    assert "data.n" in err and "valid for `shockflow train`" not in err
