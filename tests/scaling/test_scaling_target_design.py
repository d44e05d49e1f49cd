"""Targets, data and the measurement operator against explicit NumPy references."""

import numpy as np
import pytest

from shockflow.scaling.design import QuadraticDesign
from shockflow.scaling.target import make_target, power_law_eigenvalues, rank_floor, sample_data


def test_power_law_normalisation_and_floor():
    d, gamma = 50, 1.5
    s = power_law_eigenvalues(d, gamma)
    assert np.isclose(2 * np.sum(s**2) / d, 1.0, rtol=1e-13)
    np.testing.assert_allclose(s[1:] / s[:-1], (np.arange(2, d + 1) / np.arange(1, d)) ** -gamma, rtol=1e-13)
    T = make_target(d, gamma, seed=3)
    assert np.isclose(rank_floor(T, 1), 1.0 - 2 * s[0] ** 2 / d, rtol=1e-12)
    assert rank_floor(T, d) == 0.0


def test_labels_are_the_trace_model_with_explicit_Z():
    T = make_target(7, 1.0, noise=0.0, seed=1)
    X, y = sample_data(T, 30, seed=2)
    Z = (np.einsum("ni,nj->nij", X, X) - np.eye(7)) / np.sqrt(7)
    np.testing.assert_allclose(y, np.einsum("ij,nij->n", T.matrix, Z), rtol=1e-12, atol=1e-12)


def test_label_noise_variance():
    T0 = make_target(5, 2.0, noise=0.0, seed=1)
    T1 = make_target(5, 2.0, noise=0.25, seed=1)
    _, y0 = sample_data(T0, 200_000, seed=4)
    _, y1 = sample_data(T1, 200_000, seed=4)
    # same inputs, so y1 - y0 is the noise alone; its variance estimate has relative sd sqrt(2/n) ≈ 0.3 %
    assert abs(np.var(y1 - y0) / 0.25 - 1) < 0.015


def test_operator_matches_explicit_design_and_is_adjoint():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 9))
    D = QuadraticDesign(X)
    A = D.explicit()
    M = rng.standard_normal((9, 9))
    S = M + M.T
    np.testing.assert_allclose(D.apply(S), A @ D.vectorise(S), rtol=1e-12, atol=1e-12)
    w, U = np.linalg.eigh(S)
    np.testing.assert_allclose(D.apply_factored(U, w), D.apply(S), rtol=1e-10, atol=1e-10)
    r = rng.standard_normal(40)
    np.testing.assert_allclose(D.vectorise(D.adjoint(r)), A.T @ r, rtol=1e-12, atol=1e-12)
    exact = np.linalg.eigvalsh(A.T @ A)[-1]
    assert exact <= D.lambda_max() <= exact * (1 + 2e-4)      # a safe, tight upper bound


@pytest.mark.parametrize("kwargs, match", [
    (dict(d=10, gamma=0.5), "gamma > 1/2"),
    (dict(d=10, gamma=0.3), "gamma > 1/2"),
    (dict(d=0, gamma=1.0), "d: expected a positive integer"),
    (dict(d=10, gamma=1.0, noise=-1.0), "noise"),
    (dict(d=10), "exactly one of gamma"),
    (dict(d=3, spectrum=[1.0, -1.0]), "spectrum: expected finite eigenvalues >= 0"),
    (dict(d=3, spectrum=[1.0, 1.0, 1.0, 1.0]), "spectrum: expected 1..3"),
])
def test_bad_target_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_target(**kwargs)


def test_user_spectrum_is_sorted_and_padded():
    T = make_target(4, spectrum=[0.5, 2.0], basis="identity")
    np.testing.assert_array_equal(T.eigenvalues, [2.0, 0.5, 0.0, 0.0])
    np.testing.assert_allclose(T.matrix, np.diag([2.0, 0.5, 0.0, 0.0]))


def test_the_bound_of_a_one_dimensional_design_is_its_one_eigenvalue():
    """d = 1 (allowed: scaling.grid.d >= 1): Lanczos cannot run on a 1 × 1 operator (a scipy TypeError, exit 1)."""
    X = np.random.default_rng(2).standard_normal((30, 1))
    D = QuadraticDesign(X)
    A = D.explicit()
    exact = float(np.linalg.eigvalsh(A.T @ A)[-1])
    assert exact <= D.lambda_max() <= exact * (1 + 2e-4)
