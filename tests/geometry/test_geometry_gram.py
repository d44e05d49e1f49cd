"""shockflow.geometry.gram: M = WᵀW, mobility 2(GM + MG), mode strengths with mobility 4z (docs/theory.md §1, §2)."""

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.geometry import GeometryError
from shockflow.geometry.gram import gram_mobility


def _gd_velocity(geo, model, X, y, eta=1e-6):
    _, grads = model.loss_and_grad(X, y)
    fwd = {k: v - eta * grads[k] for k, v in model.params.items()}
    bwd = {k: v + eta * grads[k] for k, v in model.params.items()}
    return (geo.coordinates(fwd) - geo.coordinates(bwd)) / (2 * eta)


def _set(model, params, b=None):
    for k in model.params:
        model.params[k][...] = params[k] if b is None else params[k][b]


@pytest.mark.parametrize("coordinate", ["z", "r"])
def test_mode_velocity_matches_gradient_steps_of_a_quadratic_network(coordinate):
    rng = np.random.default_rng(0)
    net = models.build("quadratic", input_dim=3, width=3, form="trace", init_scale=0.7, seed=1)
    X = rng.normal(size=(40, 3))
    y = rng.normal(size=40)
    P, _ = np.linalg.qr(rng.normal(size=(3, 3)))  # a generic basis: the data do not commute with it
    geo = geometry.build("gram", model=net, modes=(0, 2), basis=P, coordinate=coordinate, extent=4.0)
    point = np.array([0.8, 0.3]) if coordinate == "z" else np.sqrt([0.8, 0.3])
    _set(net, geo.section(point))  # M diagonal in P at this instant
    np.testing.assert_allclose(geo.coordinates(net.params), point, rtol=1e-12)
    measured = _gd_velocity(geo, net, X, y)
    predicted = geo.velocity(point, X, y)
    np.testing.assert_allclose(predicted, measured, rtol=1e-5)
    if coordinate == "z":  # the mobility 4z matters: -∇L̄ alone is off
        assert np.linalg.norm(-geo.chart_gradient(point, X, y) - measured) > 0.1 * np.linalg.norm(measured)


