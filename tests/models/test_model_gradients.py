"""Backward passes and per-sample gradients of every registered model against finite differences.

Every registered model must appear in CASES (``test_every_registered_model_has_a_case`` fails
otherwise), so a new model is gradient-checked automatically once it is given a configuration.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from shockflow import models
from shockflow.models.activations import available_activations

ACTIVATIONS = available_activations()

# name -> list of constructor kwargs (without "name")
CASES: dict[str, list[dict]] = {
    "mlp": [dict(input_dim=3, width=5, activation=a, bias=True) for a in ACTIVATIONS]
    + [
        dict(input_dim=3, width=4, output_dim=2, loss="mse"),
        dict(input_dim=3, width=4, output_dim=3, loss="cross_entropy", activation="gelu"),
        dict(input_dim=3, width=4, loss="logistic", activation="relu"),
    ],
    "mean_field": [dict(input_dim=3, width=6, activation=a) for a in ACTIVATIONS]
    + [dict(input_dim=3, width=6, output_dim=2, loss="mse")],
    "deep_mlp": [dict(input_dim=3, widths=[4, 3], activation=a, bias=True, output_dim=2) for a in ACTIVATIONS],
    "deep_linear": [dict(input_dim=3, widths=[4, 2, 3], output_dim=2, loss="mse")],
    "linear2": [dict(input_dim=4, hidden=3, output_dim=2)],
    "linear": [dict(input_dim=4, output_dim=3, loss="mse"), dict(input_dim=5)],
    "cnn1d": [dict(input_size=7, in_channels=2, out_channels=3, kernel_size=3, activation=a, bias=True)
              for a in ACTIVATIONS]
    + [dict(input_size=6, in_channels=1, out_channels=2, kernel_size=2, output_dim=2, loss="mse")],
    "cnn2d": [dict(input_size=[5, 4], in_channels=2, out_channels=3, kernel_size=[2, 3], activation=a, bias=True)
              for a in ACTIVATIONS],
    "attention": [dict(d_model=4, heads=2, d_k=3, d_v=2), dict(d_model=3, loss="mse")],
    "attention_qk": [dict(d_model=4, heads=2, d_k=3), dict(d_model=3, readout=[1.0, -0.5, 2.0])],
    "moe": [dict(input_dim=3, experts=3)]
    + [dict(input_dim=3, experts=2, expert="mlp", expert_width=3, activation=a) for a in ACTIVATIONS],
    "quadratic": [dict(input_dim=4, width=3), dict(input_dim=4, width=3, form="trace", loss="mse")],
    "fourier": [dict(modes=6, theta=0.7), dict(modes=5, theta=1.0, init="constant", init_scale=0.5)],
    "diagonal": [dict(input_dim=5), dict(input_dim=5, form="uv", loss="mse")],
    "phase_retrieval": [dict(input_dim=4, loss="mse")],
}

ALL_CASES = [(name, kw) for name, kws in CASES.items() for kw in kws]


def _case_id(case):
    name, kw = case
    extra = ",".join(f"{k}={v}" for k, v in kw.items() if k in ("activation", "loss", "form", "expert", "init"))
    return f"{name}[{extra}]" if extra else name


def make_data(model: models.Model, n: int, seed: int = 1):
    """Inputs of the model's documented layout and targets matching its loss."""
    rng = np.random.default_rng(seed)
    shape = tuple(4 if s is None else s for s in model.input_shape)  # 4 tokens for attention
    if model.name == "fourier":
        X = rng.uniform(0.0, 1.0, size=(n, *shape))
    else:
        X = rng.normal(size=(n, *shape))
    loss = model.loss_function.name
    if loss == "cross_entropy":
        y = rng.integers(0, model.output_dim, size=n)
    elif loss == "logistic":
        y = rng.choice([-1.0, 1.0], size=n)
    elif model.output_dim == 1:
        y = rng.normal(size=n)
    else:
        y = rng.normal(size=(n, model.output_dim))
    return X, y


def perturbed(name: str, kw: dict, seed: int = 3) -> models.Model:
    """The model, with all parameters moved off special values (zero biases, constant inits)."""
    model = models.build(name, **kw)
    rng = np.random.default_rng(seed)
    for p in model.params.values():
        p += 0.2 * rng.normal(size=p.shape)
    return model


def fd_gradient(model: models.Model, X, y, h: float = 1e-6) -> np.ndarray:
    """Central finite differences of model.loss over the flat parameter vector."""
    theta = model.parameter_vector()
    g = np.empty_like(theta)
    for i in range(theta.size):
        old = theta[i]
        theta[i] = old + h
        model.set_parameter_vector(theta)
        lp = model.loss(X, y)
        theta[i] = old - h
        model.set_parameter_vector(theta)
        lm = model.loss(X, y)
        theta[i] = old
        g[i] = (lp - lm) / (2 * h)
    model.set_parameter_vector(theta)
    return g


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a), np.linalg.norm(b), 1e-12))


def split(model: models.Model, flat: np.ndarray) -> dict[str, np.ndarray]:
    out, start = {}, 0
    for k, p in model.params.items():
        out[k] = flat[start : start + p.size]
        start += p.size
    return out


def test_every_registered_model_has_a_case():
    missing = sorted(set(models.available()) - set(CASES))
    assert not missing, f"registered models without a gradient-test configuration: {missing}"


