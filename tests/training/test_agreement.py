"""A log scored against a forecast of another run is flagged, key by key (shockflow.logs.agreement)."""

import json

import numpy as np
import pytest

from shockflow.cases import load_case
from shockflow.cases.builtin import builtin_names
from shockflow.cases.schema import to_plain
from shockflow.logs.agreement import disagreements, start_digest
from shockflow.logs.hdf5 import run_attributes
from shockflow.runners.training import build_model_and_data

NETWORK_CASES = [name for name in builtin_names() if load_case(name).kind == "network"]


def _recorded(case, seed):
    """What the log of ``case``'s run at ``seed`` records (the live file's attributes are the log's)."""
    model, _, data, _ = build_model_and_data(case, seed)
    settings = case.settings.training.train_settings(seed)
    attrs = run_attributes(model.spec(), {"train": data.spec, "test": None}, settings.to_dict(), settings.seed,
                           start_digest(model.params))
    return {"model": json.loads(attrs["model_spec"]), "data": json.loads(attrs["data_spec"])["train"],
            "training": json.loads(attrs["settings"]), "seed": attrs["seed"], "start": attrs["start"]}


def forecast_settings(case):
    """The settings a forecast (or run) file of ``case`` stores (shockflow.runners.prediction.prediction_result)."""
    return json.loads(json.dumps(to_plain(case.settings)))


@pytest.mark.parametrize("name", NETWORK_CASES)
def test_the_log_of_a_case_agrees_with_that_case(name):
    case = load_case(name)
    seed = case.seed or 0
    start = start_digest(build_model_and_data(case, seed)[0].params)   # the network is built the same way twice
    assert disagreements(_recorded(case, seed), forecast_settings(case), seed, start) == []


def test_each_key_that_differs_is_named():
    case = load_case("mlp-tanh-teacher")
    other = load_case("mlp-tanh-teacher", ["training.lr=0.05", "model.width=16", "data.n=2048"])
    found = disagreements(_recorded(other, 3), forecast_settings(case), 0)
    assert found == ["model.width: the log 16, the forecast 32", "data.n: the log 2048, the forecast 4096",
                     "training.lr: the log 0.05, the forecast 0.02", "seed: the log 3, the forecast 0"]
    staircase = load_case("two-layer-staircase")
    assert {f.split(":")[0] for f in disagreements(_recorded(case, 0), forecast_settings(staircase), 0)} >= {
        "model.name", "data.name", "data.n"}


