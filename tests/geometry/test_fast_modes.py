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


@pytest.mark.parametrize("name", ["mlp", "mean_field", "cnn2d"])
def test_a_batch_leaves_its_silent_units_out_and_keeps_the_outputs(name, monkeypatch):
    """batched_outputs without the units that no parameter set of the batch uses (no input weight, no readout:
    they add 0 · φ(b)): the outputs of each set's own forward pass to rounding, computed on the used units only;
    a unit that one set uses (here by its readout alone) is kept for the whole batch."""
    import importlib

    bl = importlib.import_module("shockflow.geometry.batched_loss")
    rng = np.random.default_rng(2)
    if name == "cnn2d":
        net = models.build("cnn2d", input_size=[5, 5], in_channels=1, out_channels=6, kernel_size=[3, 3],
                           activation="tanh", bias=True, output_dim=2, seed=0)
        X = rng.standard_normal((64, 5, 5, 1))
        w, a = "K", "a"
    else:
        kwargs = {"bias": True, "output_dim": 2} if name == "mlp" else {}
        net = models.build(name, input_dim=5, width=7, activation="gelu", seed=0, **kwargs)
        X = rng.standard_normal((64, 5))
        w, a = "W", "a"
    sets = []
    for b in range(4):
        P = {k: np.zeros_like(v) for k, v in net.params.items()}
        if "b" in P:
            P["b"][...] = rng.standard_normal(P["b"].shape)       # frozen biases: a silent unit keeps its own
        P[w].reshape(P[w].shape[0], -1)[:2] = rng.standard_normal((2, P[w][0].size))   # units 0, 1 used
        P[a].reshape(-1, P[w].shape[0])[:, :2] = rng.standard_normal((P[a].size // P[w].shape[0], 2))
        sets.append(P)
    sets[3][a].reshape(-1, sets[3][w].shape[0])[:, 4] = 0.5      # unit 4: a readout in one set only
    batch = {k: np.stack([P[k] for P in sets]) for k in net.params}
    widths = []
    activation = bl._in_place
    monkeypatch.setattr(bl, "_in_place", lambda fn, Z: (widths.append(Z.shape[-1]), activation(fn, Z))[1])
    fast = bl.batched_outputs(net, batch, X)
    assert widths == [3]     # units 0, 1 and 4 of the 6 or 7
    for b, P in enumerate(sets):
        one = net.copy()
        for k in one.params:
            one.params[k][...] = P[k]
        np.testing.assert_allclose(fast[b], one.forward(X).reshape(fast[b].shape), rtol=1e-13, atol=1e-14)
