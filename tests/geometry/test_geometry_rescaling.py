"""shockflow.geometry.rescaling: q = a w, conserved a² - |w|², mobility a²I + qqᵀ/a² (docs/theory.md §1)."""

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.geometry import GeometryError
from shockflow.geometry.rescaling import rescaling_mobility


def _data(d, n=60, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.maximum(X @ rng.normal(size=d), 0.0) - 0.3 * X[:, 0]
    return X, y


def _gd_velocity(geo, model, X, y, eta=1e-6):
    """Quotient velocity from two real gradient steps ∓η on the parameters (central difference)."""
    _, grads = model.loss_and_grad(X, y)
    fwd = {k: v - eta * grads[k] for k, v in model.params.items()}
    bwd = {k: v + eta * grads[k] for k, v in model.params.items()}
    return (geo.coordinates(fwd) - geo.coordinates(bwd)) / (2 * eta)


@pytest.mark.parametrize("bias", [False, True])
def test_predicted_velocity_matches_gradient_steps_of_a_relu_mlp(bias):
    net = models.build("mlp", input_dim=2, width=3, activation="relu", bias=bias, init_scale=1.0, seed=4)
    if bias:
        net.params["b"][...] = [0.2, -0.1, 0.3]
    X, y = _data(2)
    for unit in range(3):
        geo = geometry.build("rescaling", model=net, unit=unit, extent=5.0)
        q = geo.coordinates(net.params)
        predicted = geo.velocity(q, X, y)
        measured = _gd_velocity(geo, net, X, y)
        np.testing.assert_allclose(predicted, measured, rtol=1e-5, atol=1e-8 * np.abs(measured).max())
        # the Euclidean velocity -∇_q L̄ is wrong by the metric: the test can tell them apart
        assert np.linalg.norm(geo.chart_gradient(q, X, y) + measured) > 1e-3 * np.linalg.norm(measured)


def test_conserved_quantity_is_conserved_by_gradient_flow_to_second_order():
    net = models.build("linear2", input_dim=1, hidden=2, init_scale=0.8, seed=2)
    X, y = _data(1)
    geo = geometry.build("rescaling", model=net, unit=1, extent=3.0)
    c0 = geo.conserved(net.params)["c"]
    q0 = geo.coordinates(net.params)
    changes = []
    for eta in (1e-2, 5e-3):
        _, g = net.loss_and_grad(X, y)
        step = {k: v - eta * g[k] for k, v in net.params.items()}
        changes.append(abs(geo.conserved(step)["c"] - c0))
    assert changes[0] / changes[1] == pytest.approx(4.0, rel=0.05)  # O(η²): exact for the flow
    assert abs(geo.coordinates(step) - q0) > 100 * changes[1]  # while q moves at O(η)


def test_section_realises_the_coordinates_and_the_batched_loss_is_the_model_loss():
    net = models.build("mlp", input_dim=2, width=3, activation="relu", init_scale=1.0, seed=5)
    X, y = _data(2)
    geo = geometry.build("rescaling", model=net, unit=2, extent=2.0)
    rng = np.random.default_rng(0)
    points = rng.uniform(-2, 2, size=(7, 2))
    params = geo.section(points)
    losses = geo.chart_loss(points, X, y)
    c = geo.conserved(net.params)["c"]
    for b in range(7):
        one = {k: v[b] for k, v in params.items()}
        np.testing.assert_allclose(geo.coordinates(one), points[b], rtol=1e-12, atol=1e-14)
        assert geo.conserved(one)["c"] == pytest.approx(c, abs=1e-12)
        clone = net.copy()
        for k in clone.params:
            clone.params[k][...] = one[k]
        assert losses[b] == pytest.approx(clone.loss(X, y), rel=1e-12)


def test_mobility_formula_and_its_degeneration():
    q = np.array([[0.3], [-1.2], [0.0]])
    for c in (0.5, 0.0, -0.4):
        A = rescaling_mobility(q, c)[:, 0, 0]
        np.testing.assert_allclose(A[:2], np.sqrt(c * c + 4 * q[:2, 0] ** 2), rtol=1e-12)  # a² + w² in 1-D
    assert rescaling_mobility(np.zeros((1, 2)), 0.0)[0] == pytest.approx(np.zeros((2, 2)))
    net = models.build("linear2", input_dim=1, hidden=1, init_scale=0.5, seed=0)
    net.params["W1"][...] = 0.3
    net.params["W2"][...] = 0.3  # balanced: c = 0, the mobility 2|q| vanishes at q = 0
    geo = geometry.build("rescaling", model=net, unit=0, extent=1.0)
    assert geo.c == 0.0 and "q = 0" in geo.chart.degenerate
    assert geo.volume_density(np.array([[0.0]]))[0] == np.inf
    np.testing.assert_allclose(geo.mobility(np.array([[0.25]]))[0, 0, 0], 0.5)


def test_chart_problem_solves_on_the_degenerate_chart():
    """Balanced 1-D linear unit fitting s: L̄ = ½(s - q)² E[x²]; the HJ solve stays finite and bounded."""
    net = models.build("linear2", input_dim=1, hidden=1, init_scale=0.5, seed=0)
    net.params["W1"][...] = 0.1
    net.params["W2"][...] = 0.1
    X = np.linspace(-1, 1, 21)[:, None]
    y = 0.8 * X[:, 0]
    geo = geometry.build("rescaling", model=net, unit=0, extent=1.5)
    problem = geo.chart_problem(120, X, y)
    q = problem.grid.centers()
    np.testing.assert_allclose(problem.u0, 0.5 * np.mean(X[:, 0] ** 2) * (0.8 - q) ** 2, rtol=1e-12)
    sol = problem.solve([0.5], nu=0.0, derivative="first_order")
    # inviscid: u is the Moreau envelope inf_y [L̄(y) + d_g(q, y)²/(2γ)] <= L̄ and keeps L̄'s minimiser
    assert np.all(np.isfinite(sol.u[-1]))
    assert np.all(sol.u[-1] <= problem.u0 + 1e-12)
    assert abs(q[np.argmin(sol.u[-1])] - 0.8) <= problem.grid.dx[0]


def test_bad_input_names_the_array_or_point():
    net = models.build("mlp", input_dim=2, width=3, activation="tanh", seed=0)
    with pytest.raises(GeometryError, match="positively homogeneous activation"):
        geometry.build("rescaling", model=net)
    net = models.build("mlp", input_dim=2, width=3, activation="relu", seed=0)
    with pytest.raises(GeometryError, match=r"unit: expected a unit index in 0..2, found 7"):
        geometry.build("rescaling", model=net, unit=7)
    geo = geometry.build("rescaling", model=net, unit=0, extent=1.0)
    bad = dict(net.params)
    bad["W"] = np.zeros((3, 3))
    with pytest.raises(GeometryError, match=r"params\['W'\]: expected shape \(3, 2\)"):
        geo.coordinates(bad)
    with pytest.raises(GeometryError, match=r"point \(1,\) = \(0.5, 3\) lies outside the chart"):
        geo.section(np.array([[0.0, 0.0], [0.5, 3.0]]))
    with pytest.raises(GeometryError, match=r"expected chart points of shape \(\.\.\., 2\)"):
        geo.chart_loss(np.zeros((4, 3)), np.zeros((2, 2)), np.zeros(2))
    with pytest.raises(GeometryError, match="works with models 'mlp', 'linear2', 'cnn1d', 'attention_qk', found 'quadratic'"):
        geometry.build("rescaling", model=models.build("quadratic", input_dim=2, width=2))


def test_two_dimensional_chart_problem_with_the_full_rescaling_metric():
    """q ∈ R² (input and bias) of a ReLU unit: off-diagonal mobility a²I + qqᵀ/a² through chart_hj."""
    net = models.build("mlp", input_dim=1, width=2, activation="relu", bias=True, init_scale=1.0, seed=3)
    X, y = _data(1, n=40, seed=2)
    geo = geometry.build("rescaling", model=net, unit=0, extent=1.5)
    problem = geo.chart_problem((24, 24), X, y)
    A00, A01, A11 = problem.mobility(*problem.grid.mesh())
    assert np.abs(A01).max() > 0.1  # the metric is genuinely non-diagonal
    centres = np.stack(problem.grid.mesh(), axis=-1)
    np.testing.assert_allclose(problem.u0, geo.chart_loss(centres, X, y), rtol=1e-12)
    sol = problem.solve([0.2], nu=0.01, derivative="first_order")
    u = sol.u[-1]
    # comparison principle: constants are solutions, so min L̄ <= u <= max L̄; the envelope lowers the top
    assert problem.u0.min() - 1e-12 <= u.min() and u.max() < problem.u0.max()


@pytest.mark.parametrize("c_sign", [-1.0, 1.0])
def test_the_section_follows_the_flow_through_q_zero(c_sign):
    """Along the flow the factor that cannot vanish keeps its sign: ``w`` for ``c < 0`` (|w|² = a² − c ≥ |c|),
    ``a`` for ``c > 0``.  The section is continuous through ``q = 0``, and for ``c < 0`` agrees with real gradient
    steps that carry a unit across it (a ReLU unit keeps the half-space it sees; its output weight flips)."""
    net = models.build("mlp", input_dim=1, width=2, activation="relu", init_scale=1.0, seed=3)
    a0, w0 = (0.1, 0.5) if c_sign < 0 else (0.5, 0.1)
    net.params["a"][0], net.params["W"][0, 0] = a0, w0
    net.params["a"][1], net.params["W"][1, 0] = 0.0, 0.0   # the other unit at its saddle (it stays there)
    X, _ = _data(1, n=200)
    y = -0.5 * np.maximum(X[:, 0], 0.0)   # the unit's coefficient must change sign: q crosses zero
    geo = geometry.build("rescaling", model=net, unit=0, extent=2.0)
    assert np.sign(geo.c) == c_sign
    eps = 1e-9
    near = geo.section(np.array([[-eps], [eps]]))
    jump = max(float(np.max(np.abs(near[k][1] - near[k][0]))) for k in ("a", "W"))
    assert jump < 1e-3 * np.sqrt(abs(geo.c))         # continuous (the old section flipped w by 2 sqrt|c| for c < 0)
    if c_sign > 0:
        return   # w would cross zero, where the ReLU's gradient along it vanishes: gradient descent stops at q = 0
    # gradient descent across q = 0: the real parameters keep the sign the section keeps
    m = net.copy()
    for _ in range(4000):
        _, g = m.loss_and_grad(X, y)
        for k in m.params:
            m.params[k] -= 0.05 * g[k]
    q = geo.coordinates(m.params)
    assert q[0] < -0.1                                # it crossed
    s = geo.section(q[None, :])
    np.testing.assert_allclose(s["a"][0, 0], m.params["a"][0], rtol=1e-3)
    np.testing.assert_allclose(s["W"][0, 0, 0], m.params["W"][0, 0], rtol=1e-3)
