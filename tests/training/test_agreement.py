"""A log scored against a forecast of another run is flagged, key by key (shockflow.logs.agreement)."""

import json

import numpy as np
import pytest

from shockflow.cases import load_case
from shockflow.cases.builtin import builtin_names
from shockflow.cases.schema import to_plain
from shockflow.logs.agreement import disagreements
from shockflow.logs.hdf5 import run_attributes
from shockflow.runners.training import build_model_and_data

NETWORK_CASES = [name for name in builtin_names() if load_case(name).kind == "network"]


def _recorded(case, seed):
    """What the log of ``case``'s run at ``seed`` records (the live file's attributes are the log's)."""
    model, _, data, _ = build_model_and_data(case, seed)
    settings = case.settings.training.train_settings(seed)
    attrs = run_attributes(model.spec(), {"train": data.spec, "test": None}, settings.to_dict(), settings.seed)
    return {"model": json.loads(attrs["model_spec"]), "data": json.loads(attrs["data_spec"])["train"],
            "training": json.loads(attrs["settings"]), "seed": attrs["seed"]}


def forecast_settings(case):
    """The settings a forecast (or run) file of ``case`` stores (shockflow.runners.prediction.prediction_result)."""
    return json.loads(json.dumps(to_plain(case.settings)))


@pytest.mark.parametrize("name", NETWORK_CASES)
def test_the_log_of_a_case_agrees_with_that_case(name):
    case = load_case(name)
    seed = case.seed or 0
    assert disagreements(_recorded(case, seed), forecast_settings(case), seed) == []


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
