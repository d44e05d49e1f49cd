"""The exact test error 2‖Ŝ − S*‖_F²/d + Δ against Monte Carlo."""

import numpy as np
import pytest

from shockflow.scaling.target import make_target
from shockflow.scaling.exact_error import excess_error, monte_carlo_test_mse, test_mse as exact_test_mse


@pytest.mark.parametrize("d, noise", [(6, 0.0), (20, 0.3)])
def test_exact_error_matches_monte_carlo(d, noise):
    T = make_target(d, 1.2, noise=noise, seed=2)
    rng = np.random.default_rng(5)
    M = rng.standard_normal((d, d)) / np.sqrt(d)
    S_hat = T.matrix + 0.4 * (M + M.T)       # a symmetric, indefinite error
    exact = exact_test_mse(S_hat, T)
    mc, se = monte_carlo_test_mse(S_hat, T, n_samples=200_000, seed=9)
    # the Monte Carlo mean is within 4 standard errors (a false alarm has probability ~6e-5)
    assert abs(mc - exact) < 4 * se, (mc, exact, se)
    assert se < 0.01 * exact       # and the check is sharp: 1 % resolution


def test_excess_error_uses_only_the_symmetric_part():
    A = np.array([[0.0, 1.0], [-1.0, 0.0]])     # antisymmetric: Tr[A Z] = 0 for every x
    assert excess_error(A, np.zeros((2, 2))) == 0.0
    with pytest.raises(ValueError, match="S_star: expected shape"):
        excess_error(np.eye(2), np.eye(3))
