"""The learned strength: the automatic charts' truth reads a mode's strength from the network's function.

docs/theory.md §6, "The learned strength"; shockflow.prediction.truth.  A weight-space strength (r², r^L) is
the function's only while the network is linear in its weights; a saturating network keeps growing its
weights after the mode is learned, so half of their final strength moves with the run's horizon.
"""

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.geometry.auto import find_modes
from shockflow.prediction.truth import half_learned_step, strength_along, strength_of


def test_the_learned_strength_of_a_linear_chain_is_its_mode_product():
    # a deep linear chain holding P = Σ z_j u_j v_jᵀ exactly: each mode's learned strength is z_j, on any data
    rng = np.random.default_rng(3)
    d, h, o, n = 6, 7, 3, 300
    X = rng.standard_normal((n, d)) @ (np.eye(d) + 0.3 * rng.standard_normal((d, d)))   # not whitened
    y = rng.standard_normal((n, o))
    net = models.build("deep_linear", input_dim=d, widths=[h, h], output_dim=o, init_scale=0.1, seed=2)
    V = np.linalg.qr(rng.standard_normal((d, 3)))[0]
    U = np.linalg.qr(rng.standard_normal((o, 3)))[0]
    z = np.array([2.0, 0.7, 0.05])
    c = np.cbrt(z)
    E = np.eye(h)[:, :3]
    params = {"W1": (E * c) @ V.T, "W2": (E * c) @ E.T, "W3": (U * c) @ E.T}
    modes = np.concatenate([V, U], axis=0)
    for k in range(3):
        geo = geometry.build("auto", model=net, modes=modes, mode=k)
        assert strength_of(geo, params, X) == pytest.approx(z[k], rel=1e-5, abs=1e-7)


def test_the_learned_strength_along_a_linear_units_section_from_zero_is_r_squared():
    # a two-layer linear net whose units hold only the mode: f = r² (mode function), so the strength is r²
    rng = np.random.default_rng(1)
    X = rng.standard_normal((400, 5))
    y = X @ rng.standard_normal((5, 2)) * 2.0
    net = models.build("mlp", input_dim=5, width=4, output_dim=2, activation="identity", init_scale=1e-12, seed=0,
                       bias=False)
    modes = find_modes(net, X, y)
    geo = geometry.build("auto", model=net, modes=modes.directions, mode=0, extent=3.0)
    r = np.array([[0.3], [1.0], [2.5]])
    np.testing.assert_allclose(strength_along(geo, r, X), r[:, 0] ** 2, rtol=1e-4)


def test_the_learned_strength_of_a_saturating_network_does_not_move_with_the_horizon():
    # tanh units on separable ±1 labels: the weights grow on after the mode is learned (r² ×1.5 from step 2000
    # to 4000), the function's strength does not; its half-learned step is the transition's, not the horizon's
    rng = np.random.default_rng(0)
    n, d = 256, 6
    X = rng.standard_normal((n, d))
    y = np.sign(X @ rng.standard_normal(d))
    net = models.build("mlp", input_dim=d, width=8, output_dim=1, activation="tanh", init_scale=1e-3, seed=1,
                       bias=False)
    geo = geometry.build("auto", model=net, modes=find_modes(net, X, y).directions, mode=0)
    m, lr = net.copy(), 0.05
    steps, learned, weights = [], [], []
    for t in range(4001):
        if t % 10 == 0:
            steps.append(t)
            learned.append(strength_of(geo, m.params, X))
            weights.append(float(geo.strength(geo.coordinates(m.params)[None])[0, 0]))
        _, g = m.loss_and_grad(X, y)
        for key in m.params:
            m.params[key] -= lr * g[key]
    steps, learned, weights = map(np.asarray, (steps, learned, weights))
    short = steps <= 2000
    learned_half = [half_learned_step(steps[s], learned[s])[0] for s in (short, slice(None))]
    weight_half = [half_learned_step(steps[s], weights[s])[0] for s in (short, slice(None))]
    assert learned_half[1] == pytest.approx(learned_half[0], rel=0.02)      # measured 185.7 and 185.3
    assert weight_half[1] > 1.3 * weight_half[0]                           # measured 992 and 1443
    assert learned_half[0] < 0.3 * weight_half[0]


def test_a_learned_modes_saturated_function_does_not_leak_into_a_waiting_modes_strength():
    # a query–key head holding only its first mode, far into the softmax's saturation: the second mode's learned
    # strength is zero, while the plain projection on the modes' linear-regime functions gives it a share
    # (measured 0.06 at r = 2; the run of attention-qk-4x2 read 0.12 of its second mode's final 0.42 that way)
    from shockflow.cases import load_case
    from shockflow.geometry.flat import unflatten
    from shockflow.runners.training import build_model_and_data

    case = load_case("attention-qk-4x2", ["data.n=256"])
    model, _, data, _ = build_model_and_data(case, 0)
    modes = find_modes(model, data.X, data.y)
    first, second = (geometry.build("auto", model=model, modes=modes.directions, mode=k) for k in (0, 1))
    theta = first._origin_vector() + 2.0 * first._direction
    params = unflatten(model, theta)
    f0, G, _ = second._mode_functions(data.X)
    net = model.copy()
    net.set_parameter_vector(theta)
    plain = float(np.linalg.pinv(G)[1] @ (np.asarray(net.forward(data.X)).reshape(-1) - f0))
    assert strength_of(first, params, data.X) > 1.0
    assert abs(strength_of(second, params, data.X)) < 1e-10
    assert abs(plain) > 0.01
