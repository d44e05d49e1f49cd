"""``shockflow.forecast(model, (X, y), optimiser)`` with a network of one's own (the protocol of
shockflow/models/protocol.py; tests/runners/network_pkg's RidgeNet, loaded from its file): data that does not fit
is refused naming ``data`` and the shapes, and every error about the network names it as what it is, a network
given from Python, never a case file."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import shockflow
from shockflow.cases import CaseError

SOURCE = Path(__file__).parent / "network_pkg" / "src" / "ridge_net" / "__init__.py"


@pytest.fixture(scope="module")
def ridge():
    spec = importlib.util.spec_from_file_location("ridge_net_for_the_api_tests", SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def data(ridge):
    d = ridge.ridge_teacher(n=128)
    return d.X, d.y


def test_data_of_unequal_rows_is_refused_naming_data_and_the_shapes(ridge, data, tmp_path):
    """10 rows of X and 128 of y returned a forecast."""
    X, y = data
    with pytest.raises(CaseError, match=r"^data: expected X and y with the same number of rows \(one per sample\), "
                                        r"found X of shape \(10, 6\) and y of shape \(128, 3\)$"):
        shockflow.forecast(ridge.RidgeNet(), (X[:10], y), {"lr": 0.02, "steps": 100}, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("bad, message", [
    ("notdata", r"^data: expected \(X, y\): .*found 'notdata'$"),
    (("X only",), r"^data: expected \(X, y\)"),
    ((np.zeros((0, 6)), np.zeros(0)), r"^data: expected X with one row per sample, found shape \(0, 6\)"),
    ((np.full((4, 6), np.nan), np.zeros(4)), r"^data: expected finite numbers, found NaN or infinity in X$"),
    ((np.array([["a"] * 6] * 4), np.zeros(4)), r"^data: expected X of numbers, found an array of dtype <U1$"),
    (None, r"^data: expected the network's data \(X, y\)"),
], ids=["string", "one-array", "no-rows", "nan", "strings", "none"])
def test_data_that_is_not_a_pair_of_arrays_names_data(ridge, tmp_path, bad, message):
    with pytest.raises(CaseError, match=message):
        shockflow.forecast(ridge.RidgeNet(), bad, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_data_given_with_a_case_is_refused_naming_data(tmp_path):
    """forecast("two-layer-staircase", "notdata") said 'too many values to unpack (expected 2)'."""
    with pytest.raises(CaseError, match=r"^data: expected None with a case .*found 'notdata'; data, optimiser and "
                                        r"name go with a network of your own"):
        shockflow.forecast("two-layer-staircase", "notdata", out=tmp_path / "o")
    with pytest.raises(CaseError, match=r"^optimiser: expected None with a case"):
        shockflow.forecast("two-layer-staircase", optimiser={"lr": 0.1}, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_errors_about_a_python_network_name_the_network_and_the_argument_not_a_case_file(ridge, data, tmp_path):
    class NoUnits(ridge.RidgeNet):
        units = None

    cases = [(ridge.RidgeNet(), {"lr": -1}, "network 'RidgeNet': optimiser.lr: expected a number > 0"),
             (ridge.RidgeNet(), {"optimizer": "adam"},
              "network 'RidgeNet': optimiser.optimizer: the prediction (shockflow run, shockflow forecast) has no "
              "validated escape model for 'adam'"),
             (NoUnits(), {"lr": 0.02, "steps": 100}, "network 'NoUnits': model: ")]
    for network, optimiser, message in cases:
        with pytest.raises(CaseError) as info:
            shockflow.forecast(network, data, optimiser, out=tmp_path / "o", figures=False)
        assert str(info.value).startswith(message)
        assert "case file" not in str(info.value) and "<string>" not in str(info.value)
    assert not (tmp_path / "o").exists()


def test_the_other_arguments_of_a_network_forecast_are_checked(ridge, data, tmp_path):
    with pytest.raises(CaseError, match=r"^optimiser: expected a dict of the keys of a case's \[training\] table"):
        shockflow.forecast(ridge.RidgeNet(), data, "gd", out=tmp_path)
    with pytest.raises(CaseError, match=r"^overrides: expected none with a network of your own"):
        shockflow.forecast(ridge.RidgeNet(), data, overrides=["training.lr=0.1"], out=tmp_path)
    with pytest.raises(CaseError, match=r"^name: expected a file stem .*found '\.\./x'"):
        shockflow.forecast(ridge.RidgeNet(), data, name="../x", out=tmp_path)
    with pytest.raises(TypeError, match=r"^case: expected .* or a network: a shockflow model or an object "
                                        r"implementing the network protocol"):
        shockflow.forecast(object(), data, out=tmp_path)


def test_the_optimisers_initial_file_sets_a_networks_start_as_a_case_files_does(ridge, data, tmp_path):
    """optimiser["initial"] was dropped for a network of one's own (a tester's missing file, wrong names and wrong
    shapes all gave the forecast of the network's own start): it is the start, checked as a case file's."""
    kwargs = dict(out=tmp_path / "o", figures=False)
    own = shockflow.forecast(ridge.RidgeNet(), data, {"lr": 0.02, "steps": 400}, **kwargs)
    params = ridge.RidgeNet().get_params()
    np.savez(tmp_path / "start.npz", **{k: 0.5 * np.asarray(v) for k, v in params.items()})
    halved = shockflow.forecast(ridge.RidgeNet(), data, {"lr": 0.02, "steps": 400, "initial": str(tmp_path / "start.npz")},
                                **kwargs)
    assert halved.initial_loss != own.initial_loss
    steps = [p.step for p in halved.stage.predicted]
    assert steps and all(a > b for a, b in zip(steps, [p.step for p in own.stage.predicted]))   # a smaller start waits longer
    np.savez(tmp_path / "other.npz", nothing=np.ones(3))
    for name, message in (("missing.npz", "no such file"), ("other.npz", "'nothing', which is not a parameter")):
        with pytest.raises(CaseError, match=message) as info:
            shockflow.forecast(ridge.RidgeNet(), data, {"lr": 0.02, "steps": 400, "initial": str(tmp_path / name)},
                               **kwargs)
        assert "optimiser.initial" in str(info.value)


def test_a_network_that_answers_what_the_protocol_does_not_allow_is_a_case_error_naming_the_method(ridge, data,
                                                                                                  tmp_path):
    """A tester's networks raised KeyError ('a'), IndexError, a broadcast ValueError from batched_loss and a pickling
    TypeError from deep inside shockflow: each is now a CaseError at model naming the method and what it gave."""
    import threading

    class GradLacksAKey(ridge.RidgeNet):
        def grad(self, X, y):
            g = super().grad(X, y)
            return {k: v for k, v in list(g.items())[1:]}

    class LossIsText(ridge.RidgeNet):
        def loss(self, X, y):
            return "zero"

    class TooManyLosses(ridge.RidgeNet):
        def per_sample_losses(self, X, y):
            return np.zeros(len(X) + 1)

    class HoldsALock(ridge.RidgeNet):
        def __init__(self):
            super().__init__()
            self.lock = threading.Lock()

    cases = [(GradLacksAKey(), "grad() must give every parameter of get_params()"),
             (LossIsText(), "loss() must give numbers, found str 'zero'"),
             (TooManyLosses(), "per_sample_losses() on"),
             (HoldsALock(), "the network cannot be copied with copy.deepcopy")]
    for network, message in cases:
        with pytest.raises(CaseError) as info:
            shockflow.forecast(network, data, {"lr": 0.02, "steps": 100}, out=tmp_path / "o", figures=False)
        text = str(info.value)
        assert text.startswith(f"network '{type(network).__name__}': model: ") and message in text, text
        assert f"model '{type(network).__name__}'" not in text
