"""Optimizers, schedules and settings: exact recursions, closed forms, determinism, errors."""

import numpy as np
import pytest

from shockflow import models
from shockflow.data import Dataset, whiten_inputs
from shockflow.training import TrainSettings, learning_rate, train


def whitened_regression(n=64, d=5, k=2, seed=0):
    """X^T X / n = I and y = X W*^T, so half_mse loss = ½‖W − W*‖²_F exactly."""
    rng = np.random.default_rng(seed)
    X = whiten_inputs(rng.standard_normal((n, d)))
    W_star = rng.standard_normal((k, d))
    return Dataset(X, X @ W_star.T, {"name": "whitened_regression"}), W_star


def linear(d=5, k=2, seed=1):
    return models.build("linear", input_dim=d, output_dim=k, seed=seed)


def test_gd_on_whitened_regression_matches_closed_form():
    # gradient = W − W*, so W_t − W* = (1 − η)^t (W_0 − W*)
    data, W_star = whitened_regression()
    m = linear()
    W0 = m.params["W"].copy()
    train(m, data, TrainSettings(optimizer="gd", lr=0.1, steps=25), quiet=True)
    np.testing.assert_allclose(m.params["W"] - W_star, 0.9 ** 25 * (W0 - W_star), rtol=1e-10, atol=1e-14)


def test_l2_weight_decay_converges_to_shrunk_solution():
    # L2: gradient = W − W* + λW, fixed point W* / (1 + λ)
    data, W_star = whitened_regression()
    m = linear()
    train(m, data, TrainSettings(optimizer="gd", lr=0.5, steps=200, weight_decay=0.25,
                                 weight_decay_mode="l2"), quiet=True)
    np.testing.assert_allclose(m.params["W"], W_star / 1.25, atol=1e-12)


def reference_run(opt, W0, W_star, lr, steps, mu=0.9, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, mode="decoupled"):
    """Textbook recursions written out plainly, on the gradient g = W − W*."""
    W = W0.copy()
    v = np.zeros_like(W)
    m = np.zeros_like(W)
    s = np.zeros_like(W)
    for t in range(1, steps + 1):
        g = W - W_star
        if wd and mode == "l2":
            g = g + wd * W
        if wd and mode == "decoupled":
            W = W * (1 - lr * wd)
        if opt == "momentum":
            v = mu * v + g
            W = W - lr * v
        elif opt == "nesterov":
            v = mu * v + g
            W = W - lr * (g + mu * v)
        elif opt == "adam":
            m = b1 * m + (1 - b1) * g
            s = b2 * s + (1 - b2) * g * g
            W = W - lr * (m / (1 - b1 ** t)) / (np.sqrt(s / (1 - b2 ** t)) + eps)
        else:
            W = W - lr * g
    return W


@pytest.mark.parametrize("opt", ["gd", "momentum", "nesterov", "adam"])
@pytest.mark.parametrize("wd,mode", [(0.0, "decoupled"), (0.1, "decoupled"), (0.1, "l2")])
def test_in_place_optimizers_match_textbook_recursions(opt, wd, mode):
    data, W_star = whitened_regression()
    m = linear()
    W0 = m.params["W"].copy()
    lr = 0.05
    train(m, data, TrainSettings(optimizer=opt, lr=lr, steps=30, weight_decay=wd, weight_decay_mode=mode),
          quiet=True)
    ref = reference_run(opt, W0, W_star, lr, 30, wd=wd, mode=mode)
    np.testing.assert_allclose(m.params["W"], ref, rtol=1e-11, atol=1e-13)


