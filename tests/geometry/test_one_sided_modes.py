"""The modes of a kinked origin (shockflow.geometry.one_sided_modes) against the closed form for relu units on a
Gaussian-input linear teacher, and the smooth origin left to Y."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from shockflow import models
from shockflow.geometry.auto import AutoGeometry, find_modes

D, WIDTH, N = 5, 6, 40000
SINGULAR = (3.0, 1.5)


def _teacher(seed=0):
    """Isotropic Gaussian inputs, y = T x with T of singular values SINGULAR (rotated), no noise."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    U = np.linalg.qr(rng.standard_normal((2, 2)))[0]
    V = np.linalg.qr(rng.standard_normal((D, 2)))[0]
    T = U @ np.diag(SINGULAR) @ V.T
    return X, X @ T.T


def _net(activation, bias):
    return models.build("mlp", input_dim=D, width=WIDTH, output_dim=2, activation=activation, bias=bias,
                        init_scale=1e-3, seed=1)


def _beta_star() -> float:
    """The self-similar bias ratio of a relu unit on a Gaussian-input linear teacher: φ(β)(1 + β²) = β Φ(β)."""
    return brentq(lambda b: norm.pdf(b) * (1 + b * b) - b * norm.cdf(b), 0.1, 2.0)


def test_relu_with_bias_takes_the_bias_along_at_the_closed_form_ratio_and_rate():
    """The fixed points: bias ratio β* and rate s_k √((Φ − β*φ)² + φ²), 1.245× the bias-free s_k/2; only the fastest
    mode keeps its even part.  Without a bias the even part is the sample's noise: the modes stay Y's."""
    X, y = _teacher()
    with_bias = find_modes(_net("relu", True), X, y)
    assert with_bias.even is not None and with_bias.rates.size == 2
    beta = _beta_star()
    rate = math.hypot(norm.cdf(beta) - beta * norm.pdf(beta), norm.pdf(beta))
    assert rate / 0.5 == pytest.approx(1.245, abs=1e-3)
    # a unit's entries: its weight row (D), its bias, its readout (2)
    e, even = with_bias.directions[:, 0], with_bias.even[:, 0]
    odd = e - even
    assert even[D] / np.linalg.norm(odd[:D]) == pytest.approx(beta, rel=0.03)   # the bias is even ...
    assert abs(odd[D]) < 0.02 * abs(even[D])                                   # ... and only even
    assert np.linalg.norm(np.delete(even, D)) < 0.05                            # the rest is odd (sampling)
    assert with_bias.rates == pytest.approx(rate * np.array(SINGULAR), rel=0.02)   # each at its own fixed point
    assert not np.any(with_bias.even[:, 1])      # the slower mode moves its odd part: the bias follows the fastest
    assert find_modes(_net("relu", False), X, y).even is None


def test_a_smooth_origin_keeps_y_modes_exactly():
    X, y = _teacher()
    found = find_modes(_net("tanh", True), X, y)
    assert found.even is None


def test_the_section_moves_a_unit_along_its_own_sides_fixed_point():
    """Unit i moves along c_i·odd + |c_i|·even: a unit holding the fastest mode with either sign takes the bias with
    the same sign, the chart coordinate reads r on the section and |dθ/dr| = 1 (mobility 1).  A slower mode's
    section leaves the biases where they are (they follow the fastest mode, which dominates every unit)."""
    X, y = _teacher()
    net = _net("relu", True)
    found = find_modes(net, X, y)
    assert np.any(np.asarray(net.params["a"]) @ np.ones(WIDTH) != 0)

    def at(geo, r):
        return {k: np.asarray(v)[0] for k, v in geo.section(np.array([[r]])).items()}

    geo = AutoGeometry(model=net, modes=found.directions, even=found.even, mode=0)
    c = geo._layout.unit_matrix(net.parameter_vector()).T @ geo._e
    assert np.any(c > 0) and np.any(c < 0)          # units hold the mode with both signs
    assert np.all(at(geo, 1.0)["b"] - at(geo, 0.5)["b"] > 0)
    for r in (0.25, 0.5, 1.0):
        assert geo.coordinates(at(geo, r))[0] == pytest.approx(r, rel=1e-9)
    step = np.concatenate([np.ravel(at(geo, 1.0)[k] - at(geo, 0.0)[k]) for k in net.params])
    assert np.linalg.norm(step) == pytest.approx(1.0, rel=1e-9)
    slower = AutoGeometry(model=net, modes=found.directions, even=found.even, mode=1)
    fastest_step = np.abs(at(geo, 1.0)["b"] - at(geo, 0.5)["b"]).max()
    assert np.abs(at(slower, 1.0)["b"] - at(slower, 0.5)["b"]).max() < 0.01 * fastest_step   # the odd part's: noise
    assert slower.coordinates(at(slower, 0.5))[0] == pytest.approx(0.5, rel=1e-9)


