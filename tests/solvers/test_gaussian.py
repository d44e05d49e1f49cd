"""solvers.gaussian: the compiled erf activations against their NumPy (scipy) references, and their calculus."""

from __future__ import annotations

import numpy as np
import pytest

from solvers import gaussian


@pytest.mark.parametrize("name", ["erf_scaled", "gelu", "gelu_grad"])
def test_the_compiled_activation_is_its_reference_to_the_last_places(name):
    z = np.concatenate([np.random.default_rng(0).standard_normal(20000) * 3.0,
                        [0.0, -0.0, 1e-300, -1e-12, 8.0, -8.0, 40.0, -40.0, np.inf, -np.inf]])
    with np.errstate(invalid="ignore"):   # z = ±inf: 0 · inf in both, NaN where the reference gives NaN
        fast, ref = getattr(gaussian, name)(z), getattr(gaussian, f"{name}_reference")(z)
    assert np.array_equal(np.isfinite(fast), np.isfinite(ref))
    ok = np.isfinite(ref)
    assert np.abs(fast[ok] - ref[ok]).max() <= 4e-16 * max(1.0, np.abs(ref[ok]).max())
    # any shape, into a given array
    Z = z[:6000].reshape(3, 40, 50).copy()
    expected = getattr(gaussian, f"{name}_reference")(Z)
    getattr(gaussian, name)(Z, out=Z)
    assert np.allclose(Z, expected, rtol=0, atol=4e-16 * max(1.0, np.abs(expected).max()))


def test_gelu_grad_is_the_derivative_of_gelu():
    z = np.linspace(-6.0, 6.0, 2001)
    h = 1e-5
    numeric = (gaussian.gelu(z + h) - gaussian.gelu(z - h)) / (2 * h)
    assert np.abs(numeric - gaussian.gelu_grad(z)).max() < 1e-9
    assert gaussian.gelu_grad(0.0) == 0.5 and gaussian.erf_scaled(0.0) == 0.0
