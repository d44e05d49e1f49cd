"""shockflow.geometry.sphere (normalised layer, mobility 1/|w|²) and .attention (B = W_Q W_Kᵀ, mobility 2σ)."""

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.geometry import GeometryError
from shockflow.geometry.attention import attention_mobility
from shockflow.geometry.batched_loss import batched_loss


def _set(model, params):
    for k in model.params:
        model.params[k][...] = params[k]


def test_sphere_great_circle_velocity_matches_normalised_gradient_steps():
    rng = np.random.default_rng(0)
    net = models.build("mlp", input_dim=2, width=3, activation="tanh", init_scale=1.0, seed=1)
    net.params["W"][...] *= 2.5  # |w|² far from 1: the mobility 1/|w|² is visible
    X = rng.normal(size=(40, 2))
    y = np.tanh(X[:, 0] - X[:, 1])
    geo = geometry.build("sphere", model=net, parameter="W", gain=1.5)
    theta = geo.coordinates(net.params)
    assert theta[0] == pytest.approx(0.0, abs=1e-12) or theta[0] == pytest.approx(2 * np.pi, abs=1e-12)
    eta = 1e-6
    _, g = geo.loss_and_grad(net.params, X, y)
    fwd = {k: v - eta * g[k] for k, v in net.params.items()}
    bwd = {k: v + eta * g[k] for k, v in net.params.items()}
    dtheta = (geo.coordinates(fwd) - geo.coordinates(bwd) + np.pi) % (2 * np.pi) - np.pi
    measured = dtheta / (2 * eta)
    predicted = geo.velocity(theta, X, y)
    np.testing.assert_allclose(predicted, measured, rtol=1e-5)
    norm2 = np.sum(net.params["W"] ** 2)
    assert geo.mobility(theta)[0, 0] == pytest.approx(1 / norm2)
    # |w|² is conserved to O(η²) by a gradient step of the normalised layer (exactly η²|∇L|², w·∇L = 0)
    for eta in (1e-2, 5e-3):
        step = {k: v - eta * g[k] for k, v in net.params.items()}
        assert geo.conserved(step)["norm2"] - norm2 == pytest.approx(eta**2 * np.sum(g["W"] ** 2), rel=1e-8)


def test_sphere_chart_loss_is_the_normalised_network_loss_and_is_periodic():
    rng = np.random.default_rng(1)
    net = models.build("phase_retrieval", input_dim=3, init_scale=1.0, seed=0)
    X = rng.normal(size=(30, 3))
    y = rng.normal(size=30) ** 2
    geo = geometry.build("sphere", model=net, parameter="w", gain=0.7)
    th = np.array([[0.0], [1.0], [2 * np.pi]])
    losses = geo.chart_loss(th, X, y)
    assert losses[0] == pytest.approx(losses[2], rel=1e-12)
    u = geo.directions(th[1])
    clone = net.copy()
    clone.params["w"][...] = 0.7 * u
    assert losses[1] == pytest.approx(clone.loss(X, y), rel=1e-12)
    problem = geo.mesh_problem(3, X, y)
    v = problem.mesh.vertices[5] / np.linalg.norm(problem.mesh.vertices[5])
    clone.params["w"][...] = 0.7 * v
    assert problem.u0[5] == pytest.approx(clone.loss(X, y), rel=1e-12)
    assert problem.time_scale == pytest.approx(1 / np.sum(net.params["w"] ** 2))
    sol = problem.solve([0.05], nu=0.05)
    # comparison principle on the sphere: min L̄ <= u <= max L̄, and the envelope lowers the top
    assert problem.u0.min() - 1e-12 <= sol.values[-1].min() and sol.values[-1].max() < problem.u0.max()


def _attention_setup(dk=2, seed=0):
    rng = np.random.default_rng(seed)
    net = models.build("attention_qk", d_model=3, heads=1, d_k=dk, init_scale=1.0, seed=seed)
    X = rng.normal(size=(25, 4, 3))
    y = rng.normal(size=25)
    return net, X, y


def test_attention_singular_value_velocity_matches_gradient_steps():
    net, X, y = _attention_setup()
    geo = geometry.build("attention", model=net, modes=(0, 1), extent=5.0)
    point = np.array([1.3, 0.4])
    _set(net, geo.section(point))  # balanced weights with the reference singular vectors
    np.testing.assert_allclose(geo.coordinates(net.params), point, rtol=1e-12)
    np.testing.assert_allclose(geo.conserved(net.params)["balance"], 0.0, atol=1e-12)
    eta = 1e-6
    _, g = net.loss_and_grad(X, y)
    fwd = {k: v - eta * g[k] for k, v in net.params.items()}
    bwd = {k: v + eta * g[k] for k, v in net.params.items()}
    measured = (geo.coordinates(fwd) - geo.coordinates(bwd)) / (2 * eta)
    np.testing.assert_allclose(geo.velocity(point, X, y), measured, rtol=1e-5)
    # balance W_QᵀW_Q - W_KᵀW_K is conserved to O(η²)
    eta = 1e-2
    c = [np.abs(geo.conserved({k: v - e * g[k] for k, v in net.params.items()})["balance"]).max() for e in (eta, eta / 2)]
    assert c[0] / c[1] == pytest.approx(4.0, rel=0.05)


def test_attention_full_matrix_mobility():
    """Ḃ = -((BBᵀ)^{1/2} G + G(BᵀB)^{1/2}) at a balanced point, G = ∂L̄/∂B by central differences."""
    net, X, y = _attention_setup(dk=3, seed=2)
    geo = geometry.build("attention", model=net, modes=(0,), extent=5.0)
    _set(net, geo.section(np.array([0.9])))
    B = geo.product(net.params)
    h = 1e-6
    batch = {"W_Q": [], "W_K": []}
    for i in range(3):
        for j in range(3):
            for sgn in (1, -1):
                E = np.zeros((3, 3))
                E[i, j] = sgn * h
                batch["W_Q"].append((B + E)[None])  # W_Q = B + E, W_K = I gives the same scores
                batch["W_K"].append(np.eye(3)[None])
    vals = batched_loss(net, {k: np.array(v) for k, v in batch.items()}, X, y).reshape(3, 3, 2)
    G = (vals[..., 0] - vals[..., 1]) / (2 * h)
    eta = 1e-6
    _, g = net.loss_and_grad(X, y)
    Qf, Kf = net.params["W_Q"][0] - eta * g["W_Q"][0], net.params["W_K"][0] - eta * g["W_K"][0]
    Qb, Kb = net.params["W_Q"][0] + eta * g["W_Q"][0], net.params["W_K"][0] + eta * g["W_K"][0]
    measured = (Qf @ Kf.T - Qb @ Kb.T) / (2 * eta)
    np.testing.assert_allclose(attention_mobility(B, G), measured, rtol=1e-4, atol=1e-8)


def test_bad_input():
    net, X, y = _attention_setup()
    with pytest.raises(GeometryError, match=r"head: expected a head index in 0..0, found 2"):
        geometry.build("attention", model=net, head=2)
    with pytest.raises(GeometryError, match=r"modes: expected 1 or 2 distinct singular-value indices in 0..1"):
        geometry.build("attention", model=net, modes=(0, 2))
    with pytest.raises(GeometryError, match="has no array 'v'; it has W_Q, W_K"):
        geometry.build("sphere", model=net, parameter="v")
    net = models.build("phase_retrieval", input_dim=3, seed=0)
    net.params["w"][...] = 0.0
    with pytest.raises(GeometryError, match=r"params\['w'\]: the reference weight is zero"):
        geometry.build("sphere", model=net)
