"""shockflow.geometry.mean_field: permutation quotient, McKean–Vlasov velocity field on neuron space."""

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.geometry import GeometryError


def _setup(activation="tanh", m=20, seed=0):
    rng = np.random.default_rng(seed)
    net = models.build("mean_field", input_dim=1, width=m, activation=activation, init_scale=1.0, seed=seed)
    X = rng.normal(size=(50, 1))
    y = np.sin(2 * X[:, 0])
    return net, X, y


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_velocity_field_at_the_neurons_matches_gradient_steps(activation):
    net, X, y = _setup(activation)
    geo = geometry.build("mean_field", model=net)
    theta = geo.neurons(net.params)
    eta = 1e-6
    _, g = net.loss_and_grad(X, y)
    fwd = geo.neurons({k: v - eta * g[k] for k, v in net.params.items()})
    bwd = geo.neurons({k: v + eta * g[k] for k, v in net.params.items()})
    measured = (fwd - bwd) / (2 * eta)
    np.testing.assert_allclose(geo.velocity_field(theta, X, y), measured, rtol=1e-6, atol=1e-12)
    # the field is -(1/m) ∇ψ: compare with central differences of the potential
    h = 1e-6
    num = np.stack([(geo.potential(theta + h * e, X, y) - geo.potential(theta - h * e, X, y)) / (2 * h) for e in np.eye(2)], -1)
    np.testing.assert_allclose(geo.velocity_field(theta, X, y), -num / net.width, rtol=1e-6, atol=1e-12)


def test_quotient_is_permutation_invariant_and_conserves_balance_for_relu():
    net, X, y = _setup("relu")
    geo = geometry.build("mean_field", model=net)
    perm = np.random.default_rng(1).permutation(net.width)
    shuffled = {"a": net.params["a"][perm], "W": net.params["W"][perm]}
    np.testing.assert_array_equal(geo.coordinates(shuffled), geo.coordinates(net.params))
    assert geo.chart_loss(geo.coordinates(shuffled), X, y) == pytest.approx(net.loss(X, y), rel=1e-12)
    _, g = net.loss_and_grad(X, y)
    changes = []
    for eta in (1e-2, 5e-3):
        step = {k: v - eta * g[k] for k, v in net.params.items()}
        # compare per unit (unit order: conserved() sorts, so compare the unsorted balance)
        b0 = net.params["a"] ** 2 - net.params["W"][:, 0] ** 2
        b1 = step["a"] ** 2 - step["W"][:, 0] ** 2
        changes.append(np.abs(b1 - b0).max())
    assert changes[0] / changes[1] == pytest.approx(4.0, rel=0.05)
    assert "balance" in geo.conserved(net.params)


def test_density_and_continuity_problem():
    net, X, y = _setup()
    geo = geometry.build("mean_field", model=net, extent=4.0)
    grid, rho = geo.density(net.params, (16, 16))
    assert rho.sum() * grid.cell_volume == pytest.approx(1.0)
    prob = geo.continuity_problem((16, 16), X, y, temperature=0.01)
    assert prob.face_velocity[0].shape == (17, 16) and prob.face_velocity[1].shape == (16, 17)
    # the face velocity is the field at the face centre
    pt = np.array([grid.faces(0)[3], grid.centers(1)[5]])
    assert prob.face_velocity[0][3, 5] == pytest.approx(geo.velocity_field(pt, X, y)[0], rel=1e-12)


def test_bad_input_names_the_neuron():
    net, X, y = _setup()
    geo = geometry.build("mean_field", model=net, extent=0.5)
    with pytest.raises(GeometryError, match=r"neurons: point \(\d+,\) = .* lies outside the chart"):
        geo.density(net.params, 8)
    with pytest.raises(GeometryError, match=r"points: expected neuron configurations \(\.\.\., 20, 2\)"):
        geo.section(np.zeros((3, 2)))
    with pytest.raises(GeometryError, match="works with models 'mean_field', found 'mlp'"):
        geometry.build("mean_field", model=models.build("mlp", input_dim=1, width=3))
