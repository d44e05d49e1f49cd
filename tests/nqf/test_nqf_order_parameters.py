"""Closed (μ, M) SGD dynamics: exact against explicit units of the quadratic form, exact under
compression to d' = k_V + 1 units, and against SGD on the actual network (agree while small, then part)."""

import numpy as np
import pytest

from shockflow import models
from shockflow.data import Dataset
from shockflow.nqf.experiments import order_parameters_vs_network
from shockflow.nqf.order_parameters import (
    OrderState, compress, compressed_form, simulate_order_parameters, simulate_units,
)
from shockflow.nqf.structure_matrices import structure_matrices, unit_matrix


def _setup(name="moe", **kw):
    rng = np.random.default_rng(3)
    net = models.build(name, loss="mse", init_scale=0.3, seed=2, **kw)
    X = rng.standard_normal((12, 3))
    y = rng.standard_normal(12)
    return net, X, y, structure_matrices(net, X), rng


@pytest.mark.parametrize("name, kw", [("moe", dict(input_dim=3, experts=4)),
                                      ("mlp", dict(input_dim=3, width=5, activation="sigmoid", bias=True))])
def test_closed_update_equals_explicit_units(name, kw):
    """μ and M from the closed update (docs/theory.md §2, with g, B and weight decay) equal those of explicit units."""
    net, X, y, form, rng = _setup(name, **kw)
    assert form.has_linear_terms  # exercises the v = Σ ℓ'(g + 2Bμ) terms
    W0 = unit_matrix(net)
    batches = [rng.choice(12, 4, replace=False) for _ in range(60)]
    tr = simulate_order_parameters(form, y, OrderState.from_units(W0), 0.05, 60, batches=batches, weight_decay=0.1)
    W = simulate_units(form, y, W0, 0.05, 60, batches=batches, weight_decay=0.1)
    scale = np.max(np.abs(W @ W.T))
    assert np.max(np.abs(tr.M[-1] - W @ W.T)) < 1e-12 * max(scale, 1)
    assert np.max(np.abs(tr.mu[-1] - W.sum(axis=1))) < 1e-12
    assert np.max(np.abs(tr.M[-1] - W0 @ W0.T)) > 1e-2  # it moved


def test_compression_reproduces_the_dynamics():
    """d' = k_V + 1 units with A·d'/d, η·d/d', λ·d'/d and M' = (d/d')M follow the d-unit dynamics exactly."""
    net, X, y, form, rng = _setup("moe", input_dim=3, experts=5)
    p, d = form.unit_dim, form.units
    # a start whose unit covariance has rank 2
    W0 = 0.1 * rng.standard_normal((p, 1)) + 0.05 * rng.standard_normal((p, 2)) @ rng.standard_normal((2, d))
    c = compress(OrderState.from_units(W0), d)
    assert (c.k_V, c.units) == (2, 3)
    assert np.allclose(c.W.sum(axis=1), W0.sum(axis=1)) and np.allclose(c.W @ c.W.T, W0 @ W0.T * d / 3)
    batches = [rng.choice(12, 4, replace=False) for _ in range(80)]
    ref = simulate_order_parameters(form, y, OrderState.from_units(W0), 0.05, 80, batches=batches, weight_decay=0.05)
    Wc = simulate_units(compressed_form(form, c), y, c.W, 0.05 * c.lr_scale, 80, batches=batches,
                        weight_decay=0.05 * c.A_scale)
    assert np.max(np.abs(Wc @ Wc.T / c.M_scale - ref.M[-1])) < 1e-12
    assert np.max(np.abs(Wc.sum(axis=1) - ref.mu[-1])) < 1e-12
    with pytest.raises(ValueError, match="at least k_V \\+ 1 = 3 units"):
        compress(OrderState.from_units(W0), d, units=2)


@pytest.mark.parametrize("activation, departs_by", [("tanh", 80), ("gelu", 130)])
def test_network_agrees_while_small_then_departs(activation, departs_by):
    """SGD on the MLP (training loop, same batches) against the closed update: M agrees to < 2 % while the
    largest unit norm stays below 0.1, and the error passes 10 % once the units have grown to O(1)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((16, 3))
    y = X @ np.array([1.0, -0.5, 0.25])
    net = models.build("mlp", input_dim=3, width=4, activation=activation, loss="mse", init_scale=0.01, seed=1)
    r = order_parameters_vs_network(net, Dataset(X, y), lr=0.05, steps=departs_by, batch_size=4, weight_decay=0.01)
    err, norm = np.asarray(r["relative_error"]), np.asarray(r["unit_norm"])
    small = norm < 0.1
    assert small[:10].all() and np.max(err[small]) < 0.02
    assert r["first_step_above"] is not None
    assert r["unit_norm_at_departure"] > 20 * r["initial_unit_norm"]


def test_nonfinite_dynamics_name_the_step():
    net, X, y, form, rng = _setup("moe", input_dim=3, experts=4)
    with pytest.raises(FloatingPointError, match="diverged at step"):
        simulate_order_parameters(form, 1e3 * y, OrderState.from_units(unit_matrix(net)), 50.0, 200)