def test_heavy_ball_beats_gd_on_ill_conditioned_quadratic():
    # on ½ h θ² with h ∈ {1, 0.01} (κ = 100), tuned heavy-ball (η = 4/(√L+√μ)², β = r²) has the
    # double root r = (√κ−1)/(√κ+1) on every mode, so the error is (a + b t) r^t: the loss ratio
    # is at most ~(1 + t)² r^{2t}; GD with η = 1 contracts the slow mode only by 0.99 per step.
    rng = np.random.default_rng(0)
    X = whiten_inputs(rng.standard_normal((50, 2))) * np.array([1.0, 0.1])
    data = Dataset(X, np.zeros(50), {})
    res = {}
    h = np.array([1.0, 0.01])
    for opt, lr, mu in [("gd", 1.0, 0.9), ("momentum", 4 / (1 + 0.1) ** 2, ((1 - 0.1) / (1 + 0.1)) ** 2)]:
        m = models.build("linear", input_dim=2, seed=3)
        w0 = m.params["W"][0].copy()
        rec = train(m, data, TrainSettings(optimizer=opt, lr=lr, momentum=mu, steps=150), quiet=True)
        res[opt] = rec.loss[-1] / rec.loss[0]
    gd_exact = np.sum(h * w0 ** 2 * (1 - h) ** 300) / np.sum(h * w0 ** 2)
    assert res["gd"] == pytest.approx(gd_exact, rel=1e-9)
    rate = (1 - 0.1) / (1 + 0.1)
    assert res["momentum"] < 10 * (1 + 150) ** 2 * rate ** 300 < 1e-6 * res["gd"]


def test_schedules():
    s = TrainSettings(lr=0.1, steps=100, schedule="step", step_every=30, gamma=0.5)
    assert [learning_rate(s, t) for t in (0, 29, 30, 60, 99)] == [0.1, 0.1, 0.05, 0.025, 0.0125]
    c = TrainSettings(lr=0.1, steps=100, schedule="cosine", lr_min=0.02)
    assert learning_rate(c, 0) == pytest.approx(0.1)
    assert learning_rate(c, 50) == pytest.approx(0.06)
    assert learning_rate(c, 100) == pytest.approx(0.02)
    data, _ = whitened_regression()
    rec = train(linear(), data, TrainSettings(optimizer="gd", lr=0.1, steps=100, schedule="step",
                                              step_every=30, gamma=0.5, log_every=10), quiet=True)
    np.testing.assert_array_equal(rec.series["lr"], [learning_rate(s, t) for t in rec.steps])


def test_sgd_is_deterministic_under_a_seed_to_the_bit():
    data, _ = whitened_regression(n=100)
    runs = []
    for seed in (11, 11, 12):
        m = linear()
        runs.append(train(m, data, TrainSettings(optimizer="sgd", lr=0.05, steps=120, batch_size=7, seed=seed,
                                                 noise_every=30), quiet=True))
    assert runs[0].same_as(runs[1])
    assert runs[0].loss.tobytes() == runs[1].loss.tobytes()
    assert not np.array_equal(runs[0].loss, runs[2].loss)


def test_sgd_visits_every_sample_once_per_epoch():
    from shockflow.training.batching import BatchSampler

    X = np.arange(10.0)[:, None]
    sampler = BatchSampler(X, np.zeros(10), 3, np.random.default_rng(0))
    for _ in range(4):
        seen = np.concatenate([sampler.next()[0][:, 0].copy() for _ in range(3)])
        assert len(set(seen)) == 9          # 3 batches of 3 distinct samples, remainder skipped


@pytest.mark.parametrize("kwargs,match", [
    (dict(optimizer="lbfgs"), r"unknown optimizer 'lbfgs'; valid names: \['gd', 'sgd', 'momentum', 'nesterov', 'adam'\]"),
    (dict(lr=0.0), "lr must be a finite number > 0"),
    (dict(lr=float("nan")), "lr must be"),
    (dict(steps=0), "steps must be an integer >= 1"),
    (dict(optimizer="sgd"), "'sgd' needs a batch_size"),
    (dict(batch_size=0), "batch_size must be an integer >= 1"),
    (dict(schedule="warm"), "unknown schedule 'warm'"),
    (dict(weight_decay_mode="l1"), "unknown weight_decay_mode 'l1'"),
    (dict(momentum=1.0), "momentum must be"),
    (dict(init_scale=-1.0), "init_scale must be"),
])
def test_settings_validation_names_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrainSettings(**kwargs)


def test_batch_size_larger_than_data_and_gd_with_minibatch_are_refused():
    data, _ = whitened_regression(n=20)
    with pytest.raises(ValueError, match=r"batch_size = 50 is larger than the data set \(n = 20"):
        train(linear(), data, TrainSettings(optimizer="sgd", batch_size=50, steps=3), quiet=True)
    with pytest.raises(ValueError, match="'gd' is full batch"):
        train(linear(), data, TrainSettings(optimizer="gd", batch_size=5, steps=3), quiet=True)