def _relu_committee(seed=0):
    """Isotropic Gaussian inputs, two outputs: y₁ = Σ_k relu(v_k·x) over 3 orthonormal v_k (targets with a mean,
    3/√(2π)) and y₂ = 1.5 u·x, u orthogonal to them."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    V = np.linalg.qr(rng.standard_normal((D, 4)))[0]
    return X, np.stack([np.maximum(X @ V[:, :3], 0.0).sum(axis=1), 1.5 * X @ V[:, 3]], axis=1)


def _relu_net(outputs=2):
    return models.build("mlp", input_dim=D, width=WIDTH, output_dim=outputs, activation="relu", bias=True,
                        init_scale=1e-3, seed=1)


def test_the_two_sides_of_a_kinked_mode_grow_at_their_own_rates():
    """On an odd teacher (linear) a unit and its mirror image (−a, −w, b) see the same loss: the two sides' rates
    agree to the sample's noise (a t test over 16 batches), and both are the mode's rate.  On targets with a mean they do not: the unit that fits the mean with a positive
    bias grows several times faster than its mirror (here 1.05 against 0.45 and 1.46 against 0.01), and the mode's rate is their mean."""
    X, y = _teacher()
    even_teacher = find_modes(_net("relu", True), X, y)
    assert np.all(even_teacher.sides[:, 0] == even_teacher.sides[:, 1])   # within the sample's noise: one rate
    assert even_teacher.sides[:, 0] == pytest.approx(even_teacher.rates, rel=1e-12)
    X, y = _relu_committee()
    net = _relu_net()
    found = find_modes(net, X, y)
    assert found.even is not None and found.sides.shape == (found.rates.size, 2)
    assert found.rates == pytest.approx(found.sides.mean(axis=1), rel=1e-12)
    fast, slow = found.sides.max(axis=1), found.sides.min(axis=1)
    assert np.all(fast > 1.0) and np.all(slow < 0.5 * fast)


def test_the_split_of_a_kinked_mode_turns_to_its_faster_side_over_the_plateau():
    """From the origin, unit i grows at its side's rate (λ⁺ for a positive share, λ⁻ for a negative): over the
    plateau t* = ln(1/r0)/λ_f the slower side's shares fall behind by r0^((λ_f − λ_s)/λ_f), and the chart's section
    and start read the split that has turned (the mode that carries the even part: the bias follows it).  A mode
    without an even part moves its odd part only, which has one rate: its split stays, as does every split at a
    saddle of the chain."""
    X, y = _relu_committee()
    X, y = X, y[:, 0]                           # the committee alone: one mode, with an even part
    net = _relu_net(outputs=1)
    found = find_modes(net, X, y)
    assert np.any(found.even[:, 0])
    geo = AutoGeometry(model=net, modes=found.directions, even=found.even, sides=found.sides, mode=0)
    plain = AutoGeometry(model=net, modes=found.directions, even=found.even, mode=0)
    c = geo._layout.unit_matrix(net.parameter_vector()).T @ geo._e / geo._scale
    assert np.any(c > 0) and np.any(c < 0)
    r0 = float(np.linalg.norm(c))
    plus, minus = found.sides[0]
    fast, slow = max(plus, minus), min(plus, minus)
    assert slow < 0.5 * fast
    slower = c < 0 if plus > minus else c > 0
    expected = np.where(slower, c * r0 ** ((fast - slow) / fast), c)
    assert geo._relaxed_split(c, r0) == pytest.approx(expected, rel=1e-12)
    assert plain._relaxed_split(c, r0) == pytest.approx(c, rel=1e-12)
    start = geo.start_coordinate(net.params, X, y)[0]
    assert start == pytest.approx(float(np.linalg.norm(expected)), rel=1e-12)
    assert start < plain.start_coordinate(net.params, X, y)[0]
    X, y = _relu_committee()
    net = _relu_net()
    found = find_modes(net, X, y)
    assert not np.any(found.even) and np.all(found.sides.min(axis=1) < 0.5 * found.sides.max(axis=1))
    for mode, active in ((0, ()), (1, ()), (1, (0,))):
        g = AutoGeometry(model=net, modes=found.directions, even=found.even, sides=found.sides, mode=mode,
                         active=active)
        c = g._layout.unit_matrix(net.parameter_vector()).T @ g._e / g._scale
        assert g._relaxed_split(c, float(np.linalg.norm(c))) == pytest.approx(c, rel=1e-12)


