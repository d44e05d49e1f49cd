"""The switch-on model (solvers/switch_on.py): the compiled evaluation equals the NumPy reference to the last bit,
and the Jacobian is the derivative of the value."""

import numpy as np
import pytest

from solvers.switch_on import switch_on_log_model, switch_on_log_model_fast


def _random_case(rng, trial):
    K = int(rng.integers(1, 6))
    t = np.r_[0.0, np.sort(rng.uniform(0, 10 ** rng.uniform(1, 5), int(rng.integers(5, 300))))]
    p = rng.normal(0, rng.choice([1.0, 10.0, 100.0, 1000.0]), 2 + 3 * K)   # large ones are clipped
    p[3::3] = rng.uniform(0, t[-1], K)
    if trial % 25 == 0:
        p[rng.integers(0, p.size)] = np.nan
    return p, t, K


def test_compiled_model_equals_the_numpy_reference_bit_for_bit():
    rng = np.random.default_rng(0)
    for trial in range(400):
        p, t, K = _random_case(rng, trial)
        value, J = switch_on_log_model(p, t, K)
        fast_value, fast_J = switch_on_log_model_fast(p, t, K)
        np.testing.assert_array_equal(fast_value, value)
        np.testing.assert_array_equal(fast_J, J)
        only, none = switch_on_log_model_fast(p, t, K, jacobian=False, log1p_t=np.log1p(t))
        np.testing.assert_array_equal(only, value)
        assert none is None


@pytest.mark.parametrize("K", [1, 4])
def test_jacobian_is_the_derivative(K):
    rng = np.random.default_rng(K)
    t = np.linspace(0.0, 1000.0, 120)
    p = np.r_[np.log(0.01), 0.3, np.ravel([[np.log(1.0 / (k + 1)), 200.0 * (k + 1), np.log(0.05)] for k in range(K)])]
    p += 0.01 * rng.normal(size=p.size)
    _, J = switch_on_log_model_fast(p, t, K)
    h = 1e-6
    fd = np.array([(switch_on_log_model(p + h * e, t, K, False)[0] - switch_on_log_model(p - h * e, t, K, False)[0])
                   / (2 * h) for e in np.eye(p.size)])
    np.testing.assert_allclose(J, fd, rtol=1e-5, atol=1e-7)