def test_every_activation_is_exercised_by_the_mlp_cases():
    used = {kw.get("activation", "tanh") for kw in CASES["mlp"]}
    assert used == set(ACTIVATIONS)


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_backward_matches_central_differences(case):
    name, kw = case
    model = perturbed(name, kw)
    X, y = make_data(model, n=7)
    value, grads = model.loss_and_grad(X, y)
    assert value == pytest.approx(model.loss(X, y), rel=1e-14, abs=1e-15)
    assert list(grads) == list(model.params)
    for k, p in model.params.items():
        assert grads[k].shape == p.shape, k
    g = model.grad_vector(grads)
    g_fd = fd_gradient(model, X, y)
    assert rel_err(g, g_fd) < 1e-6
    for k, (a, b) in zip(model.params, zip(split(model, g).values(), split(model, g_fd).values())):
        assert rel_err(a, b) < 1e-6, k


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_per_sample_gradients(case):
    name, kw = case
    model = perturbed(name, kw)
    n = 6
    X, y = make_data(model, n=n, seed=2)
    _, grads = model.loss_and_grad(X, y)
    ps = model.per_sample_grads(X, y)
    assert list(ps) == list(model.params)
    for k, p in model.params.items():
        assert ps[k].shape == (n, *p.shape), k
        assert rel_err(ps[k].mean(axis=0), grads[k]) < 1e-13, k
    # one sample's gradient against finite differences of that sample's loss
    for i in (0, n - 1):
        g_i = np.concatenate([ps[k][i].ravel() for k in model.params])
        g_fd = fd_gradient(model, X[i : i + 1], y[i : i + 1])
        assert rel_err(g_i, g_fd) < 1e-6
        # and it equals loss_and_grad on the single sample
        _, gi = model.loss_and_grad(X[i : i + 1], y[i : i + 1])
        assert rel_err(model.grad_vector(gi), g_i) < 1e-13
    losses = model.per_sample_losses(X, y)
    assert losses.shape == (n,)
    assert np.mean(losses) == pytest.approx(model.loss(X, y), rel=1e-14)


@pytest.mark.parametrize("case", ALL_CASES, ids=_case_id)
def test_spec_rebuilds_the_model_and_copy_is_deep(case):
    name, kw = case
    model = models.build(name, **kw)
    spec = json.loads(json.dumps(model.spec()))
    assert spec["name"] == name
    rebuilt = models.build(**spec)
    assert type(rebuilt) is type(model)
    np.testing.assert_array_equal(rebuilt.parameter_vector(), model.parameter_vector())
    X, y = make_data(model, n=3)
    np.testing.assert_array_equal(rebuilt.forward(X), model.forward(X))
    expected_shape = (3,) if model.output_dim == 1 else (3, model.output_dim)
    assert model.forward(X).shape == expected_shape
    assert rebuilt.spec() == spec
    # copy is independent
    twin = model.copy()
    for p in twin.params.values():
        p += 1.0
    np.testing.assert_array_equal(rebuilt.parameter_vector(), model.parameter_vector())
    # set_parameter_vector writes in place (optimizers hold references to the arrays)
    refs = dict(model.params)
    v = np.arange(model.num_parameters, dtype=float)
    model.set_parameter_vector(v)
    np.testing.assert_array_equal(np.concatenate([r.ravel() for r in refs.values()]), v)
    for k in refs:
        assert model.params[k] is refs[k]
    for p in model.params.values():
        assert p.dtype == np.float64


@pytest.mark.parametrize("name", sorted(CASES))
def test_initial_distribution_matches_documented_moments(name):
    """Sample mean/std of each parameter at init against init_moments (pooled over seeds)."""
    kw = dict(CASES[name][0], init_scale=0.7)
    first = models.build(name, **kw)
    moments = first.init_moments()
    assert set(moments) == set(first.params)
    pooled = {k: [] for k in first.params}
    seed = 0
    while min(sum(a.size for a in v) for v in pooled.values()) < 2000 and seed < 600:
        m = models.build(name, **dict(kw, seed=seed))
        for k, p in m.params.items():
            pooled[k].append(p.ravel().copy())
        seed += 1
    for k, chunks in pooled.items():
        x = np.concatenate(chunks)
        mean, std = moments[k]
        if std == 0.0:
            np.testing.assert_array_equal(x, mean)
            continue
        N = x.size
        assert abs(x.mean() - mean) < 5 * std / np.sqrt(N), k
        assert abs(x.std() / std - 1.0) < 5 / np.sqrt(2 * N), k
    # init_scale scales the initial parameters linearly (same seed, same draws)
    a = models.build(name, **dict(kw, init_scale=1.0, seed=5)).parameter_vector()
    b = models.build(name, **dict(kw, init_scale=2.5, seed=5)).parameter_vector()
    np.testing.assert_allclose(b, 2.5 * a, rtol=1e-15, atol=0)
    # and different seeds give different draws
    c = models.build(name, **dict(kw, init_scale=1.0, seed=6)).parameter_vector()
    if any(s > 0 for _, s in moments.values()):
        assert not np.array_equal(a, c)


def test_the_in_place_softmax_is_scipys():
    from scipy.special import softmax

    from shockflow.models.activations import softmax_in_place

    rng = np.random.default_rng(4)
    shapes = [(7, 3), (4096, 3), (5, 2, 4, 4), (3, 11, 1, 9, 9), (6, 1)]   # a gate's (n, K); attention scores
    shapes += [(64, 2, t, t) for t in range(2, 10)]   # slice by slice below 8 entries, NumPy's reductions from 8
    for shape in shapes:
        S = rng.normal(scale=30.0, size=shape)   # large scores: the shift by the maximum matters
        out = softmax_in_place(S.copy())
        np.testing.assert_array_equal(out, softmax(S, axis=-1))