def test_units_on_the_decaying_side_cross_the_kink_as_the_flow_carries_them():
    """Every unit put on the slower side of the committee's mode (whose rate there is zero: λ = 0 and 1.48): a factor
    per side keeps that side's split, but units with |a| < |(w, b)| turn over to the faster side and carry the mode
    from there (docs/theory.md §6, "Units that cross the kink").  The chart's split and start, read from the units
    flowed over the plateau (one_sided_modes.plateau_units), are the run's: gradient descent at lr·λ = 0.02 until the
    mode's share is 0.03 has the flowed split to cosine 0.9993 (the per-side factor's: −0.11) and the start grown at
    the discrete rate to 0.1 % (the per-side start: 190 times too small)."""
    X, y = _relu_committee()
    y = y[:, 0]
    net = _relu_net(outputs=1)
    found = find_modes(net, X, y)
    geo = AutoGeometry(model=net, modes=found.directions, even=found.even, sides=found.sides, mode=0)
    layout, theta = geo._layout, net.parameter_vector()
    units = layout.unit_matrix(theta)
    plus, minus = found.sides[0]
    c = units.T @ geo._e / geo._scale
    flip = c < 0 if plus < minus else c > 0          # every unit to the slower side
    units[:, flip] *= -1.0
    theta[layout.index] = units.T
    net.set_parameter_vector(theta)
    found = find_modes(net, X, y)
    fast, slow = max(found.sides[0]), min(found.sides[0])
    assert found.plateau_units is not None and slow < 0.05 * fast
    settings = dict(modes=found.directions, even=found.even, sides=found.sides, mode=0)
    flowed = AutoGeometry(model=net, plateau_units=found.plateau_units, **settings)
    per_side = AutoGeometry(model=net, **settings)
    start = layout.unit_matrix(net.parameter_vector())
    split, split_per_side = flowed._plateau_split(start)[2], per_side._plateau_split(start)[2]

    run, lr, steps = net.copy(), 0.02 / fast, 0
    theta = run.parameter_vector()
    share = start.T @ flowed._e / flowed._scale
    while np.linalg.norm(share) < 0.03 and steps < 5000:
        theta = theta - lr * run.grad_vector(run.loss_and_grad(X, y)[1])
        run.set_parameter_vector(theta)
        share = layout.unit_matrix(theta).T @ flowed._e / flowed._scale
        steps += 1

    def cosine(a, b):
        return float(a @ b) / float(np.linalg.norm(a) * np.linalg.norm(b))

    assert cosine(split, share) > 0.99 and cosine(split_per_side, share) < 0.5
    grown = float(np.linalg.norm(split)) * (1.0 + lr * fast) ** steps
    assert grown == pytest.approx(float(np.linalg.norm(share)), rel=0.01)
    assert float(np.linalg.norm(split_per_side)) * (1.0 + lr * fast) ** steps < 0.1 * float(np.linalg.norm(share))
    # bound at other units (a saddle of the chain), a chart does not read the flow that started from the initial ones
    later = AutoGeometry(model=run, plateau_units=found.plateau_units, **settings)
    units = layout.unit_matrix(run.parameter_vector())
    assert np.array_equal(later._plateau_split(units)[2],
                          AutoGeometry(model=run, **settings)._plateau_split(units)[2])


def test_the_chart_of_a_kinked_mode_grows_at_its_fixed_points_rate():
    """A relu net with two outputs on a relu teacher: the fastest mode's even part lies largely along a slower
    mode's odd part, and its section moves the units along the directions as separated (the even part projected off
    the slower odd parts, so that those read nothing of this mode's units), at 0.27 against the fixed point's 0.40.
    The units grow at the fixed point's rate; the chart's mobility carries the ratio (AutoGeometry._path_speed), and
    the chart's rate is the run's to 1 % (gradient descent at lr·λ = 0.02, the share from 0.005 to 0.05; 35 % slow
    without it)."""
    rng = np.random.default_rng(3)
    d, n = 6, 20000
    X = rng.standard_normal((n, d))
    teacher = models.build("mlp", input_dim=d, width=3, output_dim=2, activation="relu", init_scale=1.0, seed=8)
    y = teacher.forward(X)
    net = models.build("mlp", input_dim=d, width=8, output_dim=2, activation="relu", init_scale=1e-3, seed=1)
    found = find_modes(net, X, y)
    settings = dict(modes=found.directions, even=found.even, sides=found.sides, plateau_units=found.plateau_units,
                    mode=0)
    geo = AutoGeometry(model=net, section_sides=found.section_sides, **settings)
    r = 1e-2
    L = geo.chart_loss(np.array([[0.0], [r], [2 * r]]), X, y)
    section_rate = -(L[2] - 2 * L[1] + L[0]) / r ** 2
    chart_rate = section_rate * geo.mobility(np.array([[r]]))[0, 0, 0]
    assert AutoGeometry(model=net, **settings).mobility(np.array([[r]]))[0, 0, 0] == 1.0

    run, lr = net.copy(), 0.02 / float(max(found.sides[0]))
    theta, shares = run.parameter_vector(), []
    while not shares or shares[-1] < 0.05:
        theta = theta - lr * run.grad_vector(run.loss_and_grad(X, y)[1])
        run.set_parameter_vector(theta)
        shares.append(geo.coordinates(run.params)[0])
        assert len(shares) < 5000
    shares = np.array(shares)
    i, j = int(np.searchsorted(shares, 0.005)), shares.size - 1
    per_step = math.log(shares[j] / shares[i]) / (j - i)
    run_rate = math.expm1(per_step) / lr           # the flow rate whose discrete gain per step is the run's
    assert chart_rate == pytest.approx(run_rate, rel=0.02)
    assert section_rate < 0.75 * run_rate
