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
