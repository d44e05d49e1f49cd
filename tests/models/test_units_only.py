"""A network of some of its units (shockflow.models.units.units_only): where the units left out are silent (zero
readouts), its loss and its gradient on the units kept are the whole network's; else there is none.  The modes'
search uses it for its gradients (shockflow.geometry.auto.find_modes), with the same rates."""

from __future__ import annotations

import numpy as np
import pytest

from shockflow import models
from shockflow.models.units import unit_layout, units_only


def _silent_but(net, keep, rng):
    """Flat parameters with random input weights and biases everywhere and readouts only on the units ``keep``."""
    layout = unit_layout(net)
    theta = rng.normal(size=net.num_parameters)
    readout = layout.index[:, -net.output_dim:]
    others = np.setdiff1d(np.arange(layout.units), keep)
    theta[readout[others]] = 0.0
    return theta, layout


@pytest.mark.parametrize("activation, bias, outputs", [("tanh", False, 5), ("erf", True, 1), ("sigmoid", True, 3)])
def test_the_units_kept_give_the_whole_networks_loss_and_gradient_where_the_others_are_silent(activation, bias,
                                                                                              outputs):
    rng = np.random.default_rng(3)
    net = models.build("mlp", input_dim=7, width=12, activation=activation, bias=bias, output_dim=outputs, seed=1)
    X = rng.normal(size=(256, 7))
    y = rng.normal(size=(256, outputs)) if outputs > 1 else rng.normal(size=256)
    keep = [4, 9]
    theta, layout = _silent_but(net, keep, rng)
    small, at = units_only(net, theta, keep)
    assert small.width == 2 and small.spec()["width"] == 2 and at.size == small.num_parameters
    net.set_parameter_vector(theta)
    L, G = net.loss_and_grad(X, y)
    l, g = small.loss_and_grad(X, y)
    assert l == pytest.approx(L, rel=1e-13)
    full, part = net.grad_vector(G), small.grad_vector(g)
    inner = unit_layout(small)
    for i, unit in enumerate(keep):
        np.testing.assert_allclose(part[inner.index[i]], full[layout.index[unit]], rtol=1e-12, atol=1e-15)
    assert np.array_equal(net.parameter_vector(), theta)           # the whole network is left as it was


def test_no_network_of_some_units_where_one_left_out_speaks_or_the_family_scales_with_the_width():
    rng = np.random.default_rng(0)
    net = models.build("mlp", input_dim=4, width=6, activation="tanh", output_dim=2, seed=0)
    theta, layout = _silent_but(net, [0, 1], rng)
    theta[layout.index[3, -1]] = 1e-300                             # unit 3 speaks, however little
    assert units_only(net, theta, [0, 1]) is None
    mean_field = models.build("mean_field", input_dim=4, width=6, activation="tanh", seed=0)
    assert units_only(mean_field, np.zeros(mean_field.num_parameters), [0, 1]) is None
    linear2 = models.build("linear2", input_dim=4, hidden=6, output_dim=2, seed=0)
    assert units_only(linear2, np.zeros(linear2.num_parameters), [0, 1]) is None


@pytest.mark.parametrize("case_name", ["mlp-tanh-teacher", "mlp-erf-frozen-bias"])
def test_the_modes_search_finds_the_same_rates_with_two_units_as_with_all(case_name, monkeypatch):
    import shockflow.models.units as units
    from shockflow.cases import load_case
    from shockflow.geometry.auto import find_modes
    from shockflow.runners.training import build_model_and_data

    case = load_case(case_name, ["data.n=512"])
    model, _, data, _ = build_model_and_data(case, 0)
    frozen = case.settings.training.train_settings(0).frozen
    calls = []
    real = units.units_only
    monkeypatch.setattr(units, "units_only", lambda *a: calls.append(1) or real(*a))
    fast = find_modes(model, data.X, data.y, frozen=frozen)
    monkeypatch.setattr(units, "units_only", lambda *a: None)
    slow = find_modes(model, data.X, data.y, frozen=frozen)
    assert calls and fast.rates.size == slow.rates.size >= 4
    np.testing.assert_allclose(fast.rates, slow.rates, rtol=1e-13)
    np.testing.assert_allclose(fast.spectrum, slow.spectrum, rtol=1e-12, atol=1e-13 * abs(slow.spectrum).max())
    np.testing.assert_allclose(np.abs(np.sum(fast.directions * slow.directions, axis=0)), 1.0, atol=1e-12)
