"""Reductions over a short last axis (shockflow.models.short_axis) are NumPy's, bit for bit, and so are the losses
and the softmax that use them."""

import numpy as np
import pytest

from shockflow.models.losses import get_loss
from shockflow.models.short_axis import max_last, sum_last


@pytest.mark.parametrize("T", range(1, 11))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sums_and_maxima_are_numpys(T, dtype):
    rng = np.random.default_rng(T)
    for shape in [(T,), (7, T), (3, 5, 2, T)]:
        A = (rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 9, shape)).astype(dtype)   # rounding matters
        np.testing.assert_array_equal(sum_last(A), np.sum(A, axis=-1))
        np.testing.assert_array_equal(max_last(A), np.max(A, axis=-1))
    A = rng.standard_normal((4, T))
    A[1, -1], A[2, 0] = np.nan, np.inf
    np.testing.assert_array_equal(sum_last(A), np.sum(A, axis=-1))
    np.testing.assert_array_equal(max_last(A), np.max(A, axis=-1))


@pytest.mark.parametrize("name", ["half_mse", "mse"])
@pytest.mark.parametrize("outputs", [1, 3, 5, 9])
def test_the_squared_losses_are_the_direct_formula(name, outputs):
    rng = np.random.default_rng(outputs)
    F = rng.standard_normal((6, 200, outputs)) * 3.0
    Y = rng.standard_normal((200, outputs))
    scale = 0.5 if name == "half_mse" else 1.0
    np.testing.assert_array_equal(get_loss(name).value(F, Y[None]), scale * np.sum((F - Y[None]) ** 2, axis=-1))
