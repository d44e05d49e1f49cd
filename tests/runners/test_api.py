"""The Python API re-exported from `shockflow`: the same runs as the command line, the same errors."""

from __future__ import annotations

import math

import pytest

import shockflow
from shockflow.cases import CaseError


def test_the_api_names_are_the_library_functions():
    from shockflow.cases import load_case
    from shockflow.runners import api
    from shockflow.storage import read_result

    assert shockflow.load_case is load_case and shockflow.read_result is read_result
    assert (shockflow.run, shockflow.solve, shockflow.train) == (api.run, api.solve, api.train)
    assert {"load_case", "run", "solve", "train", "read_result"} <= set(dir(shockflow))
    assert (shockflow.forecast, shockflow.monitor) == (api.forecast, api.monitor)
    with pytest.raises(AttributeError, match="no attribute 'predict_everything'"):
        shockflow.predict_everything


def test_solve_writes_into_out_and_finds_the_sine_shock_time(tmp_path):
    outcome = shockflow.solve("burgers-sine", out=tmp_path / "res", overrides=["domain.cells=200"], figures=False)
    assert outcome.result_file.parent == tmp_path / "res"
    first = outcome.report.shocks[0]
    assert first.time == pytest.approx(1 / (2 * math.pi), rel=0.03)
    assert shockflow.read_result(outcome.result_file).shock_rows()[0]["time"] == first.time


def test_a_case_of_the_wrong_kind_is_refused_naming_the_function():
    with pytest.raises(CaseError, match=r"run it with shockflow\.run\(\) or shockflow\.train\(\), not solve\(\)"):
        shockflow.solve("two-layer-staircase")


def test_overrides_of_an_already_loaded_case_are_refused():
    case = shockflow.load_case("burgers-sine")
    with pytest.raises(CaseError, match="overrides apply to a case being loaded"):
        shockflow.solve(case, overrides=["domain.cells=100"])


def test_a_bad_override_names_the_key(tmp_path):
    with pytest.raises(CaseError, match="domain.cells"):
        shockflow.solve("burgers-sine", out=tmp_path, overrides=["domain.cells=-3"])


def test_the_api_names_the_argument_a_wrong_value_came_in(tmp_path):
    import shockflow

    with pytest.raises(TypeError, match="out: expected a directory path"):
        shockflow.forecast("two-layer-staircase", out=None)
    with pytest.raises(CaseError, match="seed: expected a whole number >= 0"):
        shockflow.forecast("two-layer-staircase", out=tmp_path, seed="abc")
    with pytest.raises(CaseError, match="lr_scan: expected a sequence of learning rates"):
        shockflow.forecast("two-layer-staircase", out=tmp_path, lr_scan="abc")
    with pytest.raises(CaseError, match="log: no such file"):
        shockflow.monitor(tmp_path / "absent.csv", tmp_path / "f.h5")
