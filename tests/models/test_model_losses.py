"""Per-sample losses against closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from shockflow import models
from shockflow.models.losses import get_loss


def test_half_mse_and_mse_follow_their_conventions():
    X = np.random.default_rng(0).normal(size=(6, 3))
    y = np.random.default_rng(1).normal(size=(6, 2))
    half = models.build("linear", input_dim=3, output_dim=2, loss="half_mse", seed=2)
    full = models.build("linear", input_dim=3, output_dim=2, loss="mse", seed=2)
    r = X @ half.params["W"].T - y
    assert half.loss(X, y) == pytest.approx(0.5 * np.mean(np.sum(r**2, axis=1)), rel=1e-14)
    # docs/theory.md §2: L = (1/m) Σ (f − y)², no ½
    assert full.loss(X, y) == pytest.approx(np.mean(np.sum(r**2, axis=1)), rel=1e-14)
    _, gh = half.loss_and_grad(X, y)
    _, gf = full.loss_and_grad(X, y)
    np.testing.assert_allclose(gf["W"], 2 * gh["W"], rtol=1e-14)


def test_cross_entropy_labels_and_one_hot_agree_with_log_softmax():
    F = np.array([[1.0, -2.0, 0.5], [1000.0, 0.0, -1000.0]])  # second row tests stability
    labels = np.array([2, 0])
    ce = get_loss("cross_entropy")
    Y = ce.targets(labels, 2, 3)
    np.testing.assert_array_equal(Y, np.eye(3)[labels])
    expected0 = -(0.5 - np.log(np.exp(1.0) + np.exp(-2.0) + np.exp(0.5)))
    np.testing.assert_allclose(ce.value(F, Y), [expected0, 0.0], rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(ce.value(F, ce.targets(np.eye(3)[labels], 2, 3)), ce.value(F, Y), rtol=0)
    # gradient rows sum to zero for probability targets
    np.testing.assert_allclose(ce.grad(F, Y).sum(axis=1), 0.0, atol=1e-15)


def test_logistic_loss_value_and_stability():
    lo = get_loss("logistic")
    F = np.array([[0.0], [2.0], [-800.0]])
    Y = lo.targets(np.array([1.0, -1.0, 1.0]), 3, 1)
    np.testing.assert_allclose(lo.value(F, Y), [np.log(2.0), np.log1p(np.exp(2.0)), 800.0], rtol=1e-14)
    assert np.all(np.isfinite(lo.grad(F, Y)))