def test_compare_and_monitor_warn_of_a_log_trained_otherwise(tmp_path, capsys):
    from shockflow.cli import main
    from shockflow.storage import Result, write_result
    from shockflow.training import train

    case = load_case("two-layer-staircase")
    model, _, data, _ = build_model_and_data(case, 0)
    log = tmp_path / "run.h5"
    train(model, data, case.settings.training.train_settings(0), log_path=log, quiet=True)
    settings = forecast_settings(case)
    for lr, expected in ((0.02, []), (0.05, ["training.lr: the log 0.02, the forecast 0.05"])):
        settings["training"]["lr"] = lr
        result = Result(case_name="two-layer-staircase", case_kind="network", case_text="", settings=settings, seed=0,
                        times=np.array([0.0]), values=np.zeros((1, 2)), coordinates={"x": np.array([0.0, 1.0])},
                        transitions={"predicted": {"chart": np.array(["r0", "r1"], dtype=object),
                                                   "step": np.array([110.0, 280.0])}})
        forecast = write_result(result, tmp_path / f"forecast-{lr}.h5")
        assert main(["compare", str(log), "--prediction", str(forecast), "--json"]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["disagreements"] == expected
        assert ("describe different runs: training.lr: the log 0.02, the forecast 0.05" in err) == bool(expected)
        assert main(["monitor", str(log), "--prediction", str(forecast), "--json"]) == 0
        events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        warnings = [e["message"] for e in events if e["kind"] == "warning"]
        assert warnings == ([f"warning: the log and the forecast describe different runs: {expected[0]}"]
                            if expected else [])


def test_a_data_file_is_the_same_by_its_name_wherever_it_was_opened_from():
    """A tester: every case with a data file was warned 'data.path: the log arr/wine.npz, the forecast wine.npz' (the
    case file's relative path against the path the run opened)."""
    log = {"model": {}, "data": {"name": "arrays", "path": "/tmp/x/arr/wine.npz"}, "training": {}, "seed": 0}
    assert disagreements(log, {"data": {"name": "arrays", "path": "wine.npz"}}, 0) == []
    assert disagreements(log, {"data": {"name": "arrays", "path": "other.npz"}}, 0) == [
        'data.path: the log /tmp/x/arr/wine.npz, the forecast other.npz']


def test_compare_from_python_scores_the_log_and_names_what_differs(tmp_path):
    """A tester: there was no shockflow.compare; the command line's compare from Python, its answer and errors."""
    import shockflow
    from shockflow.cases import CaseError

    case = load_case("two-layer-staircase")
    model, _, data, _ = build_model_and_data(case, 0)
    log = tmp_path / "run.h5"
    from shockflow.training import train

    train(model, data, case.settings.training.train_settings(0), log_path=log, quiet=True)
    forecast = shockflow.forecast("two-layer-staircase", out=tmp_path, figures=False).forecast_file
    done = shockflow.compare(log, forecast)
    assert done.disagreements == () and done.score()["recall"] == 1.0 and len(done.observed) == 4
    other = shockflow.forecast("two-layer-staircase", out=tmp_path / "lr", figures=False,
                               overrides=["training.lr=0.03"]).forecast_file
    assert shockflow.compare(log, other).disagreements == ("training.lr: the log 0.02, the forecast 0.03",)
    with pytest.raises(CaseError, match="no such file"):
        shockflow.compare(tmp_path / "absent.csv", forecast)


NPZ_CASE = """kind = "network"
name = "npz-start"
seed = 3
[model]
name = "linear2"
input_dim = 6
hidden = 4
output_dim = 2
init_scale = 0.001
[data]
name = "linear_teacher"
n = 256
d = 6
singular_values = [3.0, 1.5]
[training]
optimizer = "gd"
lr = 0.05
steps = 600
initial = "init.npz"
"""


def _initial_file(path, seed):
    rng = np.random.default_rng(seed)
    np.savez(path, W1=1e-3 * rng.standard_normal((4, 6)), W2=1e-3 * rng.standard_normal((2, 4)))


def test_a_log_whose_run_began_from_other_parameters_is_named(tmp_path):
    """Stop 50 left out: the log did not record where its run began, so a log trained from another ``[training]
    initial`` file of the same name (every key equal) was scored against the forecast without a word.  Both files now
    record a digest of the initial parameters: the same start agrees (forecast, train and run build it alike), an
    edited file is named."""
    import shockflow
    from shockflow.cli import main
    from shockflow.logs.agreement import check_log_against, log_settings

    case_file = tmp_path / "npz-start.toml"
    case_file.write_text(NPZ_CASE)
    _initial_file(tmp_path / "init.npz", 1)
    forecast = shockflow.forecast(case_file, out=tmp_path / "f", figures=False).forecast_file
    assert main(["train", str(case_file), "--out", str(tmp_path / "t"), "--quiet"]) == 0
    log = tmp_path / "t" / "npz-start.h5"
    before = start_digest(build_model_and_data(load_case(str(case_file)), 3)[0].params)
    assert log_settings(log)["start"] == before
    assert shockflow.compare(log, forecast).disagreements == ()
    assert main(["run", str(case_file), "--out", str(tmp_path / "r"), "--no-figures", "--quiet"]) == 0
    assert check_log_against(tmp_path / "r" / "npz-start-log.h5", tmp_path / "r" / "npz-start.h5") == []
    # run's result records the start its training began from: the forecast's, built the same way
    assert shockflow.read_result(tmp_path / "r" / "npz-start.h5").problem["start"] == before

    _initial_file(tmp_path / "init.npz", 2)      # the same name, other parameters
    assert main(["train", str(case_file), "--out", str(tmp_path / "t2"), "--quiet"]) == 0
    after = log_settings(tmp_path / "t2" / "npz-start.h5")["start"]
    assert after == start_digest(build_model_and_data(load_case(str(case_file)), 3)[0].params) != before
    assert shockflow.compare(tmp_path / "t2" / "npz-start.h5", forecast).disagreements == (
        f"start (a digest of the initial parameters): the log {after[:12]}, the forecast {before[:12]}",)
