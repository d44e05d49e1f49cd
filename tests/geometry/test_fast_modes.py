"""find_modes from full-batch gradients and batched per-sample second differences, against the per-sample
gradients it replaced (``2p`` per-sample gradient passes: 1.8 s of the 5.6 s forecast of ``mlp-tanh-teacher``).

The reference below is the former computation: ``Y_μ`` per sample from central differences of the per-sample
gradients of two units, ``Y`` its mean and each eigenvalue's standard error from the per-sample Rayleigh
quotients.  The new one must give the same modes and rates to rounding and the same errors to 1e-6
(the second differences of losses round at ``ε ℓ/h²``).
"""

import numpy as np
import pytest

from shockflow import models
from shockflow.data.teacher_student import linear_teacher
from shockflow.geometry.auto import _layout, _select, find_modes, free_origin


def _per_sample_reference(model, X, y, frozen=(), h=1e-4):
    layout = _layout(model)
    p = layout.unit_dim
    zero = model.copy()
    origin, free = free_origin(model, layout, frozen)
    n = X.shape[0]
    first, second = layout.index[0], layout.index[1]
    wanted = np.concatenate([first, second])
    S_mu = np.zeros((n, p, p))
    for j in np.flatnonzero(free):
        cols = []
        for sign in (1.0, -1.0):
            theta = origin.copy()
            theta[first[j]] += sign * h
            zero.set_parameter_vector(theta)
            g = zero.per_sample_grads(X, y)
            cols.append(np.concatenate([np.asarray(g[k]).reshape(n, -1) for k in zero.params], axis=1)[:, wanted])
        column = (cols[0] - cols[1]) / (2.0 * h)
        S_mu[:, :, j] = -column[:, :p] + column[:, p:]
    S_mu[:, ~free, :] = 0.0
    S_mu = 0.5 * (S_mu + S_mu.transpose(0, 2, 1))
    S = S_mu.mean(axis=0)
    values, sub = np.linalg.eigh(S[np.ix_(free, free)])
    vectors = np.zeros((p, sub.shape[1]))
    vectors[free] = sub
    order = np.argsort(values)[::-1]
    values, vectors = values[order], vectors[:, order]
    rayleigh = np.einsum("ik,nij,jk->nk", vectors, S_mu - S, vectors, optimize=True)
    error = np.sqrt(np.sum(rayleigh ** 2, axis=0)) / n
    keep = _select(values, vectors, 8, 0.02) & (values > error)
    return values, vectors, error, keep


def _tokens(n):
    from shockflow.data.tokens import token_sequences

    return token_sequences(n, 4, 4, teacher={"name": "attention_qk", "d_model": 4, "d_k": 2, "init_scale": 1.5,
                                             "seed": 5}, noise=0.01, seed=0)


@pytest.mark.parametrize("what", ["tanh mlp", "erf mlp with frozen biases", "attention head"])
def test_the_modes_rates_and_errors_are_those_of_the_per_sample_gradients(what):
    frozen = ()
    if what == "tanh mlp":
        net = models.build("mlp", input_dim=8, width=6, output_dim=3, activation="tanh", init_scale=1e-3, seed=0)
        data = linear_teacher(600, 8, [4.0, 2.0, 1.0], noise=0.01, seed=1)
        X, y = data.X, data.y
    elif what == "erf mlp with frozen biases":
        net = models.build("mlp", input_dim=6, width=8, output_dim=2, activation="erf", bias=True, init_scale=1e-3,
                           seed=0)
        data = linear_teacher(512, 6, [3.0, 1.5], noise=0.01, seed=0)
        X, y, frozen = data.X, data.y, ("b",)
    else:
        net = models.build("attention_qk", d_model=4, d_k=2, init_scale=1e-3, seed=0)
        data = _tokens(1024)
        X, y = data.X, data.y
    values, vectors, error, keep = _per_sample_reference(net, X, y, frozen)
    fast = find_modes(net, X, y, frozen=frozen)
    np.testing.assert_allclose(fast.spectrum, values, rtol=0, atol=1e-12 * abs(values[0]))
    assert fast.rates.size == int(keep.sum())
    np.testing.assert_allclose(np.abs(np.sum(fast.directions * vectors[:, keep], axis=0)), 1.0, atol=1e-9)
    up = values > 1e-9 * values[0]     # the errors of every positive eigenvalue (the ones that can be kept)
    np.testing.assert_allclose(fast.spectrum_errors[up], error[up], rtol=1e-6)
    np.testing.assert_allclose(fast.errors, error[keep], rtol=1e-6)
    assert np.all(np.isnan(fast.spectrum_errors[fast.spectrum <= 0]))
