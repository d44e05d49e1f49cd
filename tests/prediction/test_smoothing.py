"""The detector's signal operations (shockflow.prediction.smoothing) against SciPy's, which they replace."""

import numpy as np
import pytest
from scipy import ndimage, signal

from shockflow.prediction import smoothing


@pytest.mark.parametrize("window, polyorder, deriv, delta", [(5, 2, 0, 1.0), (11, 3, 1, 0.05), (21, 3, 0, 0.1),
                                                             (7, 2, 2, 0.3), (9, 4, 1, 1.0), (3, 2, 3, 1.0)])
def test_savgol_coefficients_and_filter_match_scipy(window, polyorder, deriv, delta):
    rng = np.random.default_rng(window * 10 + deriv)
    np.testing.assert_allclose(smoothing.savgol_coeffs(window, polyorder, deriv, delta),
                               signal.savgol_coeffs(window, polyorder, deriv=deriv, delta=delta), rtol=1e-9, atol=1e-9)
    y = np.cumsum(rng.normal(size=60)) + np.sin(np.arange(60) / 4)
    ours = smoothing.savgol_filter(y, window, polyorder, deriv, delta)
    theirs = signal.savgol_filter(y, window, polyorder, deriv=deriv, delta=delta, mode="interp")
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9 * np.abs(theirs).max())


def test_savgol_filter_is_exact_on_a_polynomial_of_its_order():
    x = np.linspace(-1, 2, 40)
    h = x[1] - x[0]
    y = 1 - 2 * x + 0.5 * x ** 3
    np.testing.assert_allclose(smoothing.savgol_filter(y, 9, 3), y, atol=1e-12)
    np.testing.assert_allclose(smoothing.savgol_filter(y, 9, 3, deriv=1, delta=h), -2 + 1.5 * x ** 2, atol=1e-10)


@pytest.mark.parametrize("size", [1, 3, 9, 15])
def test_running_median_matches_scipy_nearest(size):
    x = np.random.default_rng(size).normal(size=50)
    np.testing.assert_array_equal(smoothing.running_median(x, size), ndimage.median_filter(x, size=size, mode="nearest"))


@pytest.mark.parametrize("seed", range(6))
def test_peaks_and_prominences_match_scipy(seed):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=200), 1)        # rounded: flat tops and ties occur
    x = np.r_[0.0, x, 0.0]
    for floor in (0.0, 0.5, 1.5):
        peaks, prom = smoothing.find_peaks(x, floor)
        ref, props = signal.find_peaks(x, prominence=floor)
        np.testing.assert_array_equal(peaks, ref)
        np.testing.assert_allclose(prom, props["prominences"], rtol=0, atol=1e-12)


def test_bad_windows_are_refused():
    with pytest.raises(ValueError, match="odd"):
        smoothing.savgol_coeffs(4, 2)
    with pytest.raises(ValueError, match="polyorder"):
        smoothing.savgol_filter(np.zeros(10), 3, 3)
    with pytest.raises(ValueError, match="odd"):
        smoothing.running_median(np.zeros(10), 4)
