"""Forward passes against independent closed forms and loops (docs/theory.md §2–§4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.signal import correlate
from scipy.special import softmax

from shockflow import models


def rng(seed=0):
    return np.random.default_rng(seed)


def _phi(name):
    return {
        "tanh": math.tanh,
        "relu": lambda z: max(z, 0.0),
        "gelu": lambda z: 0.5 * z * (1.0 + math.erf(z / math.sqrt(2.0))),
        "sigmoid": lambda z: 1.0 / (1.0 + math.exp(-z)),
        "identity": lambda z: z,
    }[name]


@pytest.mark.parametrize("activation", ["tanh", "relu", "gelu", "sigmoid", "identity"])
def test_mlp_forward_matches_scalar_loop(activation):
    m = models.build("mlp", input_dim=3, width=4, activation=activation, bias=True, output_dim=2, seed=1)
    m.params["b"][:] = rng(2).normal(size=4)
    X = rng(3).normal(size=(5, 3))
    phi = _phi(activation)
    W, b, a = m.params["W"], m.params["b"], m.params["a"]
    expected = np.array([[sum(a[o, i] * phi(float(W[i] @ x) + b[i]) for i in range(4)) for o in range(2)] for x in X])
    np.testing.assert_allclose(m.forward(X), expected, rtol=1e-13, atol=1e-14)


def test_mean_field_has_1_over_m_scaling_and_is_invariant_under_duplicating_units():
    m = models.build("mean_field", input_dim=3, width=5, activation="tanh", seed=4)
    X = rng(5).normal(size=(6, 3))
    W, a = m.params["W"], m.params["a"]
    expected = np.mean(a * np.tanh(X @ W.T), axis=1)
    np.testing.assert_allclose(m.forward(X), expected, rtol=1e-13)
    # the same units twice: a mean-field network computes the same function
    m2 = models.build("mean_field", input_dim=3, width=10, activation="tanh")
    m2.params["W"][:] = np.vstack([W, W])
    m2.params["a"][:] = np.concatenate([a, a])
    np.testing.assert_allclose(m2.forward(X), m.forward(X), rtol=1e-13)
    # a standard MLP doubles instead
    s = models.build("mlp", input_dim=3, width=10, activation="tanh")
    s.params["W"][:], s.params["a"][:] = m2.params["W"], m2.params["a"]
    np.testing.assert_allclose(s.forward(X), 10 * m.forward(X), rtol=1e-13)


def test_mlp_small_weight_expansion_is_the_quadratic_form_of_theory_section_2():
    """f = Tr[W Wᵀ A(x)] + O(ε³) with A(x) = φ'(0)/2 [[0, x],[xᵀ, 0]] (gelu: φ'(0) = 1/2)."""
    base = models.build("mlp", input_dim=3, width=4, activation="gelu", seed=7)
    X = rng(8).normal(size=(5, 3))
    errors = []
    for eps in (1e-2, 5e-3):
        m = base.copy()
        m.params["W"] *= eps
        m.params["a"] *= eps
        W, a = m.params["W"], m.params["a"]
        quad = np.zeros(len(X))
        for mu, x in enumerate(X):
            A = np.zeros((4, 4))
            A[:3, 3] = A[3, :3] = 0.5 * x / 2  # φ'(0)/2 · [[0, x], [xᵀ, 0]]
            units = np.hstack([W, a[:, None]])  # rows w_i = [u_i; v_i]
            quad[mu] = np.trace(units.T @ units @ A)
        errors.append(np.max(np.abs(m.forward(X) - quad)))
    # third-order remainder (gelu has φ''(0) ≠ 0): halving ε divides it by 8
    assert 7.0 < errors[0] / errors[1] < 9.0


def test_deep_mlp_and_deep_linear_match_layer_products():
    m = models.build("deep_mlp", input_dim=3, widths=[4, 5], activation="sigmoid", bias=True, output_dim=2, seed=2)
    for k in ("b1", "b2"):
        m.params[k][:] = rng(9).normal(size=m.params[k].shape)
    X = rng(10).normal(size=(4, 3))
    p = m.params
    sig = lambda z: 1 / (1 + np.exp(-z))
    expected = sig(sig(X @ p["W1"].T + p["b1"]) @ p["W2"].T + p["b2"]) @ p["W3"].T
    np.testing.assert_allclose(m.forward(X), expected, rtol=1e-13)

    d = models.build("deep_linear", input_dim=3, widths=[4, 2, 5], output_dim=2, seed=3)
    prod = d.params["W4"] @ d.params["W3"] @ d.params["W2"] @ d.params["W1"]
    np.testing.assert_allclose(d.end_to_end(), prod, rtol=1e-14)
    np.testing.assert_allclose(d.forward(X), X @ prod.T, rtol=1e-12)

    two = models.build("linear2", input_dim=3, hidden=6, output_dim=1)
    assert list(two.params) == ["W1", "W2"]
    np.testing.assert_allclose(two.forward(X), X @ (two.params["W2"] @ two.params["W1"]).ravel(), rtol=1e-12)


def test_linear_student_follows_the_population_gradient_descent_formula_of_theory_section_3():
    """Whitened inputs (XᵀX = n I): W_t = (1 − (1−ε)^t) W* + (1−ε)^t W_0 exactly."""
    N, M, n, eps, steps = 3, 5, 40, 0.3, 6
    m = models.build("linear", input_dim=M, output_dim=N, init_scale=0.8, seed=1)
    Q, _ = np.linalg.qr(rng(2).normal(size=(n, M)))
    X = np.sqrt(n) * Q
    W_star = rng(3).normal(size=(N, M))
    Y = X @ W_star.T
    np.testing.assert_allclose(m.forward(X), X @ m.params["W"].T, rtol=1e-14)
    W0 = m.params["W"].copy()
    for _ in range(steps):
        _, g = m.loss_and_grad(X, Y)
        m.params["W"] -= eps * g["W"]
    decay = (1 - eps) ** steps
    np.testing.assert_allclose(m.params["W"], (1 - decay) * W_star + decay * W0, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("activation", ["tanh", "relu"])
def test_cnn1d_matches_scipy_correlation_with_sum_pooling(activation):
    m = models.build("cnn1d", input_size=9, in_channels=2, out_channels=3, kernel_size=4,
                     activation=activation, bias=True, output_dim=2, seed=5)
    m.params["b"][:] = rng(1).normal(size=3)
    X = rng(6).normal(size=(3, 9, 2))
    K, b, a = m.params["K"], m.params["b"], m.params["a"]
    phi = m.activation.fn
    expected = np.zeros((3, 2))
    for mu in range(3):
        pooled = np.array([
            phi(sum(correlate(X[mu, :, ci], K[c, :, ci], mode="valid") for ci in range(2)) + b[c]).sum()
            for c in range(3)
        ])
        expected[mu] = a @ pooled
    np.testing.assert_allclose(m.forward(X), expected, rtol=1e-12)


def test_cnn2d_matches_scipy_correlation_with_sum_pooling():
    m = models.build("cnn2d", input_size=[6, 5], in_channels=3, out_channels=2, kernel_size=[3, 2], seed=7)
    X = rng(8).normal(size=(4, 6, 5, 3))
    K, a = m.params["K"], m.params["a"]
    expected = np.array([
        sum(a[c] * np.tanh(correlate(X[mu], K[c], mode="valid")[:, :, 0]).sum() for c in range(2))
        for mu in range(4)
    ])
    np.testing.assert_allclose(m.forward(X), expected, rtol=1e-12)


def test_cnn_linear_part_uses_the_sum_of_patches():
    """Identity activation: f = Σ_c a_c K_c · Σ_p x_p (the CNN row of the docs/theory.md §2 table)."""
    m = models.build("cnn1d", input_size=8, in_channels=2, out_channels=3, kernel_size=3, activation="identity")
    X = rng(1).normal(size=(5, 8, 2))
    patch_sum = m.patches(X).sum(axis=1)  # (n, k·C)
    Kf = m.params["K"].reshape(3, -1)
    np.testing.assert_allclose(m.forward(X), patch_sum @ Kf.T @ m.params["a"], rtol=1e-12)
    # patches are the windows X[p : p + k, :]
    np.testing.assert_array_equal(m.patches(X)[2, 4], X[2, 4:7, :].ravel())


def _attention_loop(X, WQ, WK, Vfun, R, d_k):
    n, T, _ = X.shape
    out = np.zeros(n)
    for mu in range(n):
        for h in range(WQ.shape[0]):
            q, k, v = X[mu] @ WQ[h], X[mu] @ WK[h], Vfun(mu, h)
            P = softmax(q @ k.T / np.sqrt(d_k), axis=1)
            out[mu] += np.mean((P @ v) @ R[h])
    return out


def test_attention_matches_explicit_loop_and_uniform_limit():
    m = models.build("attention", d_model=4, heads=3, d_k=2, d_v=5, seed=3)
    X = rng(4).normal(size=(3, 6, 4))
    p = m.params
    expected = _attention_loop(X, p["W_Q"], p["W_K"], lambda mu, h: X[mu] @ p["W_V"][h], p["v"], 2)
    np.testing.assert_allclose(m.forward(X), expected, rtol=1e-12)
    # variable number of tokens is accepted
    assert m.forward(X[:, :2]).shape == (3,)
    # W_Q = 0: uniform attention, f = Σ_h v_h · W_{V,h}ᵀ x̄
    p["W_Q"][:] = 0.0
    xbar = X.mean(axis=1)
    np.testing.assert_allclose(m.forward(X), np.einsum("nD,hDv,hv->n", xbar, p["W_V"], p["v"]), rtol=1e-12)


def test_query_key_attention_matches_loop_and_its_quadratic_expansion():
    c = np.array([0.5, -1.0, 2.0])
    m = models.build("attention_qk", d_model=3, heads=2, d_k=2, readout=c.tolist(), seed=1)
    X = rng(2).normal(size=(4, 5, 3))
    p = m.params
    expected = _attention_loop(X, p["W_Q"], p["W_K"], lambda mu, h: X[mu], np.tile(c, (2, 1)), 2)
    np.testing.assert_allclose(m.forward(X), expected, rtol=1e-12)
    # f = H c·x̄ + Σ_h x̄ᵀ W_Q W_Kᵀ Σ_X c / √d_k + O(ε⁴)   (docs/theory.md §2, query–key-only head)
    xbar = X.mean(axis=1)
    cov = np.einsum("ntD,ntE->nDE", X, X) / 5 - np.einsum("nD,nE->nDE", xbar, xbar)
    u = cov @ c
    WQ0, WK0 = p["W_Q"].copy(), p["W_K"].copy()
    errors = []
    for eps in (2e-2, 1e-2):
        p["W_Q"][:], p["W_K"][:] = eps * WQ0, eps * WK0
        quad = 2 * xbar @ c + np.einsum("nD,hDk,hEk,nE->n", xbar, p["W_Q"], p["W_K"], u) / np.sqrt(2)
        errors.append(np.max(np.abs(m.forward(X) - quad)))
    assert 14.0 < errors[0] / errors[1] < 18.0


def test_moe_matches_loop_and_uniform_gate_averages_experts():
    m = models.build("moe", input_dim=3, experts=4, expert="mlp", expert_width=2, activation="tanh", seed=2)
    X = rng(3).normal(size=(5, 3))
    p = m.params
    expected = []
    for x in X:
        g = softmax(p["gate"] @ x)
        E = [p["expert_a"][k] @ np.tanh(p["expert_W"][k] @ x) for k in range(4)]
        expected.append(g @ np.array(E))
    np.testing.assert_allclose(m.forward(X), expected, rtol=1e-12)
    np.testing.assert_allclose(m.gate_weights(X).sum(axis=1), 1.0, rtol=1e-14)
    lin = models.build("moe", input_dim=3, experts=4)
    lin.params["gate"][:] = 0.0
    np.testing.assert_allclose(lin.forward(X), X @ lin.params["experts"].mean(axis=0), rtol=1e-12)


def test_quadratic_sum_and_trace_forms():
    d, p_width = 5, 3
    X = rng(1).normal(size=(6, d))
    s = models.build("quadratic", input_dim=d, width=p_width, seed=2)
    W, a = s.params["W"], s.params["a"]
    np.testing.assert_allclose(s.forward(X), [sum(a[i] * (W[i] @ x) ** 2 for i in range(p_width)) for x in X],
                               rtol=1e-12)
    t = models.build("quadratic", input_dim=d, width=p_width, form="trace", seed=3)
    W = t.params["W"]
    S = W.T @ W / np.sqrt(p_width * d)
    np.testing.assert_allclose(t.gram(), S, rtol=1e-14)
    expected = [np.trace(S @ (np.outer(x, x) - np.eye(d)) / np.sqrt(d)) for x in X]
    np.testing.assert_allclose(t.forward(X), expected, rtol=1e-11)


def test_fourier_feature_mlp_matches_formula():
    P, theta = 7, 0.8
    m = models.build("fourier", modes=P, theta=theta, seed=1)
    x = rng(2).uniform(size=9)
    W, a = m.params["W"], m.params["a"]
    expected = [sum(W[k - 1] * math.tanh(k ** -theta * a[k - 1] * math.sqrt(2) * math.cos(2 * math.pi * k * xi))
                    for k in range(1, P + 1)) / math.sqrt(P) for xi in x]
    np.testing.assert_allclose(m.forward(x[:, None]), expected, rtol=1e-12)
    # ψ_k are orthonormal on [0, 1) (midpoint rule is exact for trigonometric polynomials)
    grid = (np.arange(64) + 0.5) / 64
    psi = m.features(grid[:, None])
    np.testing.assert_allclose(psi.T @ psi / 64, np.eye(P), atol=1e-12)
    c = models.build("fourier", modes=3, init="constant", init_scale=0.25)
    np.testing.assert_array_equal(c.params["a"], 0.25)


def test_diagonal_network_and_phase_retrieval():
    X = rng(1).normal(size=(5, 4))
    d = models.build("diagonal", input_dim=4, seed=2)
    u = d.params["u"]
    np.testing.assert_allclose(d.forward(X), [sum(x[k] * u[k] ** 2 / 4 for k in range(4)) for x in X], rtol=1e-13)
    uv = models.build("diagonal", input_dim=4, form="uv", init="constant", init_scale=0.3)
    np.testing.assert_allclose(uv.forward(X), 0.09 * X.sum(axis=1), rtol=1e-13)
    pr = models.build("phase_retrieval", input_dim=4, seed=3)
    np.testing.assert_allclose(pr.forward(X), (X @ pr.params["w"]) ** 2, rtol=1e-13)
    # sign symmetry w -> -w of phase retrieval
    flipped = pr.copy()
    flipped.params["w"] *= -1
    np.testing.assert_allclose(flipped.forward(X), pr.forward(X), rtol=1e-15)


def test_relu_subgradient_at_zero_is_zero():
    """Documented convention φ'(0) = 0: a unit with pre-activation exactly 0 gets no gradient."""
    m = models.build("mlp", input_dim=2, width=3, activation="relu")
    m.params["W"][1] = 0.0  # unit 1 has w·x = 0 for every x
    X = rng(1).normal(size=(4, 2))
    _, g = m.loss_and_grad(X, rng(2).normal(size=4))
    np.testing.assert_array_equal(g["W"][1], 0.0)
    np.testing.assert_array_equal(g["a"][1], 0.0)
