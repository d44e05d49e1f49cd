"""Each activation's derivative against central differences; ``erf`` against the normal distribution."""

import numpy as np
import pytest
from scipy.stats import norm

from shockflow.models.activations import available_activations, get_activation

Z = np.linspace(-3.1, 2.9, 41)   # avoids relu's kink at 0


@pytest.mark.parametrize("name", available_activations())
def test_the_derivative_matches_central_differences(name):
    a = get_activation(name)
    h = 1e-6
    numeric = (a.fn(Z + h) - a.fn(Z - h)) / (2 * h)
    assert np.max(np.abs(a.grad(Z) - numeric)) < 1e-8
    if name != "relu":
        assert a.grad(np.zeros(1))[0] == pytest.approx(a.grad_at_zero, rel=1e-12)


def test_erf_is_twice_the_normal_distribution_minus_one():
    a = get_activation("erf")
    assert np.allclose(a.fn(Z), 2 * norm.cdf(Z) - 1, atol=1e-14)
    assert a.grad_at_zero == pytest.approx(np.sqrt(2 / np.pi))
    assert np.allclose(a.fn(-Z), -a.fn(Z))   # odd


@pytest.mark.parametrize("name", available_activations())
def test_the_in_place_forward_and_backward_match_the_plain_ones(name):
    """``forward_owned`` (φ computed into z where the backward needs h only) and ``scale_by_grad`` (g *= φ' from
    h, one temporary) give φ(z) and g φ'(z) to rounding, and leave the caller's other arrays alone."""
    a = get_activation(name)
    z = Z.copy()
    h = a.forward_owned(z)
    assert np.allclose(h, a.fn(Z), rtol=0, atol=1e-15)
    if not a.needs_input and isinstance(a.fn, np.ufunc):
        assert h is z  # computed in place: no array of the layer's size
    g = np.random.default_rng(3).normal(size=Z.shape)
    out = a.scale_by_grad(g.copy(), Z if a.needs_input else None, h)
    assert np.allclose(out, g * a.grad(Z), rtol=1e-12, atol=1e-15)