def test_full_matrix_mobility_matches_gradient_steps():
    """Ṁ = -2(GM + MG) for any M, with G = ∂L̄/∂M from central differences of the trace-form loss."""
    rng = np.random.default_rng(2)
    net = models.build("quadratic", input_dim=3, width=2, form="trace", init_scale=1.0, seed=3)
    X = rng.normal(size=(30, 3))
    y = rng.normal(size=30)
    W = net.params["W"].copy()
    M = W.T @ W
    d, p = 3, 2

    def loss_of_M(Mx):
        # f = (xᵀ M x - Tr M)/(d sqrt p), half-MSE
        f = (np.einsum("ni,ij,nj->n", X, Mx, X) - np.trace(Mx)) / (d * np.sqrt(p))
        return 0.5 * np.mean((f - y) ** 2)

    G = np.zeros((3, 3))
    h = 1e-6
    for i in range(3):
        for j in range(3):
            E = np.zeros((3, 3))
            E[i, j] = E[j, i] = h
            G[i, j] = (loss_of_M(M + E) - loss_of_M(M - E)) / (2 * h) / (1 if i == j else 2)
    _, grads = net.loss_and_grad(X, y)
    eta = 1e-6
    Wf, Wb = W - eta * grads["W"], W + eta * grads["W"]
    measured = (Wf.T @ Wf - Wb.T @ Wb) / (2 * eta)
    np.testing.assert_allclose(gram_mobility(M, G), measured, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("name", ["phase_retrieval", "diagonal"])
def test_vector_models(name):
    rng = np.random.default_rng(5)
    net = models.build(name, input_dim=4, init_scale=0.5, seed=2)
    X = rng.normal(size=(50, 4))
    y = rng.normal(size=50) ** 2 if name == "phase_retrieval" else X @ rng.normal(size=4)
    geo = geometry.build("gram", model=net, modes=(0,), extent=3.0)
    point = np.array([0.6])
    _set(net, geo.section(point))
    np.testing.assert_allclose(_gd_velocity(geo, net, X, y), geo.velocity(point, X, y), rtol=1e-5)
    # batched loss = model loss at the section, point by point
    points = np.array([[0.0], [0.4], [2.5]])
    batch = geo.section(points)
    losses = geo.chart_loss(points, X, y)
    for b in range(3):
        _set(net, batch, b)
        assert losses[b] == pytest.approx(net.loss(X, y), rel=1e-12)


def test_metric_volume_and_degeneration():
    net = models.build("diagonal", input_dim=2, init_scale=0.5, seed=0)
    geo = geometry.build("gram", model=net, modes=(0, 1), extent=2.0)
    pts = np.array([[0.5, 2.0], [0.0, 1.0]])
    np.testing.assert_allclose(geo.mobility(pts)[0], np.diag([2.0, 8.0]))
    np.testing.assert_allclose(geo.metric(pts)[0], np.diag([0.5, 0.125]))
    assert geo.volume_density(pts)[0] == pytest.approx(1 / 4.0)
    assert geo.volume_density(pts)[1] == np.inf and np.all(np.isinf(geo.metric(pts)[1]))
    assert "z_k = 0" in geo.chart.degenerate
    r = geometry.build("gram", model=net, modes=(0, 1), coordinate="r", extent=2.0)
    np.testing.assert_allclose(r.mobility(np.sqrt(pts)), np.broadcast_to(np.eye(2), (2, 2, 2)))


def test_z_and_r_charts_give_the_same_local_entropy():
    """The same double well in z (mobility 4z) and r = sqrt z (flat): solutions agree to discretisation accuracy."""
    net = models.build("diagonal", input_dim=1, init="constant", init_scale=0.1, seed=0)
    X = np.ones((1, 1))
    y = np.array([1.0])  # L̄(z) = ½(z/4 - 1)²: the ridge at z = 0, the well at z = 4
    gz = geometry.build("gram", model=net, extent=6.0)
    gr = geometry.build("gram", model=net, coordinate="r", extent=6.0)
    pz = gz.chart_problem(200, X, y)
    pr = gr.chart_problem(800, X, y)
    np.testing.assert_allclose(pz.u0, 0.5 * (pz.grid.centers() / 4 - 1) ** 2, rtol=1e-12)
    uz = pz.solve([0.5], nu=0.02).u[-1]
    ur = pr.solve([0.5], nu=0.02).u[-1]
    z = pz.grid.centers()
    away = z > 0.2
    err = np.abs(uz - np.interp(np.sqrt(z), pr.grid.centers(), ur))
    assert err[away].max() < 2e-4
    assert err.max() < 5e-3  # first cells next to the degenerate end are first-order accurate


def test_bad_input():
    net = models.build("quadratic", input_dim=3, width=2, form="sum", seed=0)
    with pytest.raises(GeometryError, match="form='trace'"):
        geometry.build("gram", model=net)
    net = models.build("quadratic", input_dim=3, width=1, form="trace", seed=0)
    with pytest.raises(GeometryError, match=r"modes: expected 1 or 2 distinct mode indices in 0..2, found \(0, 5\)"):
        geometry.build("gram", model=net, modes=(0, 5))
    with pytest.raises(GeometryError, match="basis: expected an orthogonal"):
        geometry.build("gram", model=net, basis=np.ones((3, 3)))
    geo = geometry.build("gram", model=net, modes=(0, 1), basis=np.eye(3), extent=1.0)
    with pytest.raises(GeometryError, match=r"point \(0,\) = \[0.5, 0.5\] switches on more than p = 1 modes"):
        geo.section(np.array([[0.5, 0.5]]))
    with pytest.raises(GeometryError, match=r"lies outside the chart \[0, 1\] x \[0, 1\]"):
        geo.section(np.array([[-0.5, 0.0]]))


def test_burgers_on_the_chart_is_the_gradient_of_the_hj_solution():
    """problem.solve_burgers (p = ∂_z u, conservation form) against ∂_z of problem.solve (HJ)."""
    net = models.build("diagonal", input_dim=1, init="constant", init_scale=0.1, seed=0)
    X, y = np.ones((1, 1)), np.array([1.0])
    geo = geometry.build("gram", model=net, extent=6.0)
    problem = geo.chart_problem(300, X, y)
    p = problem.solve_burgers([0.3], X, y, nu=0.05).p[-1]
    u = problem.solve([0.3], nu=0.05).u[-1]
    z = problem.grid.centers()
    du = np.gradient(u, problem.grid.dx[0])
    inner = (z > 0.3) & (z < 5.5)
    assert np.abs(p - du)[inner].max() < 5e-3 * np.abs(du[inner]).max()
    np.testing.assert_allclose(problem.solve_burgers([0.0], X, y).p[0], z / 16 - 0.25, rtol=1e-10)  # ∂_z ½(z/4 - 1)²
